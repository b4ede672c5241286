"""When requests go out: the open-loop schedule itself, closed-loop concurrency, warm-up, duration, workers."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from tests.vlmkit.perf.conftest import ListDataset
from vlmkit.perf import PerfOptions, run_perf
from vlmkit.perf.metrics import stats
from vlmkit.perf.schedule import arrival_offsets


def _options(mock, tmp_path: Path, **kw) -> PerfOptions:
    return PerfOptions(model="m", api_base=mock.base_url, out_dir=tmp_path / "out", plots=False, quiet=True, **kw)


def _lines(tmp_path: Path) -> list[dict]:
    return [json.loads(x) for x in (tmp_path / "out" / "perf_requests.jsonl").read_text().splitlines()]


def test_poisson_schedule_is_seeded_and_has_the_asked_rate() -> None:
    a = arrival_offsets(40.0, 1.0, seed=7, count=20_000)
    assert a == arrival_offsets(40.0, 1.0, seed=7, count=20_000)
    assert a != arrival_offsets(40.0, 1.0, seed=8, count=20_000)
    assert a[0] == 0 and all(x <= y for x, y in zip(a, a[1:]))
    gaps = [(y - x) / 1e9 for x, y in zip(a, a[1:])]
    assert abs(statistics.fmean(gaps) - 1 / 40) < 0.03 / 40  # mean rate within 3 %
    cv = statistics.pstdev(gaps) / statistics.fmean(gaps)
    assert abs(cv - 1.0) < 0.05  # exponential gaps: coefficient of variation 1


def test_burstiness_is_the_gamma_shape() -> None:
    bursty = arrival_offsets(40.0, 0.25, seed=1, count=20_000)
    gaps = [(y - x) / 1e9 for x, y in zip(bursty, bursty[1:])]
    assert abs(statistics.fmean(gaps) - 1 / 40) < 0.05 / 40  # same mean rate
    cv = statistics.pstdev(gaps) / statistics.fmean(gaps)
    assert abs(cv - 2.0) < 0.15  # gamma shape k: CV = 1/sqrt(k)


def test_schedule_stops_at_the_duration() -> None:
    a = arrival_offsets(100.0, 1.0, seed=0, duration=2.0)
    assert a and a[-1] < 2e9 and 150 < len(a) < 250


def test_closed_loop_never_exceeds_the_level_and_warmup_is_left_out(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "20", "--itl-ms", "10", "--tokens", "4")
    result = run_perf(ListDataset(["q"] * 5), _options(mock, tmp_path, concurrency=[1, 3], num_requests=9, warmup=2))
    assert [lv["label"] for lv in result.levels] == ["c=1", "c=3"]
    for level, cap in zip(result.levels, (1, 3)):
        assert level["requests"]["measured"] == 9 and level["warmup_requests"] == 2
        assert level["achieved_concurrency"]["max"] == cap
        assert level["achieved_concurrency"]["mean"] <= cap
    lines = _lines(tmp_path)
    assert sum(line["warmup"] for line in lines) == 4 and len(lines) == 22
    assert all(line["n"] < 2 for line in lines if line["warmup"])
    assert len(mock.bodies()) == 1 + 2 * 11  # the probe, then warm-up + measured per level


def test_duration_bounds_a_closed_loop_level(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "40", "--itl-ms", "20", "--tokens", "4")  # about 100 ms a request
    result = run_perf(ListDataset(["q"] * 3), _options(mock, tmp_path, concurrency=[2], duration=0.6))
    level = result.levels[0]
    lines = [line for line in _lines(tmp_path) if not line["warmup"]]
    # a slot checks the deadline after its previous request ended and before it sends the next; a request's
    # sched_ms is that moment (its slot became free), so nothing is ever due at or after the deadline. (The level
    # has unbounded request numbers: that it ended at all is the duration's doing.)
    assert lines and all(line["sched_ms"] < 600 for line in lines)
    assert sorted(line["n"] for line in lines) == list(range(len(lines)))  # one numbering over the slots
    # the requests in flight at the deadline finish (none cut off) and every started one is in the file
    assert level["requests"]["successful"] == level["requests"]["measured"] == len(lines)
    assert level["requests"]["cancelled"] == 0
    # (how far past the deadline the last requests end is a timing figure: tools/bench_perf.py --only figures)


def test_open_loop_sends_on_the_schedule_under_the_cap(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "30", "--itl-ms", "30", "--tokens", "4")  # about 120 ms a request
    options = _options(mock, tmp_path, request_rate=[50.0], num_requests=20, max_concurrency=2, seed=3)
    level = run_perf(ListDataset(["q"] * 4), options).levels[0]
    assert level["mode"] == "open" and level["requests"]["measured"] == 20
    assert level["achieved_concurrency"]["max"] <= 2  # the cap, whatever the timing
    expected = arrival_offsets(50.0, 1.0, seed=3, count=20)
    lines = sorted(_lines(tmp_path), key=lambda line: line["n"])
    assert [round(line["sched_ms"], 3) for line in lines] == [round(x / 1e6, 3) for x in expected]
    # time queued in the client is from the arrival to the send, per request; the level's figure is over those
    # (how long requests queue at 50/s offered against 2 slots is measured by tools/bench_perf.py --only figures)
    for line in lines:
        assert line["queued_ms"] == pytest.approx(line["start_ms"] - line["sched_ms"], abs=2e-3)
    assert level["queued_ms"] == pytest.approx(stats([line["queued_ms"] for line in lines]), abs=1e-3)


def test_workers_share_the_load_and_their_records_merge(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "20", "--itl-ms", "10", "--tokens", "4")
    result = run_perf(ListDataset(["q"] * 16), _options(mock, tmp_path, concurrency=[4], workers=2, warmup=2))
    level = result.levels[0]
    assert level["requests"]["measured"] == 16 and level["requests"]["successful"] == 16
    assert level["achieved_concurrency"]["max"] <= 4
    assert {p["worker"] for p in level["client"]["processes"]} == {0, 1}
    lines = [line for line in _lines(tmp_path) if not line["warmup"]]
    assert sorted(line["n"] for line in lines) == list(range(2, 18))
    assert {line["worker"] for line in lines} == {0, 1}


def test_split_plan_covers_every_request_once() -> None:
    from vlmkit.perf.schedule import LevelPlan
    from vlmkit.perf.workers import split_plan

    arrivals = arrival_offsets(10.0, 1.0, seed=0, count=30)
    open_plan = LevelPlan("rate", True, slots=2, warmup_ids=[0, 1, 2], ids=list(range(3, 33)), arrivals=arrivals)
    shares = split_plan(open_plan, 3)  # a cap of 2 cannot feed 3 processes: 2 run
    assert len(shares) == 2 and sum(s.slots for s in shares) == 2
    assert sorted(i for s in shares for i in s.ids) == list(range(3, 33))
    assert sorted(a for s in shares for a in s.arrivals) == arrivals
    assert sorted(i for s in shares for i in s.warmup_ids) == [0, 1, 2]
    uncapped = split_plan(LevelPlan("rate", True, slots=0, warmup_ids=[], ids=list(range(30)), arrivals=arrivals), 3)
    assert len(uncapped) == 3 and all(s.slots == 0 for s in uncapped)

    closed = split_plan(LevelPlan("c", False, slots=5, warmup_ids=[], ids=list(range(20))), 2)
    assert [s.slots for s in closed] == [3, 2]
    assert sorted(i for s in closed for i in s.ids) == list(range(20))
    endless = split_plan(LevelPlan("c", False, slots=4, warmup_ids=[], ids=None, id_start=2), 2)
    assert [(s.id_start, s.id_step) for s in endless] == [(2, 2), (3, 2)]
