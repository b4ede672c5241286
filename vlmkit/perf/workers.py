"""`--workers N`: one level spread over N processes, each with its own event loop and connection pool.

The level's load is split: closed loop, the concurrency (process w gets level // N, plus one for the first
level % N) and the request numbers (w, w + N, w + 2N, ...); open loop, every N-th arrival of the one seeded
schedule, with one shared start time (CLOCK_MONOTONIC is one clock for all processes). All processes run their
warm-up, meet at a barrier, and start the measured phase together. Ctrl-C in the parent (or in any worker)
sets a shared stop flag; each worker then returns what it measured.

A worker that fails (an exception, or the process killed, e.g. by the out-of-memory killer) is a
`WorkerFailure`: which worker, why, and the share of the load it carried. Its requests are lost with it; the
others go on (a failure before the barrier breaks it, so they do not wait for the one that will never come) and
their figures are reported at the load they carried (`measured_load`), never at the load that was asked.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import signal
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from time import monotonic_ns
from typing import Any

from vlmkit.perf.collect import Collector, RequestLines, part_path
from vlmkit.perf.requests import PreparedRequests
from vlmkit.perf.schedule import LevelPlan, LevelRun, Target, run_level

START_MARGIN_NS = 50_000_000  # the measured phase starts this long after the last process reached the barrier
RESULT_TIMEOUT_S = 30.0
DRAIN_S = 0.05  # how long to look for a result a process sent just before it exited


def context() -> Any:
    """The multiprocessing context of worker runs: fork where there is one (no re-import), else spawn."""
    return mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context("spawn")


class SharedFlag:
    """The stop flag of a `--workers` run: one byte of shared memory, read and set without a lock, so that a
    process killed at any moment can never leave a lock held that the others then wait on forever (a
    multiprocessing.Event takes a lock on every is_set(), which each process's ticker calls every 10 ms)."""

    def __init__(self, ctx: Any = None) -> None:
        self._value = (ctx or context()).RawValue("b", 0)

    def is_set(self) -> bool:
        return bool(self._value.value)

    def set(self) -> None:
        self._value.value = 1


@dataclass
class WorkerFailure:
    """A worker process that returned no measurements, and the share of the level it was to carry."""

    worker: int
    reason: str
    slots: int  # closed loop: its concurrency; open loop: its share of the cap (0 = uncapped)
    requests: int | None  # its measured requests (arrivals); None when the level runs for a duration

    def to_dict(self) -> dict[str, Any]:
        return {"worker": self.worker, "reason": self.reason, "slots": self.slots, "requests": self.requests}


@dataclass
class WorkerRuns:
    """One level's outcome over its processes: the runs of those that reported, the failures of the others."""

    runs: list[LevelRun]
    failures: list[WorkerFailure]
    shares: list[LevelPlan]


def split_plan(plan: LevelPlan, workers: int) -> list[LevelPlan]:
    """The share of each process. With a concurrency (or cap) below `workers`, only that many processes run,
    each with at least one slot, so no request or arrival is left without a process."""
    n = min(workers, plan.slots) if plan.slots else workers
    shares = []
    for w in range(n):
        slots = plan.slots // n + (w < plan.slots % n) if plan.slots else 0
        if plan.open_loop:
            share = replace(plan, slots=slots, ids=(plan.ids or [])[w::n], arrivals=(plan.arrivals or [])[w::n], worker=w)
        else:
            ids = plan.ids[w::n] if plan.ids is not None else None
            share = replace(plan, slots=slots, ids=ids, id_start=plan.id_start + w, id_step=plan.id_step * n, worker=w)
        share.warmup_ids = plan.warmup_ids[w::n]
        shares.append(share)
    return shares


def measured_load(plan: LevelPlan, value: float, outcome: WorkerRuns) -> dict[str, Any]:
    """The load the level asked for and the load its figures were measured at: the shares of the processes that
    reported (closed loop: their concurrency; open loop: their fraction of the arrival schedule and of the cap)."""
    failed = {f.worker for f in outcome.failures}
    kept = [s for s in outcome.shares if s.worker not in failed]
    processes = {"asked": len(outcome.shares), "measured": len(kept)}
    if not plan.open_loop:
        return {
            "asked": {"concurrency": int(value)},
            "measured": {"concurrency": sum(s.slots for s in kept)},
            "processes": processes,
            "complete": not failed,
        }
    total = sum(len(s.arrivals or []) for s in outcome.shares)
    offered = sum(len(s.arrivals or []) for s in kept)
    cap = plan.slots or None
    return {
        "asked": {"request_rate": value, "max_concurrency": cap},
        "measured": {
            "request_rate": value * offered / total if failed and total else value,
            "max_concurrency": sum(s.slots for s in kept) if cap else None,
        },
        "processes": processes,
        "complete": not failed,
    }


def describe_load(load: dict[str, Any], which: str) -> str:
    """`concurrency 2` / `request rate 2.5/s (at most 3 in flight)` for load["asked"] or load["measured"]."""
    figures = load[which]
    if "concurrency" in figures:
        return f"concurrency {figures['concurrency']}"
    text = f"request rate {figures['request_rate']:g}/s"
    return text + (f" (at most {figures['max_concurrency']} in flight)" if figures.get("max_concurrency") else "")


def failure_line(label: str, failure: WorkerFailure, load: dict[str, Any]) -> str:
    """One console/summary line per failed worker: who, why, and what the level's figures then stand for."""
    processes = load["processes"]
    closed = "concurrency" in load["asked"]
    what = f"its {failure.requests} requests" if failure.requests is not None else "its requests"
    carried = f"concurrency {failure.slots}" if closed else f"1 in {processes['asked']} arrivals"
    if processes["measured"]:
        consequence = (f"the figures of {label} were measured at {describe_load(load, 'measured')}, "
                       f"not the {describe_load(load, 'asked')} asked")
    else:
        consequence = f"no process of {label} reported: the level has no figures"
    return (f"worker {failure.worker} of {processes['asked']} failed ({failure.reason}): {what} ({carried}) are in no "
            f"figure; {consequence}")


def exit_reason(code: int | None) -> str:
    """Why a process that sent no result ended, from its exit code."""
    if code is None:
        return "the process did not end"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the process was killed by {name} before it reported"
    return f"the process exited with status {code} before it reported"


def _abort(barrier: Any) -> None:
    """Break the start barrier so that no process waits for one that failed. In a thread of its own: a process
    killed while inside the barrier may have left its lock held, and the parent must never hang on that."""
    threading.Thread(target=barrier.abort, daemon=True).start()


def _child(plan: LevelPlan, prepared: PreparedRequests, target: Target, stop: Any, barrier: Any, start: Any, results: Any,
           slo: dict[str, float], lines_path: Path | None, secrets: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # until run_level installs its own handler

    def sync() -> int:
        try:
            barrier.wait(timeout=max(60.0, target.timeout))
        except Exception:  # a broken barrier: another worker failed; start anyway, alone
            return monotonic_ns() + START_MARGIN_NS
        return start.value

    handle = open(part_path(lines_path, plan.worker), "w", encoding="utf-8") if lines_path is not None else None
    try:
        lines = RequestLines(handle, plan.label, prepared.index, secrets, len(target.servers())) if handle else None
        run = run_level(plan, prepared, target, stop, sync=sync, collect=Collector(target.servers(), slo, lines))
    except BaseException as exc:  # reported by the parent as one line
        barrier.abort()
        results.put(("error", plan.worker, f"{type(exc).__name__}: {exc}"))
        return
    finally:
        if handle is not None:
            handle.close()
    results.put(("ok", plan.worker, run))


def run_level_in_workers(plan: LevelPlan, prepared: PreparedRequests, target: Target, workers: int, stop: Any, *,
                         slo: dict[str, float] | None = None, lines_path: Path | None = None,
                         secrets: list[str] | None = None) -> WorkerRuns:
    """Run the level's shares in worker processes: the runs of those that reported and the failures of the
    others. `stop` is a SharedFlag (or any flag a forked or spawned process shares). With `lines_path`, worker w
    writes its requests' lines to part_path(lines_path, w) (vlmkit.perf.collect.append_parts gathers them)."""
    shares = split_plan(plan, workers)
    ctx = context()
    start = ctx.Value("q", 0)

    def set_start() -> None:
        start.value = monotonic_ns() + START_MARGIN_NS

    barrier = ctx.Barrier(len(shares), action=set_start)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_child, args=(share, prepared, target, stop, barrier, start, results, slo or {}, lines_path,
                                         secrets or []), daemon=True)
        for share in shares
    ]
    for proc in procs:
        proc.start()
    runs: dict[int, LevelRun] = {}
    failures: dict[int, str] = {}

    def take(item: tuple[str, int, Any]) -> None:
        status, worker, payload = item
        if status == "ok":
            runs[worker] = payload
        else:
            failures[worker] = payload
            _abort(barrier)

    try:
        while len(runs) + len(failures) < len(procs):
            try:
                take(results.get(timeout=0.2))
            except queue.Empty:
                silent = [w for w, p in enumerate(procs) if w not in runs and w not in failures and not p.is_alive()]
                if not silent:
                    continue
                try:  # a process that exited normally has its result in the pipe already
                    while True:
                        take(results.get(timeout=DRAIN_S))
                except queue.Empty:
                    pass
                for w in silent:
                    if w not in runs and w not in failures:
                        failures[w] = exit_reason(procs[w].exitcode)
                        _abort(barrier)
            except KeyboardInterrupt:
                stop.set()
                continue
    finally:
        deadline = time.monotonic() + RESULT_TIMEOUT_S
        for proc in procs:
            proc.join(timeout=max(0.1, deadline - time.monotonic()))
            if proc.is_alive():
                proc.terminate()
    lost = [
        WorkerFailure(w, failures[w], shares[w].slots, len(shares[w].ids) if shares[w].ids is not None else None)
        for w in sorted(failures)
    ]
    return WorkerRuns([runs[w] for w in sorted(runs)], lost, shares)
