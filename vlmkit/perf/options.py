"""What a perf run is asked to do (PerfOptions) and the checks that turn bad values into one-line errors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SLO_NAMES = ("ttft", "tpot", "e2el")
MEDIA_MODES = ("data-url", "file-url")
VIDEO_MODES = ("frames", "video_url")
AUDIO_MODES = ("input_audio", "audio_url")
DEFAULT_MAX_TOKENS = 256


class PerfInputError(ValueError):
    """A bad option, dataset or server answer: the CLI prints the text as one line and exits with 2."""


@dataclass
class PerfOptions:
    """A perf run. Closed loop: `concurrency` levels (a sweep runs each in turn). Open loop: `request_rate`
    levels (requests/s, Poisson arrivals; `burstiness` is the gamma shape, 1 = Poisson) capped by
    `max_concurrency`. Each level sends `num_requests` (default: one per dataset row) or runs for `duration`
    seconds, after `warmup` requests that no figure counts."""

    model: str
    api_base: str
    api_key: str | None = field(default=None, repr=False)  # never written anywhere
    # the served model's class ("module:Class", as the model registry resolves it): its `auth_headers(api_key)` are
    # the requests' auth headers; None: the registry's API class (vlm.registry.api_class_target())
    api_class: str | None = None
    concurrency: list[int] | None = None
    request_rate: list[float] | None = None
    burstiness: float = 1.0
    max_concurrency: int | None = None
    num_requests: int | None = None
    duration: float | None = None
    warmup: int = 0
    max_tokens: int = DEFAULT_MAX_TOKENS
    ignore_eos: bool = False
    media_mode: str = "data-url"
    video_mode: str = "frames"
    audio_mode: str = "input_audio"
    nframe: int = 8
    system_prompt: str | None = None  # a system turn before each prompt that has none ("" or None: none)
    slo: dict[str, float] = field(default_factory=dict)  # name -> milliseconds
    workers: int = 1
    read_times: bool = False  # time chunks when read, not by the kernel's receive time (SO_TIMESTAMPNS)
    timeout: float = 300.0
    out_dir: Path | None = None
    seed: int = 0
    plots: bool = True
    quiet: bool = False
    think_time: float = 0.0  # --sessions: seconds between an answer's end and the next turn
    trace_speed: list[float] | None = None  # --trace: one level per speed (2 = the trace's time halved)
    prefix_share: float | None = None  # fraction of rows that share one prefix of prefix_tokens tokens
    prefix_tokens: int | None = None
    metrics_url: str | None = None  # the server's Prometheus text endpoint, sampled during each level
    metrics_interval: float = 1.0
    slo_targets: list[Any] = field(default_factory=list)  # vlmkit.perf.search.Target: `--slo ttft_p99<=500ms`
    search: Any = None  # vlmkit.perf.search.SearchSettings: `--search-rate` (None: no search)
    score: bool = False  # --score: each level's answers scored by the dataset's scorer (vlmkit.perf.accuracy)

    @property
    def open_loop(self) -> bool:
        return self.request_rate is not None

    def levels(self) -> list[float]:
        return list(self.request_rate) if self.request_rate is not None else list(self.concurrency or [1])

    def secrets(self) -> list[str]:
        """The key as given and as a header carries it (white space around it stripped, as the API classes send it):
        both are masked wherever they could reach a file or the console."""
        return [k for k in dict.fromkeys((self.api_key, (self.api_key or "").strip())) if k]

    def public(self) -> dict[str, Any]:
        """The options as written to perf_summary.json (no key, not even one pasted into the URL)."""
        from vlmkit.core.secrets import scrub

        return {
            "model": self.model, "api_base": scrub(self.api_base, self.secrets()), "api_key_given": bool(self.api_key),
            "concurrency": self.concurrency, "request_rate": self.request_rate, "burstiness": self.burstiness,
            "max_concurrency": self.max_concurrency, "num_requests": self.num_requests, "duration": self.duration,
            "warmup": self.warmup, "max_tokens": self.max_tokens, "ignore_eos": self.ignore_eos,
            "media_mode": self.media_mode, "video_mode": self.video_mode, "audio_mode": self.audio_mode,
            "nframe": self.nframe, "system_prompt": self.system_prompt, "slo_ms": dict(self.slo), "workers": self.workers,
            "read_times": self.read_times, "timeout": self.timeout,
            "seed": self.seed, "think_time": self.think_time, "trace_speed": self.trace_speed,
            "prefix_share": self.prefix_share, "prefix_tokens": self.prefix_tokens,
            "metrics_url": scrub(self.metrics_url, self.secrets()) if self.metrics_url else None,
            "metrics_interval": self.metrics_interval,
            "slo_targets": [{"name": t.name, "limit_ms": t.limit_ms} for t in self.slo_targets],
            "search_rate": vars(self.search) if self.search is not None else None,
            "score": self.score,
        }


def split_slo(items: list[str] | None) -> tuple[list[str], list[str]]:
    """`--slo` values, each possibly comma-separated: (goodput limits NAME:MS, targets METRIC_STAT<=LIMIT)."""
    pieces = [piece.strip() for item in items or [] for piece in item.split(",") if piece.strip()]
    return [p for p in pieces if "<=" not in p], [p for p in pieces if "<=" in p]


def parse_slo(items: list[str] | None) -> dict[str, float]:
    """`["ttft:500", "tpot:50"]` -> {"ttft": 500.0, "tpot": 50.0}; unknown names and bad values are errors."""
    slo: dict[str, float] = {}
    for item in items or []:
        name, sep, value = item.partition(":")
        name = name.strip().lower()
        if not sep:
            raise PerfInputError(f"--slo {item!r}: expected NAME:MS, e.g. ttft:500")
        if name not in SLO_NAMES:
            raise PerfInputError(f"--slo {item!r}: unknown SLO name {name!r} (known: {', '.join(SLO_NAMES)})")
        try:
            ms = float(value)
        except ValueError:
            raise PerfInputError(f"--slo {item!r}: {value!r} is not a number of milliseconds") from None
        if not math.isfinite(ms) or ms <= 0:
            raise PerfInputError(f"--slo {item!r}: the limit must be a positive number of milliseconds")
        slo[name] = ms
    return slo


def _positive(name: str, value: float | None, *, integer: bool = False, zero: bool = False) -> None:
    if value is None:
        return
    bad = not math.isfinite(value) or value < 0 or (value == 0 and not zero) or (integer and value != int(value))
    if bad:
        what = "an integer" if integer else "a number"
        raise PerfInputError(f"{name} must be {what} {'>= 0' if zero else '> 0'}, got {value:g}")


def check_options(o: PerfOptions) -> None:
    """PerfInputError naming the first bad option."""
    if not o.model:
        raise PerfInputError("--model is required (the model id the server serves)")
    if o.concurrency is not None and o.request_rate is not None:
        raise PerfInputError("give either --concurrency (closed loop) or --request-rate (open loop), not both")
    if o.max_concurrency is not None and o.request_rate is None and o.trace_speed is None:
        raise PerfInputError("--max-concurrency caps the open loop (--request-rate); with --concurrency the level is the cap")
    for level in o.concurrency or []:
        _positive("--concurrency", level, integer=True)
    for rate in o.request_rate or []:
        _positive("--request-rate", rate)
    if o.concurrency is not None and not o.concurrency or o.request_rate is not None and not o.request_rate:
        raise PerfInputError("--concurrency/--request-rate need at least one value")
    _positive("--burstiness", o.burstiness)
    _positive("--max-concurrency", o.max_concurrency, integer=True)
    _positive("--num-requests", o.num_requests, integer=True)
    _positive("--duration", o.duration)
    _positive("--warmup", o.warmup, integer=True, zero=True)
    _positive("--max-tokens", o.max_tokens, integer=True)
    _positive("--workers", o.workers, integer=True)
    _positive("--timeout", o.timeout)
    _positive("--nframe", o.nframe, integer=True)
    _positive("--think-time", o.think_time, zero=True)
    if (o.prefix_share is None) != (o.prefix_tokens is None):
        raise PerfInputError("--prefix-share and --prefix-tokens go together (e.g. --prefix-share 0.5 --prefix-tokens 1024)")
    if o.prefix_share is not None and not (math.isfinite(o.prefix_share) and 0 <= o.prefix_share <= 1):
        raise PerfInputError(f"--prefix-share must be a fraction 0..1, got {o.prefix_share:g}")
    _positive("--prefix-tokens", o.prefix_tokens, integer=True)
    _positive("--metrics-interval", o.metrics_interval)
    if o.metrics_url is not None and not o.metrics_url.startswith(("http://", "https://")):
        raise PerfInputError(f"--metrics-url must be an http(s) URL, got {o.metrics_url!r}")
    if o.search is not None:
        if not o.slo_targets:
            raise PerfInputError('--search-rate needs targets to hold, e.g. --slo "ttft_p99<=500ms,tpot_p99<=50ms"')
        if o.concurrency is not None or o.request_rate is not None or o.trace_speed is not None:
            raise PerfInputError("--search-rate chooses the request rates itself: no --concurrency, --request-rate "
                                 "or --trace with it")
        o.search.check()
    if o.trace_speed is not None:
        if o.concurrency is not None or o.request_rate is not None:
            raise PerfInputError("--trace sets the schedule itself: no --concurrency or --request-rate with it "
                                 "(--max-concurrency caps it; --trace-speed compresses it)")
        if not o.trace_speed:
            raise PerfInputError("--trace-speed needs at least one value")
        for speed in o.trace_speed:
            _positive("--trace-speed", speed)
    for name, value, allowed in (
        ("--media-mode", o.media_mode, MEDIA_MODES),
        ("--video-mode", o.video_mode, VIDEO_MODES),
        ("--audio-mode", o.audio_mode, AUDIO_MODES),
    ):
        if value not in allowed:
            raise PerfInputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    unknown = sorted(set(o.slo) - set(SLO_NAMES))
    if unknown:
        raise PerfInputError(f"unknown SLO name(s) {', '.join(unknown)} (known: {', '.join(SLO_NAMES)})")
