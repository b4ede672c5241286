"""The figures of one level, computed from its request records. Each figure's definition is written once, here
(DEFINITIONS, copied into perf_summary.json and into the README).

Latency figures are computed over successful requests only, so a failed request never drags them; failures are
counted by kind. Warm-up and cancelled (Ctrl-C) requests are in no figure.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from vlmkit.perf.client import Record

STATS = ("mean", "median", "p90", "p95", "p99", "max")

DEFINITIONS: dict[str, str] = {
    "ttft_ms": "Time to first token: from handing the request to the HTTP client to the arrival of the first "
    "chunk that carries content (delta.content or reasoning content). Successful requests with content. A "
    "chunk's arrival is when the kernel received its bytes (SO_TIMESTAMPNS, plain-TCP connections where the "
    "platform gives it), else when the client read them (always with --read-times); the same for every figure.",
    "tpot_ms": "Time per output token after the first: (E2EL - TTFT) / (output tokens - 1), per request, over "
    "successful requests with more than one output token (output tokens from the server's usage; counted "
    "content chunks when the server sends no usage).",
    "itl_ms": "Inter-token latency: the gaps between consecutive content-bearing chunks of a request, pooled over "
    "all successful requests (a chunk holding several tokens is one gap).",
    "e2el_ms": "End-to-end latency: from handing the request to the HTTP client to the end of its stream "
    "([DONE], or the end of the body). Successful requests.",
    "queued_ms": "Time queued in the client: from when a request was due (its arrival time in open loop; the "
    "moment its slot became free in closed loop) to when it was handed to the HTTP client. Includes waiting "
    "for --max-concurrency and event-loop lag.",
    "duration_s": "From the first measured request's start to the last one's end.",
    "request_throughput": "Successful requests / duration_s.",
    "input_token_throughput": "Sum of usage.prompt_tokens over successful requests / duration_s (null when the "
    "server sent no usage).",
    "output_token_throughput": "Sum of output tokens over successful requests / duration_s (usage."
    "completion_tokens; content chunks when the server sent no usage, as the notes say).",
    "achieved_concurrency": "mean: the sum of every measured request's time in flight / duration_s (Little's law, "
    "failures included); max: the most requests in flight at once.",
    "goodput": "Successful requests meeting every --slo limit (TTFT, TPOT, E2EL in ms; a request with one output "
    "token has no TPOT and meets a TPOT limit) / duration_s; fraction: of all measured requests.",
    "load": "asked: the level's concurrency (or request rate and cap) as given; measured: the load of the worker "
    "processes whose requests the figures cover. Below asked only when a --workers process failed (level status "
    "partial_load; failed when none reported): its requests are in no figure, and the server carried its share "
    "until it failed.",
    "errors": "Measured requests that failed, by kind: http_<status>, connection, dropped, timeout, "
    "malformed_sse, stream_error, not_sse.",
    "t0_monotonic_ns": "When the level's measured phase began, in time.monotonic_ns() (CLOCK_MONOTONIC, one clock for "
    "every process on the host); perf_requests.jsonl's sched_ms and start_ms count from it, so that a request's "
    "times can be set beside a server's own monotonic timestamps on the same host.",
    "stats": "mean, median, p90, p95, p99 (linear interpolation between order statistics), max; n = how many "
    "values.",
}


def stats(values: Any) -> dict[str, float | int | None]:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return {"n": 0, **{s: None for s in STATS}}
    p50, p90, p95, p99 = np.percentile(arr, [50, 90, 95, 99])
    return {
        "n": int(arr.size), "mean": float(arr.mean()), "median": float(p50), "p90": float(p90),
        "p95": float(p95), "p99": float(p99), "max": float(arr.max()),
    }


def output_tokens(rec: Record) -> tuple[int, str]:
    """(tokens, source): the server's usage count when given, else the number of content chunks."""
    if rec.output_tokens is not None:
        return int(rec.output_tokens), "usage"
    return len(rec.chunks), "chunks"


def per_request(rec: Record) -> dict[str, Any]:
    """A request's own figures in ms (None where undefined)."""
    ttft = e2el = tpot = None
    itl: list[float] = []
    tokens, source = output_tokens(rec)
    if rec.ok:
        e2el = (rec.end - rec.start) / 1e6
        if rec.chunks:
            ttft = (rec.chunks[0] - rec.start) / 1e6
            c = rec.chunks
            itl = [(c[i] - c[i - 1]) / 1e6 for i in range(1, len(c))]
            if tokens > 1:
                tpot = (e2el - ttft) / (tokens - 1)
    return {
        "ttft_ms": ttft, "tpot_ms": tpot, "e2el_ms": e2el, "itl_ms": itl,
        "queued_ms": (rec.start - rec.sched) / 1e6 if rec.start else None,
        "output_tokens": tokens, "output_tokens_source": source,
    }


def in_flight_max(records: list[Record]) -> int:
    events = sorted([(r.start, 1) for r in records] + [(r.end, -1) for r in records], key=lambda e: (e[0], e[1]))
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def summarize(records: list[Record], slo: dict[str, float]) -> dict[str, Any]:
    """The figures of one level's measured, not-cancelled records."""
    sent = [r for r in records if r.start and r.error != "cancelled"]
    ok = [r for r in sent if r.ok]
    errors = Counter(r.error for r in sent if not r.ok)
    duration = (max(r.end for r in sent) - min(r.start for r in sent)) / 1e9 if sent else 0.0
    figures = [per_request(r) for r in ok]
    ttft = [f["ttft_ms"] for f in figures if f["ttft_ms"] is not None]
    tpot = [f["tpot_ms"] for f in figures if f["tpot_ms"] is not None]
    e2el = [f["e2el_ms"] for f in figures]
    itl = [g for f in figures for g in f["itl_ms"]]
    queued = [(r.start - r.sched) / 1e6 for r in sent]

    with_usage = [r for r in ok if r.output_tokens is not None]
    notes: list[str] = []
    input_total = sum(int(r.input_tokens or 0) for r in with_usage) if with_usage else None
    output_total = sum(f["output_tokens"] for f in figures)
    if ok and not with_usage:
        notes.append(
            "the server sent no usage (stream_options.include_usage was asked for): input token throughput is "
            "unknown and output tokens are counted as content chunks, an estimate"
        )
    elif len(with_usage) < len(ok):
        notes.append(
            f"{len(ok) - len(with_usage)} of {len(ok)} successful requests came without usage: their output tokens "
            "are counted as content chunks and their input tokens are missing from the input throughput"
        )
    no_content = sum(1 for r in ok if not r.chunks)
    if no_content:
        notes.append(f"{no_content} successful request(s) streamed no content: no TTFT for them")

    good = 0
    for f in figures:
        if "ttft" in slo and (f["ttft_ms"] is None or f["ttft_ms"] > slo["ttft"]):
            continue
        if "tpot" in slo and f["tpot_ms"] is not None and f["tpot_ms"] > slo["tpot"]:
            continue
        if "e2el" in slo and f["e2el_ms"] > slo["e2el"]:
            continue
        good += 1

    def per_s(value: float | int | None) -> float | None:
        return value / duration if value is not None and duration > 0 else None

    return {
        "requests": {
            "measured": len(sent),
            "successful": len(ok),
            "failed": len(sent) - len(ok),
            "errors_by_kind": dict(sorted(errors.items())),
            "cancelled": sum(1 for r in records if r.error == "cancelled"),
        },
        "duration_s": duration,
        "request_throughput": per_s(len(ok)),
        "input_token_throughput": per_s(input_total),
        "output_token_throughput": per_s(output_total),
        "tokens": {
            "input_total": input_total,
            "output_total": output_total,
            "output_source": "usage" if ok and len(with_usage) == len(ok) else ("chunks" if not with_usage else "mixed"),
        },
        "ttft_ms": stats(ttft),
        "tpot_ms": stats(tpot),
        "itl_ms": stats(itl),
        "e2el_ms": stats(e2el),
        "queued_ms": stats(queued),
        "achieved_concurrency": {
            "mean": sum(r.end - r.start for r in sent) / 1e9 / duration if duration > 0 else None,
            "max": in_flight_max(sent),
        },
        "goodput": (
            {"slo_ms": dict(slo), "good_requests": good, "per_s": per_s(good), "fraction": good / len(sent) if sent else None}
            if slo
            else None
        ),
        "notes": notes,
    }
