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
from vlmkit.perf.digest import ERROR_BOUND, STATS, Digest, exact_stats  # noqa: F401 (STATS: the report's columns)

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
    "failures included); max: the most requests in flight at once (counted live by the measuring process; with "
    "--workers, each process's most within one timeline bin, added over the processes: an upper bound).",
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
    "values. Exact while a level has fewer than 32,768 values of the figure; past that the percentiles come from "
    "a streaming log-linear histogram (HDR layout, 256 buckets per power of two) and are within 0.2% of the exact "
    "figure (plus 1 ns), as the level's notes say; n, mean and max stay exact.",
    "sessions": "--sessions: per turn of the conversations (turn 1 = the first user turn), its requests, successes, "
    "TTFT and mean prompt tokens (the server's usage); ttft_growth: the least-squares slope of the turns' median TTFT "
    "against their mean prompt tokens (ms per 1,000 tokens) and the last turn's median over the first's; cut_short: "
    "sessions that ended at a failed turn. The history's assistant turns are the file's, not the streamed answers.",
    "trace": "--trace: the speed, the requests the trace offered to the level and the span of their send times (s); "
    "drift_ms: per request, the time it was handed to the HTTP client minus the time the trace put it at (the level's "
    "queued_ms), median, p99 and max.",
    "prefix": "--prefix-share: TTFT, successes and mean prompt tokens of the requests whose prompt starts with the shared "
    "prefix and of those with a prefix of their own, as long; server_hit_rate: the server's prefix-cache hit rate over "
    "the level (with --metrics-url).",
    "server_metrics": "--metrics-url: the server's Prometheus figures sampled during the level (warm-up included): gauges "
    "(running, waiting, kv_cache_usage) as min/mean/max over the samples, counters as their increase from the first "
    "sample to the last (tokens also per second of that span), prefix_cache_hit_rate = hits / queries over the level.",
    "slo_search": "--search-rate: each probe's rate, verdict and the figures the --slo targets name; the highest rate "
    "that passed (rule: in the block).",
    "servers": "With several --api-base URLs: each request goes to the server with the fewest requests in flight "
    "(ties: the one sent fewest); a server whose last 3 requests could not connect or were dropped is left out for "
    "a back-off (1 s, doubling to 30 s) and then tried again. Per server: its requests, their errors by kind and its "
    "own figures; a request that failed on a server counts as that server's error (it is not sent again).",
}


def stats(values: Any) -> dict[str, float | int | None]:
    """The statistics of every value, exactly."""
    return exact_stats(np.asarray(values, dtype=float))


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
    """The figures of one level's measured, not-cancelled records (a LevelTally over a list: the exact figures of a
    short run, and the reference the streaming path is tested against)."""
    tally = LevelTally(slo)
    for rec in records:
        tally.add(rec)
    tally.in_flight_max = in_flight_max([r for r in records if r.start and r.error != "cancelled"])
    return tally.summary()


class LevelTally:
    """One level's figures folded in request by request, in memory that does not grow with the requests: counts and
    sums, and a Digest per latency (exact while short, then a histogram within digest.ERROR_BOUND). `in_flight_max`
    is set by whoever watched the requests go out (vlmkit.perf.timeline)."""

    def __init__(self, slo: dict[str, float]) -> None:
        self.slo = dict(slo)
        self.measured = self.ok = self.cancelled = 0
        self.errors: Counter = Counter()
        self.first_start: int | None = None
        self.last_end: int | None = None
        self.busy_ns = 0
        self.with_usage = 0
        self.input_total = 0
        self.output_total = 0
        self.no_content = 0
        self.good = 0
        self.in_flight_max = 0
        self.digests = {name: Digest() for name in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "queued_ms")}

    def add(self, rec: Record, figures: dict[str, Any] | None = None) -> None:
        """Fold one measured record in (warm-up ones belong to no tally); `figures`: its per_request(), when the
        caller has it already."""
        if rec.error == "cancelled":
            self.cancelled += 1
            return
        if not rec.start:
            return
        self.measured += 1
        self.first_start = rec.start if self.first_start is None else min(self.first_start, rec.start)
        self.last_end = rec.end if self.last_end is None else max(self.last_end, rec.end)
        self.busy_ns += rec.end - rec.start
        d = self.digests
        d["queued_ms"].add((rec.start - rec.sched) / 1e6)
        if not rec.ok:
            self.errors[rec.error] += 1
            return
        self.ok += 1
        f = figures or per_request(rec)
        if f["ttft_ms"] is not None:
            d["ttft_ms"].add(f["ttft_ms"])
        else:
            self.no_content += 1
        if f["tpot_ms"] is not None:
            d["tpot_ms"].add(f["tpot_ms"])
        d["e2el_ms"].add(f["e2el_ms"])
        if f["itl_ms"]:
            d["itl_ms"].extend(f["itl_ms"])
        if rec.output_tokens is not None:
            self.with_usage += 1
            self.input_total += int(rec.input_tokens or 0)
        self.output_total += f["output_tokens"]
        slo = self.slo
        if "ttft" in slo and (f["ttft_ms"] is None or f["ttft_ms"] > slo["ttft"]):
            return
        if "tpot" in slo and f["tpot_ms"] is not None and f["tpot_ms"] > slo["tpot"]:
            return
        if "e2el" in slo and f["e2el_ms"] > slo["e2el"]:
            return
        self.good += 1

    def merge(self, other: "LevelTally") -> None:
        """Add another process's tally of the same level (in_flight_max is the caller's: see timeline)."""
        for name in ("measured", "ok", "cancelled", "busy_ns", "with_usage", "input_total", "output_total",
                     "no_content", "good"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.update(other.errors)
        starts = [t for t in (self.first_start, other.first_start) if t is not None]
        ends = [t for t in (self.last_end, other.last_end) if t is not None]
        self.first_start, self.last_end = (min(starts) if starts else None), (max(ends) if ends else None)
        for name, digest in self.digests.items():
            digest.merge(other.digests[name])

    @property
    def exact(self) -> bool:
        return all(d.exact for d in self.digests.values())

    def summary(self) -> dict[str, Any]:
        ok, sent = self.ok, self.measured
        duration = (self.last_end - self.first_start) / 1e9 if sent else 0.0
        notes: list[str] = []
        if ok and not self.with_usage:
            notes.append(
                "the server sent no usage (stream_options.include_usage was asked for): input token throughput is "
                "unknown and output tokens are counted as content chunks, an estimate"
            )
        elif self.with_usage < ok:
            notes.append(
                f"{ok - self.with_usage} of {ok} successful requests came without usage: their output tokens "
                "are counted as content chunks and their input tokens are missing from the input throughput"
            )
        if self.no_content:
            notes.append(f"{self.no_content} successful request(s) streamed no content: no TTFT for them")
        if not self.exact:
            notes.append(
                f"percentiles from a streaming histogram: within {ERROR_BOUND:.2%} of the exact figure (plus 1 ns); "
                "n, mean and max are exact"
            )
        input_total = self.input_total if self.with_usage else None

        def per_s(value: float | int | None) -> float | None:
            return value / duration if value is not None and duration > 0 else None

        return {
            "requests": {
                "measured": sent,
                "successful": ok,
                "failed": sent - ok,
                "errors_by_kind": dict(sorted(self.errors.items())),
                "cancelled": self.cancelled,
            },
            "duration_s": duration,
            "request_throughput": per_s(ok),
            "input_token_throughput": per_s(input_total),
            "output_token_throughput": per_s(self.output_total),
            "tokens": {
                "input_total": input_total,
                "output_total": self.output_total,
                "output_source": "usage" if ok and self.with_usage == ok else ("chunks" if not self.with_usage else "mixed"),
            },
            **{name: digest.stats() for name, digest in self.digests.items() if name != "queued_ms"},
            "queued_ms": self.digests["queued_ms"].stats(),
            "achieved_concurrency": {
                "mean": self.busy_ns / 1e9 / duration if duration > 0 else None,
                "max": self.in_flight_max,
            },
            "goodput": (
                {"slo_ms": dict(self.slo), "good_requests": self.good, "per_s": per_s(self.good),
                 "fraction": self.good / sent if sent else None}
                if self.slo
                else None
            ),
            "notes": notes,
        }
