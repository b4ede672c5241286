"""`--metrics-url URL`: the server's own Prometheus figures, sampled during each level beside the client's.

A sampler process (its own interpreter, so reading and parsing the text never holds up the measuring event loop)
GETs the URL every `--metrics-interval` seconds from the level's start (warm-up included) to its end, with no key
(an API key is never sent to it), and reduces each answer (vlmkit.perf.promtext) to the figures below, summed over
the label sets of a name (several engines or models) except fractions, which are averaged:

- gauges, as min/mean/max over the samples: `running` (vllm:num_requests_running, sglang:num_running_reqs),
  `waiting` (vllm:num_requests_waiting, sglang:num_queue_reqs), `kv_cache_usage` (vllm:kv_cache_usage_perc,
  vllm:gpu_cache_usage_perc, sglang:token_usage: fractions 0..1);
- counters, as their increase over the level (first sample to last): prompt and generation tokens (per second of the
  sampled span) and the prefix cache's queries and hits (vllm:prefix_cache_queries/hits, their gpu_ names of older
  versions, in tokens); `prefix_cache_hit_rate` = hits / queries over the level, or the mean of SGLang's
  sglang:cache_hit_rate gauge where the counters are absent.
A URL that cannot be read is a warning in the level (the run goes on); the first error is kept. The level starts
once the first sample is taken (the counters' baseline), so a sampler slow to start loses no part of the level.
At most MAX_SERIES evenly thinned samples of the gauges are kept for the plots, whatever the level's length.
"""

from __future__ import annotations

import math
import time
from typing import Any

from vlmkit.perf.promtext import parse, totals

READ_LIMIT = 16 << 20
START_WAIT_S = 10.0  # beyond the read timeout: how long a level waits for its sampler's first sample
MAX_SERIES = 600
GAUGES = {
    "running": ("vllm:num_requests_running", "sglang:num_running_reqs"),
    "waiting": ("vllm:num_requests_waiting", "sglang:num_queue_reqs"),
    "kv_cache_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"),
}
FRACTIONS = {"kv_cache_usage"}
COUNTERS = {
    "prompt_tokens": ("vllm:prompt_tokens_total", "sglang:prompt_tokens_total"),
    "generation_tokens": ("vllm:generation_tokens_total", "sglang:generation_tokens_total"),
    "prefix_cache_queries": ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
    "prefix_cache_hits": ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
}
HIT_RATE_GAUGE = "sglang:cache_hit_rate"


def reduce(text: str | bytes) -> dict[str, float]:
    """The figures this module watches in one exposition (absent ones left out)."""
    found = totals(parse(text))
    out: dict[str, float] = {}
    for key, names in {**GAUGES, **COUNTERS}.items():
        for name in names:
            if name in found:
                total, count = found[name]
                out[key] = total / count if key in FRACTIONS else total
                break
    if HIT_RATE_GAUGE in found:
        total, count = found[HIT_RATE_GAUGE]
        out["hit_rate_gauge"] = total / count
    return out


def read(url: str, timeout: float) -> bytes:
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": "text/plain"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never the environment's proxies
    with opener.open(request, timeout=timeout) as answer:
        return answer.read(READ_LIMIT)


class Summary:
    """Samples folded in as they come: bounded whatever the level's length."""

    def __init__(self) -> None:
        self.samples = 0
        self.failed = 0
        self.error: str | None = None
        self.first: tuple[float, dict[str, float]] | None = None
        self.last: tuple[float, dict[str, float]] | None = None
        self.gauges: dict[str, list[float]] = {}  # key -> [min, sum, max, n]
        self.hit_gauge: list[float] = [0.0, 0]
        self.series: list[list[float | None]] = []
        self.stride = 1

    def add(self, t: float, figures: dict[str, float]) -> None:
        self.samples += 1
        if self.first is None:
            self.first = (t, figures)
        self.last = (t, figures)
        for key in GAUGES:
            if key in figures:
                g = self.gauges.setdefault(key, [math.inf, 0.0, -math.inf, 0])
                v = figures[key]
                g[0], g[1], g[2], g[3] = min(g[0], v), g[1] + v, max(g[2], v), g[3] + 1
        if "hit_rate_gauge" in figures:
            self.hit_gauge[0] += figures["hit_rate_gauge"]
            self.hit_gauge[1] += 1
        if (self.samples - 1) % self.stride == 0:
            self.series.append([t] + [figures.get(k) for k in GAUGES])
            if len(self.series) >= MAX_SERIES:
                self.series = self.series[::2]
                self.stride *= 2

    def fail(self, reason: str) -> None:
        self.failed += 1
        if self.error is None:
            self.error = reason

    def result(self, url: str) -> dict[str, Any]:
        out: dict[str, Any] = {"url": url, "samples": self.samples, "failed_samples": self.failed,
                               "error": self.error}
        out["gauges"] = {k: {"min": g[0], "mean": g[1] / g[3], "max": g[2]} for k, g in self.gauges.items() if g[3]}
        counters: dict[str, float] = {}
        span = 0.0
        if self.first is not None and self.last is not None:
            (t0, a), (t1, b) = self.first, self.last
            span = t1 - t0
            counters = {k: b[k] - a[k] for k in COUNTERS if k in a and k in b}
        out["span_s"] = span
        out["increase"] = counters
        out["per_s"] = {k: v / span for k, v in counters.items() if k.endswith("_tokens") and span > 0}
        queries = counters.get("prefix_cache_queries")
        rate = None
        if queries:
            rate = counters.get("prefix_cache_hits", 0.0) / queries
        elif self.hit_gauge[1]:
            rate = self.hit_gauge[0] / self.hit_gauge[1]
        out["prefix_cache_hit_rate"] = rate
        out["series"] = {"columns": ["t_s", *GAUGES],
                         "rows": [[round(r[0] - (self.first[0] if self.first else 0), 3), *r[1:]] for r in self.series]}
        return out


def sample_loop(url: str, interval: float, timeout: float, stop: Any, results: Any, ready: Any = None) -> None:
    """The sampler process: a first sample (then `ready` is set: the level may start), samples until `stop` is set,
    one last sample, then the summary on `results`."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when sampling ends
    summary = Summary()

    def once() -> None:
        t = time.monotonic()
        try:
            summary.add(t, reduce(read(url, timeout)))
        except Exception as exc:  # any failure of a hostile or absent endpoint is one counted warning
            summary.fail(f"{type(exc).__name__}: {exc}"[:300])

    due = time.monotonic()
    while not stop.is_set():
        once()
        if ready is not None:
            ready.set()
        due += interval
        while not stop.is_set() and time.monotonic() < due:
            time.sleep(min(0.05, max(0.0, due - time.monotonic())))
    once()
    results.put(summary)


class Sampler:
    """A level's sampler process: `start()` before the level, `finish()` after it (the level's block)."""

    def __init__(self, url: str, interval: float, shown_url: str) -> None:
        self.url, self.interval, self.shown = url, interval, shown_url
        self.proc: Any = None

    def start(self) -> None:
        from vlmkit.perf.workers import SharedFlag, context

        ctx = context()
        self.stop = SharedFlag(ctx)
        self.results = ctx.Queue()
        timeout = max(2.0, min(10.0, self.interval * 2))
        ready = SharedFlag(ctx)
        self.proc = ctx.Process(target=sample_loop, args=(self.url, self.interval, timeout, self.stop, self.results,
                                                          ready), daemon=True)
        self.proc.start()
        deadline = time.monotonic() + timeout + START_WAIT_S  # the first sample is the level's baseline: wait for it
        while not ready.is_set() and self.proc.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)

    def finish(self, secrets: list[str]) -> dict[str, Any]:
        import queue

        from vlmkit.core.secrets import scrub

        self.stop.set()
        try:
            summary = self.results.get(timeout=30)
        except queue.Empty:
            summary = Summary()
            summary.fail("the sampler process did not report")
        finally:
            self.proc.join(timeout=5)
            if self.proc.is_alive():
                self.proc.terminate()
        result = summary.result(self.shown)
        if result["error"]:
            result["error"] = scrub(result["error"], secrets)
        return result


def warning(block: dict[str, Any]) -> str | None:
    """A level warning when the server's metrics could not be read (all samples, or some)."""
    if not block["failed_samples"]:
        return None
    if not block["samples"]:
        return f"--metrics-url {block['url']} could not be read ({block['error']}): no server figures"
    return f"--metrics-url {block['url']}: {block['failed_samples']} sample(s) failed ({block['error']})"
