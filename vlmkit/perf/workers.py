"""`--workers N`: one level spread over N processes, each with its own event loop and connection pool.

The level's load is split: closed loop, the concurrency (process w gets level // N, plus one for the first
level % N) and the request numbers (w, w + N, w + 2N, ...); open loop, every N-th arrival of the one seeded
schedule, with one shared start time (CLOCK_MONOTONIC is one clock for all processes). All processes run their
warm-up, meet at a barrier, and start the measured phase together. Ctrl-C in the parent (or in any worker)
sets a shared stop flag; each worker then returns what it measured.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import signal
import time
from dataclasses import replace
from time import monotonic_ns
from typing import Any

from vlmkit.perf.requests import PreparedRequests
from vlmkit.perf.schedule import LevelPlan, LevelRun, Target, run_level

START_MARGIN_NS = 50_000_000  # the measured phase starts this long after the last process reached the barrier
RESULT_TIMEOUT_S = 30.0


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


def _child(plan: LevelPlan, prepared: PreparedRequests, target: Target, stop: Any, barrier: Any, start: Any, results: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # until run_level installs its own handler

    def sync() -> int:
        try:
            barrier.wait(timeout=max(60.0, target.timeout))
        except Exception:  # a broken barrier: another worker failed; start anyway, alone
            return monotonic_ns() + START_MARGIN_NS
        return start.value

    try:
        run = run_level(plan, prepared, target, stop, sync=sync)
        results.put(("ok", plan.worker, run.to_state()))
    except BaseException as exc:  # reported by the parent as one line
        results.put(("error", plan.worker, f"{type(exc).__name__}: {exc}"))


def run_level_in_workers(plan: LevelPlan, prepared: PreparedRequests, target: Target, workers: int, stop: Any) -> list[LevelRun]:
    """Run the level's shares in worker processes and return their runs. `stop` is a multiprocessing Event."""
    shares = split_plan(plan, workers)
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context("spawn")
    start = ctx.Value("q", 0)

    def set_start() -> None:
        start.value = monotonic_ns() + START_MARGIN_NS

    barrier = ctx.Barrier(len(shares), action=set_start)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_child, args=(share, prepared, target, stop, barrier, start, results), daemon=True)
        for share in shares
    ]
    for proc in procs:
        proc.start()
    runs: list[LevelRun] = []
    failures: list[str] = []
    pending = len(procs)
    try:
        while pending:
            try:
                status, worker, payload = results.get(timeout=0.2)
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and results.empty():
                    failures.append("a worker process exited without reporting")
                    break
                continue
            except KeyboardInterrupt:
                stop.set()
                continue
            pending -= 1
            if status == "ok":
                runs.append(LevelRun.from_state(payload))
            else:
                failures.append(f"worker {worker}: {payload}")
    finally:
        deadline = time.monotonic() + RESULT_TIMEOUT_S
        for proc in procs:
            proc.join(timeout=max(0.1, deadline - time.monotonic()))
            if proc.is_alive():
                proc.terminate()
    if failures and not runs:
        raise RuntimeError("; ".join(failures))
    return sorted(runs, key=lambda r: r.worker)
