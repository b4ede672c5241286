"""Is the client, not the server, the limit? Signs read from each measuring process:

- its CPU time over the measured phase near one full core (Python drives one core per process);
- the event loop waking late (a 10 ms sleep oversleeping): requests go out late by about that much, and so are
  chunk times where they are taken when read (--read-times, TLS) rather than from the kernel;
- in open loop, arrivals dispatched later and later (the schedule lag grows; a wait for --max-concurrency is the
  server's pace, not the client's, and is left out); the achieved send rate is reported.
A lagging loop in a process that used little CPU means the machine is busy with other work (the process waited
for a core), which the warning says. Each sign gives a loud warning in the console and in perf_summary.json;
the figures are still reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vlmkit.perf.schedule import LevelRun

CPU_LIMIT = 0.90  # share of one core
BUSY = 0.60  # a lagging loop in a process this busy is the client's own doing
LAG_P99_MS = 10.0
LAG_MAX_MS = 100.0
SCHEDULE_LAG_MS = 10.0


def client_health(runs: list[LevelRun], *, open_loop: bool, requested_rate: float | None) -> tuple[dict[str, Any], list[str]]:
    """(figures, warnings) about the measuring processes of one level."""
    warnings: list[str] = []
    per_process = []
    for run in runs:
        wall = max(1e-9, (run.t_end - run.t0) / 1e9)
        lag = np.frombuffer(run.loop_lag, dtype=np.int64) / 1e6 if len(run.loop_lag) else np.zeros(0)
        per_process.append(
            {
                "worker": run.worker,
                "cpu_fraction": run.cpu_s / wall,
                "loop_lag_ms_p99": float(np.percentile(lag, 99)) if lag.size else None,
                "loop_lag_ms_max": float(lag.max()) if lag.size else None,
                "gc_collections": run.gc_collections,
            }
        )
    fix = "add --workers N (one process per core) or run the client on a bigger machine"
    busiest = max(per_process, key=lambda p: p["cpu_fraction"], default=None)
    if busiest is not None and busiest["cpu_fraction"] >= CPU_LIMIT:
        warnings.append(
            f"CLIENT BOTTLENECK: measuring process {busiest['worker']} used {busiest['cpu_fraction']:.0%} of a CPU "
            f"core; the figures may show the client's limit, not the server's — {fix}"
        )
    lags = [p for p in per_process if p["loop_lag_ms_p99"] is not None]
    worst = max(lags, key=lambda p: p["loop_lag_ms_p99"], default=None)
    if worst is not None and (worst["loop_lag_ms_p99"] > LAG_P99_MS or worst["loop_lag_ms_max"] > LAG_MAX_MS):
        cpu = worst["cpu_fraction"]
        why = (
            f"it used {cpu:.0%} of a core: it is saturated — {fix}"
            if cpu >= BUSY
            else f"it used only {cpu:.0%} of a core, so it was waiting for a CPU: other work on this machine "
            "competes with the client — measure on a quieter machine"
        )
        warnings.append(
            f"CLIENT LAG: the event loop of process {worst['worker']} woke up late (p99 "
            f"{worst['loop_lag_ms_p99']:.1f} ms, max {worst['loop_lag_ms_max']:.1f} ms), so requests go out late by "
            f"as much (and chunks read then are timed late, unless timed by the kernel); {why}"
        )
    schedule: dict[str, Any] | None = None
    if open_loop:
        dispatch = np.concatenate(
            [np.frombuffer(r.dispatch_lag, dtype=np.int64) for r in runs if len(r.dispatch_lag)] or [np.zeros(0, np.int64)]
        ) / 1e6
        sent = sum(r.sent for r in runs)
        span = max((r.t_end - r.t0) for r in runs) / 1e9 if runs else 0.0
        schedule = {
            "dispatch_lag_ms": None,
            "requested_rate": requested_rate,
            "achieved_send_rate": sent / span if span > 0 else None,
        }
        if dispatch.size >= 10:
            fifth = max(1, dispatch.size // 5)
            first, last = float(np.median(dispatch[:fifth])), float(np.median(dispatch[-fifth:]))
            schedule["dispatch_lag_ms"] = {"first_fifth_median": first, "last_fifth_median": last, "max": float(dispatch.max())}
            if last > SCHEDULE_LAG_MS and last > 2 * first:
                warnings.append(
                    f"CLIENT BOTTLENECK: the schedule lag grew from {first:.1f} ms to {last:.1f} ms over the run: "
                    f"the client could not send at the requested rate — {fix}"
                )
    return {"processes": per_process, "schedule": schedule}, warnings
