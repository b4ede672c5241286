"""vlmkit.perf.report called directly: the CSV row of a level, the request lines of perf_requests.jsonl, and the
console table's marks, from hand-made records and level blocks whose figures are worked out by hand."""

from __future__ import annotations

import csv
import io
import json

import pytest

from vlmkit.perf.client import Record
from vlmkit.perf.metrics import summarize
from vlmkit.perf.collect import RequestLines
from vlmkit.perf.report import console_table, csv_row, request_line, summary_csv

MS = 1_000_000
T0 = 1_000 * MS  # the level's t0 in ns


def _rec(n: int, row: int, sched: float, start: float, chunks: list[float], end: float, *,
         output: int | None = None, prompt: int | None = None, error: str | None = None) -> Record:
    """Times in ms after T0."""
    rec = Record(n, row, 32, T0 + int(sched * MS))
    rec.start, rec.end = T0 + int(start * MS), T0 + int(end * MS)
    rec.chunks.extend(T0 + int(c * MS) for c in chunks)
    rec.output_tokens, rec.input_tokens, rec.error = output, prompt, error
    rec.status = 200 if error is None else 503
    return rec


def _level(label: str = "c=2", **extra) -> dict:
    records = [
        _rec(0, 0, 0, 1, [11, 21, 31], 41, output=3, prompt=7),  # TTFT 10, ITL 10 10, E2EL 40, TPOT 15
        _rec(1, 1, 0, 2, [22], 42, output=1, prompt=5),  # TTFT 20, E2EL 40
        _rec(2, 2, 1, 3, [], 5, error="http_503"),
    ]
    level = summarize(records, {"e2el": 100.0})
    level.update({"label": label, "mode": "closed", "concurrency": 2, "client": {"processes": [
        {"cpu_fraction": 0.25}, {"cpu_fraction": 0.5}]}, "warnings": ["w"], "interrupted": False})
    level.update(extra)
    return level


def test_a_levels_csv_row_by_hand() -> None:
    row = csv_row(_level())
    # first start 1 ms to last end 42 ms: 41 ms; 2 successes
    assert row["level"] == "c=2" and row["mode"] == "closed" and row["concurrency"] == 2
    assert row["request_rate"] is None
    assert (row["measured"], row["successful"], row["failed"], row["errors"]) == (3, 2, 1, "http_503=1")
    assert row["duration_s"] == pytest.approx(0.041)
    assert row["request_throughput"] == pytest.approx(2 / 0.041)
    assert row["input_token_throughput"] == pytest.approx(12 / 0.041)
    assert row["output_token_throughput"] == pytest.approx(4 / 0.041)
    assert (row["ttft_ms_mean"], row["ttft_ms_max"], row["ttft_ms_median"]) == pytest.approx((15, 20, 15))
    assert (row["tpot_ms_mean"], row["itl_ms_max"], row["e2el_ms_p99"]) == pytest.approx((15, 10, 40))
    # queued 1, 2, 2 ms: the p99 lies between the two 2s
    assert row["queued_ms_mean"] == pytest.approx((1 + 2 + 2) / 3) and row["queued_ms_p99"] == 2
    # in flight 40 + 40 + 2 ms over 41 ms; at most 3 at once (the third starts at 3 ms, before any end)
    assert row["achieved_concurrency_mean"] == pytest.approx(82 / 41) and row["achieved_concurrency_max"] == 3
    assert row["goodput_per_s"] == pytest.approx(2 / 0.041) and row["goodput_fraction"] == pytest.approx(2 / 3)
    assert (row["client_cpu_max"], row["warnings"], row["interrupted"]) == (0.5, 1, False)
    assert (row["status"], row["workers_failed"], row["measured_concurrency"]) == ("complete", 0, None)
    assert len([k for k in row if k.startswith(("ttft_ms_", "tpot_ms_", "itl_ms_", "e2el_ms_"))]) == 4 * 6


def test_summary_csv_has_one_row_per_level_and_empty_cells_for_none() -> None:
    text = summary_csv([_level("c=1"), _level("c=2", client={"processes": []}, goodput=None)])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["level"] for r in rows] == ["c=1", "c=2"]
    assert rows[0]["request_rate"] == "" and rows[1]["client_cpu_max"] == "" and rows[1]["goodput_per_s"] == ""
    assert rows[0]["client_cpu_max"] == "0.5" and rows[0]["errors"] == "http_503=1"
    assert summary_csv([]) == ""


def test_request_lines_count_from_t0_and_round_to_a_microsecond() -> None:
    rec = _rec(4, 1, 0.5, 2.0004, [12.0004, 14.5], 20.25, output=2, prompt=9)
    line = request_line("c=2", rec, "row-b", T0)
    assert line == {
        "level": "c=2", "n": 4, "row": 1, "index": "row-b", "warmup": False, "worker": 0, "ok": True,
        "error": None, "message": None, "status": 200,
        "sched_ms": 0.5, "start_ms": 2.0, "queued_ms": 1.5,  # 2.0004 - 0.5 = 1.5004 -> 1.5
        "ttft_ms": 10.0, "tpot_ms": 8.25, "e2el_ms": 18.25,  # TPOT (18.2496 - 10) / 1, rounded
        "itl_ms": [2.5], "chunks": 2, "input_tokens": 9, "output_tokens": 2, "output_tokens_source": "usage",
        "max_tokens": 32,
    }
    unsent = Record(7, 0, None, T0 + 3 * MS)
    line = request_line("c=2", unsent, 0, T0)
    assert (line["start_ms"], line["queued_ms"], line["e2el_ms"], line["status"], line["ok"]) == (
        None, None, None, None, False)
    handle = io.StringIO()
    sink = RequestLines(handle, "r=5", ["a", "b"], ["sk-secret"], servers=2)
    warm = Record(1, 0, 8, T0 - 5 * MS, warmup=True)
    sink.write(rec)  # before t0 is known: held, then written after the warm-up line
    sink.write(warm)
    assert handle.getvalue() == ""
    sink.begin(T0)
    unsent.message, unsent.server = "refused with key sk-secret", 1
    sink.write(unsent)
    sink.close()
    lines = [json.loads(x) for x in handle.getvalue().splitlines()]
    assert [(x["level"], x["n"], x["index"], x["server"]) for x in lines] == [
        ("r=5", 1, "a", 0), ("r=5", 4, "b", 0), ("r=5", 7, "a", 1)]
    assert lines[0]["sched_ms"] == -5.0 and "sk-secret" not in handle.getvalue()


def test_console_table_marks_and_columns() -> None:
    text = console_table([_level("c=2")])
    header = text.splitlines()[0].split()
    assert header[:3] == ["level", "ok/sent", "req/s"] and header[-1] == "goodput/s"
    assert "2/3" in text.splitlines()[2] and text.endswith("definitions in perf_summary.json)")
    cut = console_table([_level("c=4", interrupted=True, goodput=None)])
    assert "c=4 (cut short)" in cut and "goodput/s" not in cut  # no level has goodput: no column
    failed = _level("c=4", worker_failures=[{"worker": 1}], load={
        "processes": {"asked": 2, "measured": 1}, "measured": {"concurrency": 2}})
    assert "c=4 (at c=2: 1 of 2 workers failed)" in console_table([failed])
    rate = _level("r=8", worker_failures=[{"worker": 0}], load={
        "processes": {"asked": 2, "measured": 1}, "measured": {"request_rate": 4.0}})
    assert "r=8 (at rate=4/s: 1 of 2 workers failed)" in console_table([rate])
    none = _level("r=8", worker_failures=[{"worker": 0}, {"worker": 1}], load={
        "processes": {"asked": 2, "measured": 0}, "measured": {}})
    assert "r=8 (failed: 2 of 2 workers failed)" in console_table([none])
