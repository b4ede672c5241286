"""`vlmkit perf`: load tests of OpenAI-compatible streaming services, with requests built from any dataset.

    from vlmkit.perf import PerfOptions, run_perf
    result = run_perf(dataset, PerfOptions(model="m", api_base="http://127.0.0.1:8000/v1", concurrency=[1, 8]))

Modules: options (PerfOptions, checks), requests (bodies built before timing), client (the SSE client and
per-request records), wire (its HTTP/1.1 connections, parsed in the protocol), schedule (closed/open loop in one
process), workers (several processes), balance (several --api-base servers: least in flight, back-off, per-server
tallies), collect (where a finished request goes: tallies, timeline, its line on disk), metrics (the figures,
their definitions and the level's tally), digest (streaming percentiles), timeline (bounded per-bin course of a
level), bottleneck (client-side limits), report (files, console), plots (PNG), api (run_perf), cli (the
subcommand). Workloads beyond one row, one request (issue 29): synthetic (--synthetic-image/--synthetic-video),
sessions (--sessions: multi-turn, per-turn figures), trace (--trace: Mooncake timestamps, drift), blocks (prompt text
of N tokens from shared block ids), prefix (--prefix-share), groups (figures kept per turn or prefix group),
promtext and server_metrics (--metrics-url: the server's Prometheus figures), search (--slo targets, --search-rate),
accuracy (--score: each level's answers scored by the dataset's own scorer, misses counted). Memory is flat in a run's length: no record outlives its line. Nothing heavy is imported until used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PerfOptions", "PerfResult", "run_perf"]


def __getattr__(name: str) -> Any:
    if name == "PerfOptions":
        from vlmkit.perf.options import PerfOptions

        return PerfOptions
    if name in ("PerfResult", "run_perf"):
        from vlmkit.perf import api

        return getattr(api, name)
    raise AttributeError(f"module 'vlmkit.perf' has no attribute {name!r}")
