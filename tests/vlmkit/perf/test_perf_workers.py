"""`--workers N` when a worker process fails: the failure is reported (console, summary, exit code), the level's
figures are marked with the load they were measured at, and the other workers' requests are kept.

The real run kills one worker process with SIGKILL (as the out-of-memory killer would) while both are in their
measured phase; the moment is read from the mock server's record of the bodies it received, never from a clock.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vlmkit.perf.cli import main
from vlmkit.perf.collect import part_path
from vlmkit.perf.requests import PreparedRequests
from vlmkit.perf.schedule import LevelPlan, Target
from vlmkit.perf.workers import (
    SharedFlag, WorkerFailure, WorkerRuns, exit_reason, failure_line, measured_load, run_level_in_workers,
)


def _forked_children() -> list[int]:
    """Processes forked from this one (the perf workers): children with this process's own command line."""
    me = os.getpid()
    own = Path(f"/proc/{me}/cmdline").read_bytes()
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == me and (stat.parent / "cmdline").read_bytes() == own:
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return sorted(found)


def _kill_workers_when(
    ready: Callable[[], bool], how_many: int, killed: list[int], seen: list[list[int]]
) -> threading.Thread:
    """Once `ready()`, SIGKILL `how_many` of the 2 worker processes."""

    def watch() -> None:
        deadline = time.monotonic() + 120  # a guard for a broken run, not a measurement
        while time.monotonic() < deadline:
            if ready():
                workers = _forked_children()
                seen.append(workers)
                if len(workers) == 2:
                    for pid in workers[:how_many]:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _run_and_kill(mock, tmp_path: Path, how_many: int, *more_levels: str) -> tuple[int, Path, list[int], list[list[int]]]:
    """A 2-worker closed loop at concurrency 4 (12 requests of 0.8 s or more: each worker has 6 on 2 slots, 3
    rounds), with `how_many` workers killed once the mock has the probe and the first request of each of the 4
    slots: both workers are then past the start barrier, and neither can have finished."""
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"q {i}", "answer": "a"}) + "\n" for i in range(12)))
    out = tmp_path / "out"
    killed: list[int] = []
    seen: list[list[int]] = []
    watcher = _kill_workers_when(lambda: len(mock.bodies()) >= 1 + 4, how_many, killed, seen)
    code = main(["perf", "--model", "m", "--api-base", mock.base_url, "--data", str(data), "--out", str(out),
                 "--concurrency", "4", *more_levels, "--workers", "2", "--no-plots"])
    watcher.join(timeout=5)
    return code, out, killed, seen


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the worker processes through /proc")
def test_a_killed_worker_is_reported_and_the_level_marked(mock_server, tmp_path: Path, capfd) -> None:
    mock = mock_server("--ttft-ms", "100", "--itl-ms", "100", "--tokens", "8")
    code, out, killed, seen = _run_and_kill(mock, tmp_path, 1)
    captured = capfd.readouterr()
    assert len(killed) == 1, f"no worker process was found to kill (forked children seen: {seen[:5]})"
    assert code == 3, captured.err

    summary = json.loads((out / "perf_summary.json").read_text())
    assert summary["status"] == "workers_failed" and summary["interrupted"] is False
    level = summary["levels"][0]
    assert level["status"] == "partial_load"
    [failure] = level["worker_failures"]
    assert "killed by SIGKILL" in failure["reason"]
    assert failure["slots"] == 2 and failure["requests"] == 6
    assert level["load"] == {
        "asked": {"concurrency": 4}, "measured": {"concurrency": 2},
        "processes": {"asked": 2, "measured": 1}, "complete": False,
    }
    survivor = 1 - failure["worker"]
    # the survivor's whole share is measured; the dead worker's requests are in no figure
    assert level["requests"]["measured"] == level["requests"]["successful"] == 6
    assert [p["worker"] for p in level["client"]["processes"]] == [survivor]
    lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    assert {line["worker"] for line in lines} == {survivor}
    assert sorted(line["n"] for line in lines) == list(range(12))[survivor::2]

    # one console line for the failed worker, saying why and at which load the figures were measured
    warnings = [line for line in captured.err.splitlines() if line.startswith("WARNING c=4: worker")]
    assert len(warnings) == 1, captured.err
    assert f"worker {failure['worker']} of 2 failed" in warnings[0] and "SIGKILL" in warnings[0]
    assert "measured at concurrency 2, not the concurrency 4 asked" in warnings[0]
    assert any(w.startswith("c=4: worker") for w in summary["warnings"])
    assert "c=4 (at c=2: 1 of 2 workers failed)" in captured.out
    assert "1 worker process(es) failed at c=4" in captured.err and "Traceback" not in captured.err
    with open(out / "perf_summary.csv", newline="") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["status"] == "partial_load" and row["workers_failed"] == "1" and row["measured_concurrency"] == "2"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the worker processes through /proc")
def test_a_level_whose_workers_all_fail_has_no_figures_and_the_sweep_goes_on(mock_server, tmp_path: Path, capfd) -> None:
    mock = mock_server("--ttft-ms", "100", "--itl-ms", "100", "--tokens", "8")
    code, out, killed, seen = _run_and_kill(mock, tmp_path, 2, "8")
    captured = capfd.readouterr()
    assert len(killed) == 2, f"no worker processes were found to kill (forked children seen: {seen[:5]})"
    assert code == 3 and "Traceback" not in captured.err, captured.err
    summary = json.loads((out / "perf_summary.json").read_text())
    level = summary["levels"][0]
    assert summary["status"] == "workers_failed" and level["status"] == "failed"
    assert [lv["label"] for lv in summary["levels"]] == ["c=4", "c=8"]
    after = summary["levels"][1]  # the next level ran in fresh processes, at the load asked
    assert after["status"] == "complete" and after["requests"]["successful"] == 12 and after["worker_failures"] == []
    assert sorted(f["worker"] for f in level["worker_failures"]) == [0, 1]
    assert level["load"]["processes"] == {"asked": 2, "measured": 0} and level["load"]["measured"] == {"concurrency": 0}
    assert level["requests"]["measured"] == 0 and level["request_throughput"] is None
    assert all(json.loads(x)["level"] == "c=8" for x in (out / "perf_requests.jsonl").read_text().splitlines())
    warnings = [line for line in captured.err.splitlines() if line.startswith("WARNING c=4: worker")]
    assert len(warnings) == 2 and all("no process of c=4 reported: the level has no figures" in w for w in warnings)
    assert "c=4 (failed: 2 of 2 workers failed)" in captured.out


def test_a_worker_that_raises_is_reported_with_its_exception(mock_server, tmp_path: Path) -> None:
    """A worker whose share raises (here: its rows have no max_tokens entry, as a bug would leave them) reports
    the exception; the barrier is broken for it, so the other worker measures its share alone."""
    mock = mock_server("--tokens", "2")
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
                       "stream": True, "stream_options": {"include_usage": True}}).encode()
    prepared = PreparedRequests(bodies=[body, body], max_tokens=[2], index=[0, 1], build_s=0.0)
    plan = LevelPlan("c=2", False, slots=2, warmup_ids=[0, 1], ids=list(range(2, 10)), id_start=2)
    target = Target(mock.base_url + "/chat/completions", {"Content-Type": "application/json"}, 30.0)
    lines_path = tmp_path / "lines.jsonl"
    outcome = run_level_in_workers(plan, prepared, target, 2, SharedFlag(), lines_path=lines_path)
    # worker 1 takes the odd request numbers, all on row 1, which has no max_tokens entry
    assert [run.worker for run in outcome.runs] == [0]
    assert outcome.runs[0].tally.measured == outcome.runs[0].tally.ok == 4
    lines = [json.loads(x) for x in part_path(lines_path, 0).read_text().splitlines()]
    assert sorted(line["n"] for line in lines if not line["warmup"]) == [2, 4, 6, 8]
    assert all(line["ok"] for line in lines)
    [failure] = outcome.failures
    assert failure.worker == 1 and failure.reason.startswith("IndexError")
    assert (failure.slots, failure.requests) == (1, 4)
    load = measured_load(plan, 2, outcome)
    assert load["measured"] == {"concurrency": 1} and load["processes"] == {"asked": 2, "measured": 1}


def test_measured_load_in_open_loop_is_the_share_of_the_schedule_that_ran() -> None:
    shares = [LevelPlan("rate", True, slots=s, warmup_ids=[], ids=list(range(n)), arrivals=[0] * n, worker=w)
              for w, (s, n) in enumerate([(2, 7), (2, 7), (1, 6)])]
    plan = LevelPlan("rate=10/s", True, slots=5, warmup_ids=[], ids=list(range(20)), arrivals=[0] * 20)
    outcome = WorkerRuns([], [WorkerFailure(1, "the process was killed by SIGKILL before it reported", 2, 7)], shares)
    load = measured_load(plan, 10.0, outcome)
    assert load["asked"] == {"request_rate": 10.0, "max_concurrency": 5}
    assert load["measured"] == {"request_rate": 10.0 * 13 / 20, "max_concurrency": 3}
    line = failure_line("rate=10/s", outcome.failures[0], load)
    assert line.startswith("worker 1 of 3 failed (the process was killed by SIGKILL before it reported): its 7 requests")
    assert "measured at request rate 6.5/s (at most 3 in flight), not the request rate 10/s (at most 5 in flight)" in line
    everyone = WorkerRuns([], [WorkerFailure(w, "x", 1, 1) for w in range(3)], shares)
    assert "the level has no figures" in failure_line("rate=10/s", everyone.failures[0], measured_load(plan, 10.0, everyone))


def test_exit_reasons() -> None:
    assert exit_reason(-signal.SIGKILL) == "the process was killed by SIGKILL before it reported"
    assert exit_reason(1) == "the process exited with status 1 before it reported"
    assert exit_reason(None) == "the process did not end"
