"""perf_summary.csv against formula injection (issue 22): a level label, mode or error kind a spreadsheet would run
as a formula is quoted text (vlmkit.outputs.schema.spreadsheet_text); numbers, negative ones too, stay numbers."""

from __future__ import annotations

import csv
import io

import pytest

from vlmkit.perf.client import Record
from vlmkit.perf.metrics import summarize
from vlmkit.perf.report import summary_csv

MS = 1_000_000


def _level(label: str, **extra) -> dict:
    """Two requests of 40 ms each (first chunk at 10 ms), one failed with the given error kind."""
    records = []
    for n, error in enumerate((None, None, "http_503")):
        rec = Record(n, n, 32, 1_000 * MS)
        rec.start, rec.end = 1_000 * MS + MS, 1_000 * MS + 41 * MS
        if error is None:
            rec.chunks.append(1_000 * MS + 11 * MS)
            rec.output_tokens, rec.input_tokens = 1, 5
        rec.error, rec.status = error, 200 if error is None else 503
        records.append(rec)
    level = summarize(records, {})
    level.update({"label": label, "mode": "closed", "concurrency": 2, "client": {"processes": []}, "warnings": [],
                  "interrupted": False})
    level.update(extra)
    return level


def test_summary_csv_quotes_formula_like_text_and_keeps_numbers() -> None:
    evil = _level('=HYPERLINK("http://evil.example","x")', mode="@SUM(1+1)", concurrency=-2)
    evil["requests"]["errors_by_kind"] = {"-2+3": 1}
    rows = list(csv.DictReader(io.StringIO(summary_csv([evil, _level("c=1")]))))
    assert rows[0]["level"] == "'=HYPERLINK(\"http://evil.example\",\"x\")" and rows[0]["mode"] == "'@SUM(1+1)"
    assert rows[0]["errors"] == "'-2+3=1" and rows[0]["concurrency"] == "-2"  # a negative number stays a number
    assert float(rows[0]["ttft_ms_mean"]) == pytest.approx(10)
    assert (rows[1]["level"], rows[1]["mode"], rows[1]["errors"]) == ("c=1", "closed", "http_503=1")
