"""The figures: each one computed from the timestamps it should be (synthetic records with known times), and a
real run against the mock server (its own process, on 127.0.0.1) checked for what does not depend on how busy
the machine is: counts, token totals, which requests each figure covers, and that the level's figures are the
statistics of the per-request values in perf_requests.jsonl.

How close the figures come to the mock's injected delays is a speed question: `python tools/bench_perf.py --only
figures` measures and prints it (no test asserts a wall-clock bound).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.vlmkit.perf.conftest import ListDataset
from vlmkit.perf import PerfOptions, run_perf
from vlmkit.perf.client import Record
from vlmkit.perf.metrics import per_request, stats, summarize

MS = 1_000_000  # ns
TOKENS = 6


def _options(mock, tmp_path: Path, **kw) -> PerfOptions:
    return PerfOptions(model="m", api_base=mock.base_url, out_dir=tmp_path / "out", plots=False, quiet=True, **kw)


def _record(n: int, sched: float, start: float, chunks: list[float], end: float, *, output: int | None = None,
            prompt: int | None = None, error: str | None = None) -> Record:
    """A finished request with times in ms."""
    rec = Record(n, 0, 16, int(sched * MS))
    rec.start, rec.end = int(start * MS), int(end * MS)
    rec.chunks.extend(int(c * MS) for c in chunks)
    rec.output_tokens, rec.input_tokens, rec.error = output, prompt, error
    rec.status = 200 if error is None else 500
    rec.finished = error is None
    return rec


def _synthetic() -> list[Record]:
    return [
        # TTFT 50, ITL 25 25 25, E2EL 128, 4 tokens by usage: TPOT (128 - 50) / 3 = 26; queued 2
        _record(0, 0, 2, [52, 77, 102, 127], 130, output=4, prompt=10),
        # two chunks carrying 5 tokens (usage): TTFT 40, ITL 20, E2EL 80, TPOT (80 - 40) / 4 = 10; queued 1
        _record(1, 0, 1, [41, 61], 81, output=5, prompt=20),
        # no usage: 1 token counted as a chunk, so no TPOT; TTFT 30, E2EL 40; queued 30
        _record(2, 100, 130, [160], 170),
        # failed: in the counts, the duration and the concurrency; in no latency figure; queued 1
        _record(3, 130, 131, [], 135, error="http_500"),
        # cancelled by Ctrl-C: in no figure at all
        _record(4, 135, 140, [], 141, error="cancelled"),
    ]


def test_per_request_figures_come_from_their_timestamps() -> None:
    first, second, no_usage, failed, _ = _synthetic()
    fig = per_request(first)
    assert fig["ttft_ms"] == 50 and fig["e2el_ms"] == 128 and fig["itl_ms"] == [25, 25, 25]
    assert fig["tpot_ms"] == pytest.approx(26) and fig["queued_ms"] == 2
    assert (fig["output_tokens"], fig["output_tokens_source"]) == (4, "usage")
    assert per_request(second)["tpot_ms"] == pytest.approx(10)  # usage tokens, not chunks
    fig = per_request(no_usage)
    assert (fig["ttft_ms"], fig["e2el_ms"], fig["tpot_ms"], fig["itl_ms"]) == (30, 40, None, [])
    assert (fig["output_tokens"], fig["output_tokens_source"]) == (1, "chunks")
    fig = per_request(failed)
    assert (fig["ttft_ms"], fig["e2el_ms"], fig["tpot_ms"], fig["queued_ms"]) == (None, None, None, 1)


def test_level_figures_come_from_the_right_requests() -> None:
    level = summarize(_synthetic(), {"ttft": 45.0, "tpot": 20.0})
    assert level["requests"] == {"measured": 4, "successful": 3, "failed": 1, "errors_by_kind": {"http_500": 1}, "cancelled": 1}
    duration = (170 - 1) / 1000  # first start to last end of the measured, not-cancelled requests
    assert level["duration_s"] == pytest.approx(duration)
    # each figure's statistics worked by hand (linear interpolation: the p-th percentile of n sorted values sits at
    # position h = (n - 1) * p / 100, between the order statistics floor(h) and floor(h) + 1)
    # TTFT 30 40 50: p90 at h = 1.8 -> 40 + 0.8 * 10; p95 at 1.9; p99 at 1.98
    assert level["ttft_ms"] == pytest.approx(
        {"n": 3, "mean": 40, "median": 40, "p90": 48, "p95": 49, "p99": 49.8, "max": 50})
    # ITL 20 25 25 25, pooled over requests: mean 95 / 4; the median at h = 1.5 is already 25
    assert level["itl_ms"] == pytest.approx(
        {"n": 4, "mean": 23.75, "median": 25, "p90": 25, "p95": 25, "p99": 25, "max": 25})
    # TPOT 10 26: p90 at h = 0.9 -> 10 + 0.9 * 16
    assert level["tpot_ms"] == pytest.approx(
        {"n": 2, "mean": 18, "median": 18, "p90": 24.4, "p95": 25.2, "p99": 25.84, "max": 26})
    # E2EL 40 80 128: p90 at h = 1.8 -> 80 + 0.8 * 48
    assert level["e2el_ms"] == pytest.approx(
        {"n": 3, "mean": 248 / 3, "median": 80, "p90": 118.4, "p95": 123.2, "p99": 127.04, "max": 128})
    # queued 1 1 2 30, failures queued too: median at h = 1.5 -> 1.5; p90 at h = 2.7 -> 2 + 0.7 * 28
    assert level["queued_ms"] == pytest.approx(
        {"n": 4, "mean": 8.5, "median": 1.5, "p90": 21.6, "p95": 25.8, "p99": 29.16, "max": 30})
    assert level["request_throughput"] == pytest.approx(3 / duration)
    assert level["tokens"] == {"input_total": 30, "output_total": 10, "output_source": "mixed"}
    assert level["input_token_throughput"] == pytest.approx(30 / duration)
    assert level["output_token_throughput"] == pytest.approx(10 / duration)
    assert any("1 of 3 successful requests came without usage" in note for note in level["notes"])
    # Little's law over every measured request (the failed one too): 128 + 80 + 40 + 4 ms in flight
    assert level["achieved_concurrency"]["mean"] == pytest.approx(252 / 169)
    assert level["achieved_concurrency"]["max"] == 2  # one ends at 130 ms as the next starts: not 3
    # goodput: the first misses TTFT 45; the third has no TPOT and so meets the TPOT limit
    goodput = level["goodput"]
    assert goodput["slo_ms"] == {"ttft": 45.0, "tpot": 20.0} and goodput["good_requests"] == 2
    assert goodput["per_s"] == pytest.approx(2 / duration) and goodput["fraction"] == 2 / 4
    assert summarize(_synthetic(), {"e2el": 100.0})["goodput"]["good_requests"] == 2  # 128 ms is over
    assert summarize([], {})["requests"]["measured"] == 0 and summarize([], {})["request_throughput"] is None


def test_stats_interpolate_between_order_statistics() -> None:
    values = list(range(1, 101))
    figures = stats(values)
    assert figures["n"] == 100 and figures["mean"] == 50.5 and figures["median"] == 50.5 and figures["max"] == 100
    # the p-th percentile of 1..100 sits at position 99 * p / 100 from the smallest: 1 + 0.99 * p
    for name, p, by_hand in (("p90", 90, 90.1), ("p95", 95, 95.05), ("p99", 99, 99.01)):
        assert figures[name] == pytest.approx(by_hand)
        assert figures[name] == pytest.approx(float(np.percentile(values, p, method="linear")))
    # each percentile lies between its two neighbouring order statistics, in a sample with uneven gaps
    uneven = [3.0, 1.0, 100.0, 7.0, 50.0, 2.0, 9.0, 8.0, 40.0, 5.0, 6.0]
    ordered = sorted(uneven)
    figures = stats(uneven)
    for name, p in (("median", 50), ("p90", 90), ("p95", 95), ("p99", 99)):
        h = (len(ordered) - 1) * p / 100
        low, high = ordered[int(h)], ordered[min(int(h) + 1, len(ordered) - 1)]
        assert low <= figures[name] <= high, name
    assert figures["p90"] < figures["p95"] < figures["p99"] < figures["max"] == 100.0
    # one value: every statistic is that value
    assert stats([7.5]) == {"n": 1, "mean": 7.5, "median": 7.5, "p90": 7.5, "p95": 7.5, "p99": 7.5, "max": 7.5}
    assert stats([]) == {"n": 0, "mean": None, "median": None, "p90": None, "p95": None, "p99": None, "max": None}


def _lines(tmp_path: Path) -> list[dict]:
    return [json.loads(x) for x in (tmp_path / "out" / "perf_requests.jsonl").read_text().splitlines()]


def _reference_stats(values: list[float]) -> dict:
    """The documented statistics, written out a second time in plain Python (linear interpolation between order
    statistics), so that the level's figures are not checked against the code that computed them."""
    ordered = sorted(values)

    def percentile(p: float) -> float:
        h = (len(ordered) - 1) * p / 100
        i = int(h)
        upper = ordered[min(i + 1, len(ordered) - 1)]
        return ordered[i] + (h - i) * (upper - ordered[i])

    return {"n": len(ordered), "mean": sum(ordered) / len(ordered), "median": percentile(50), "p90": percentile(90),
            "p95": percentile(95), "p99": percentile(99), "max": ordered[-1]}


def _close(level_stats: dict, values: list[float]) -> None:
    """The level's statistics are those of the per-request values (which the file rounds to 1 us)."""
    assert level_stats == pytest.approx(_reference_stats(values), abs=1e-3)


def test_a_real_run_counts_and_derives_every_figure(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "50", "--itl-ms", "25", "--tokens", str(TOKENS))
    dataset = ListDataset([f"question {i}" for i in range(12)])
    result = run_perf(dataset, _options(mock, tmp_path, concurrency=[4]))
    level = result.levels[0]
    assert level["requests"]["successful"] == 12 and level["requests"]["failed"] == 0
    assert level["ttft_ms"]["n"] == 12 and level["e2el_ms"]["n"] == 12 and level["tpot_ms"]["n"] == 12
    assert level["itl_ms"]["n"] == 12 * (TOKENS - 1)  # one chunk per token: TOKENS - 1 gaps a request
    # token counts are the server's usage: completion = tokens sent, prompt = body bytes // 4 in the mock
    bodies = [len(json.dumps(b, ensure_ascii=False, separators=(",", ":")).encode()) for b in mock.bodies()[1:]]
    assert level["tokens"]["output_total"] == 12 * TOKENS and level["tokens"]["output_source"] == "usage"
    assert level["tokens"]["input_total"] == sum(n // 4 for n in bodies)
    assert level["output_token_throughput"] == level["tokens"]["output_total"] / level["duration_s"]
    assert level["request_throughput"] == 12 / level["duration_s"]
    assert level["achieved_concurrency"]["max"] == 4  # the 4 slots send their first requests in one loop turn
    assert level["status"] == "complete" and level["worker_failures"] == []
    assert level["load"]["asked"] == level["load"]["measured"] == {"concurrency": 4}
    lines = _lines(tmp_path)
    assert all(line["chunks"] == TOKENS and line["output_tokens"] == TOKENS for line in lines)
    assert all(line["ttft_ms"] <= line["e2el_ms"] and len(line["itl_ms"]) == TOKENS - 1 for line in lines)
    _close(level["ttft_ms"], [line["ttft_ms"] for line in lines])
    _close(level["e2el_ms"], [line["e2el_ms"] for line in lines])
    _close(level["tpot_ms"], [line["tpot_ms"] for line in lines])
    _close(level["itl_ms"], [g for line in lines for g in line["itl_ms"]])
    # the definitions are in the file, once each
    summary = json.loads((tmp_path / "out" / "perf_summary.json").read_text())
    assert {"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "goodput", "load"} <= set(summary["definitions"])


def test_errors_are_counted_by_kind_and_left_out_of_the_figures(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "20", "--itl-ms", "20", "--tokens", "5", "--faults")
    faults = ["[mock:http500]", "[mock:drop]", "[mock:malformed]", "[mock:hang]", "[mock:error]"]
    prompts = [f"good {i}" for i in range(6)] + faults
    result = run_perf(ListDataset(prompts), _options(mock, tmp_path, concurrency=[6], timeout=1.5))
    level = result.levels[0]
    assert level["requests"]["errors_by_kind"] == {
        "dropped": 1, "http_500": 1, "malformed_sse": 1, "stream_error": 1, "timeout": 1,
    }
    assert level["requests"]["successful"] == 6 and level["requests"]["measured"] == 11
    # latency figures over the 6 successes only: the hung request's 1.5 s is nowhere
    assert level["ttft_ms"]["n"] == 6 and level["e2el_ms"]["n"] == 6 and level["tpot_ms"]["n"] == 6
    lines = _lines(tmp_path)
    ok = [line for line in lines if line["ok"]]
    assert len(ok) == 6
    _close(level["e2el_ms"], [line["e2el_ms"] for line in ok])
    _close(level["ttft_ms"], [line["ttft_ms"] for line in ok])
    by_error = {line["error"]: line for line in lines}
    assert by_error["http_500"]["status"] == 500 and "injected failure" in by_error["http_500"]["message"]
    for line in lines:
        if not line["ok"]:
            assert line["ttft_ms"] is None and line["e2el_ms"] is None and line["tpot_ms"] is None


def test_a_server_without_usage_is_noted_and_chunks_are_counted(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "4", "--no-usage")
    result = run_perf(ListDataset(["a", "b", "c"]), _options(mock, tmp_path, concurrency=[2]))
    level = result.levels[0]
    assert level["input_token_throughput"] is None
    assert level["tokens"]["output_total"] == 12 and level["tokens"]["output_source"] == "chunks"
    assert any("no usage" in note for note in level["notes"])
    assert result.summary["probe"]["usage"] is False


def test_goodput_counts_requests_within_every_slo(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "20", "--itl-ms", "10", "--tokens", "3", "--faults")
    prompts = ["fast"] * 4 + ["[mock:http500]"] * 2
    # limits above the request timeout: every successful request meets them by construction, however slow
    timeout = 30.0
    slo = {"ttft": timeout * 1000 + 1, "tpot": timeout * 1000 + 1, "e2el": timeout * 1000 + 1}
    level = run_perf(ListDataset(prompts), _options(mock, tmp_path, concurrency=[2], slo=slo, timeout=timeout)).levels[0]
    assert level["goodput"]["good_requests"] == 4
    assert level["goodput"]["fraction"] == 4 / 6  # of every measured request, failures included
    # no first token can come sooner than the server's 20 ms: a 1 ms TTFT limit is met by none
    strict = run_perf(ListDataset(prompts), _options(mock, tmp_path, concurrency=[2], slo={"ttft": 1.0})).levels[0]
    assert strict["goodput"]["good_requests"] == 0
