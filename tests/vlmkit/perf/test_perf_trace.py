"""`--trace`: a Mooncake trace replayed on its timestamps. The schedule is checked against the trace exactly (each
request's due time is the trace's, compressed by the speed) and the send order against it; drift is reported, not
asserted against a clock (tools/bench_perf_trace.py measures it)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from vlmkit.perf.cli import main
from vlmkit.perf.options import PerfInputError
from vlmkit.perf.trace import read_trace

STAMPS = [0, 40, 40, 90, 200, 210, 400, 410, 415, 600]  # ms; two at the same moment


def _trace(path: Path, stamps: list[float] = STAMPS) -> Path:
    rows = [{"timestamp": t, "input_length": 6 + i, "output_length": 1 + i % 3, "hash_ids": [7, 100 + i]}
            for i, t in enumerate(stamps)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(mock, tmp_path: Path, *extra: str) -> tuple[int, dict, list[dict]]:
    out = tmp_path / "out"
    code = main(["perf", "--model", "m", "--api-base", mock.base_url, "--out", str(out), "--no-plots",
                 "--trace-block-tokens", "4", *extra])
    if code:
        return code, {}, []
    lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    return code, json.loads((out / "perf_summary.json").read_text()), lines


def test_the_schedule_is_the_traces(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "3")
    path = _trace(tmp_path / "trace.jsonl")
    code, summary, lines = _run(mock, tmp_path, "--trace", str(path), "--trace-speed", "4", "--warmup", "1")
    assert code == 0
    level = summary["levels"][0]
    measured = sorted((line for line in lines if not line["warmup"]), key=lambda line: line["n"])
    assert [line["n"] for line in measured] == list(range(1, 10))
    # due times: (timestamp - the first replayed one's) / speed, in ms, as the trace says
    assert [line["sched_ms"] for line in measured] == [round((t - 40) / 4, 3) for t in STAMPS[1:]]
    # sent in the trace's order, never before the due time
    starts = [line["start_ms"] for line in measured]
    assert starts == sorted(starts)
    assert all(line["start_ms"] >= line["sched_ms"] - 0.01 for line in measured)
    # each request as long as its line asks: max_tokens = output_length
    assert [line["max_tokens"] for line in measured] == [1 + i % 3 for i in range(1, 10)]
    trace = level["trace"]
    assert trace["speed"] == 4 and trace["requests"] == 9 and trace["span_s"] == pytest.approx(0.14)
    drift = trace["drift_ms"]
    assert drift["n"] == 9 and 0 <= drift["median"] <= drift["p99"] <= drift["max"]
    assert level["label"] == "trace x4" and level["request_rate"] == pytest.approx(9 / 0.14)
    with open(tmp_path / "out" / "perf_summary.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert float(row["trace_speed"]) == 4 and float(row["trace_drift_max_ms"]) == pytest.approx(drift["max"])


def test_shared_hash_ids_share_the_prefix(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "1")
    path = _trace(tmp_path / "trace.jsonl", STAMPS[:3])
    assert _run(mock, tmp_path, "--trace", str(path), "--trace-speed", "100")[0] == 0
    contents = [b["messages"][-1]["content"] for b in mock.bodies()]
    texts = sorted((c for c in contents if c != "Hi"), key=len)  # "Hi": the one-token probe
    words = [t.split() for t in texts]
    assert [len(w) for w in words] == [6, 7, 8]  # input_length words
    assert words[0][:4] == words[1][:4] == words[2][:4]  # block 7 (4 tokens) is shared
    assert len({tuple(w[4:6]) for w in words}) == 3  # blocks 100, 101, 102 are not


def test_several_speeds_are_levels(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "1")
    path = _trace(tmp_path / "trace.jsonl", STAMPS[:4])
    code, summary, _ = _run(mock, tmp_path, "--trace", str(path), "--trace-speed", "20", "40", "--num-requests", "3")
    assert code == 0
    assert [(lv["label"], lv["trace"]["requests"], lv["trace"]["span_s"]) for lv in summary["levels"]] == [
        ("trace x20", 3, pytest.approx(0.002)), ("trace x40", 3, pytest.approx(0.001))]


@pytest.mark.parametrize("row, needle", [
    ({"timestamp": -1, "input_length": 1, "output_length": 1}, "line 2: timestamp"),
    ({"timestamp": 1, "input_length": 0, "output_length": 1}, "line 2: input_length"),
    ({"timestamp": 1, "input_length": 2, "output_length": "3"}, "line 2: output_length"),
    ({"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": ["a"]}, "line 2: hash_ids"),
])
def test_bad_lines_are_named(tmp_path: Path, row: dict, needle: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"timestamp": 0, "input_length": 1, "output_length": 1}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(PerfInputError, match=needle):
        read_trace(path)


def test_out_of_order_lines_are_sorted(tmp_path: Path) -> None:
    path = _trace(tmp_path / "t.jsonl", [30, 10, 20])
    assert [t.timestamp_ms for t in read_trace(path)] == [10, 20, 30]


def test_trace_and_a_load_flag_is_one_line(mock_server, tmp_path: Path, capsys) -> None:
    mock = mock_server()
    path = _trace(tmp_path / "trace.jsonl")
    assert _run(mock, tmp_path, "--trace", str(path), "--concurrency", "2")[0] == 2
    assert "--trace sets the schedule itself" in capsys.readouterr().err
    assert _run(mock, tmp_path, "--data", "x.tsv", "--trace-speed", "2")[0] == 2
    assert "--trace-speed applies to --trace" in capsys.readouterr().err
