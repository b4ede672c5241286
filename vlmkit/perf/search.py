"""`--slo "ttft_p99<=500ms,tpot_p99<=50ms" --search-rate`: the highest request rate the service sustains within the
targets (as `vllm bench sweep serve_sla`, EvalScope's --sla-auto-tune and aiperf's adaptive search look for it).

Each probe is an open-loop level (Poisson arrivals, or --burstiness) at one rate. How long: at least
`--search-requests` requests (default 100, so that a p99 rests on 100 values) and at least `--search-probe-s`
seconds of arrivals (default 20, so that a queue that builds has time to show), whichever is more; `--warmup`
requests go first. A probe passes when
1. every target holds over its measured requests (e.g. ttft p99 <= 500 ms; a figure with no value fails);
2. at most 1% of its requests failed;
3. it was steady, i.e. the server kept pace: the level ended within 10% of when it would have had its last request
   taken the median time (duration <= (arrival span + E2EL median) / 0.9). A server that falls behind queues the
   later requests, and the level runs on past that mark however good its early requests were.
The search: from `--search-min-rate` (default 1/s) the rate doubles until a probe fails or `--search-max-rate`
(default 1024/s) passes; then bisection between the highest passing and the lowest failing rate until they are
within `--search-precision` (default 5%) of each other, or `--search-max-probes` (default 16) probes ran. The answer
is the highest passing rate; with none passing, there is none (the lowest rate already misses), and when the
maximum passed it is "at least" that.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from vlmkit.perf.options import PerfInputError

METRICS = ("ttft", "tpot", "itl", "e2el")
STATS = {"mean": "mean", "median": "median", "p50": "median", "p90": "p90", "p95": "p95", "p99": "p99", "max": "max"}
MAX_ERROR_FRACTION = 0.01
STEADY = 0.9
_TARGET = re.compile(r"^\s*([a-z0-9]+)_([a-z0-9]+)\s*<=\s*([0-9.eE+-]+)\s*(ms|s)?\s*$")


@dataclass(frozen=True)
class Target:
    metric: str  # ttft, tpot, itl, e2el
    stat: str  # a key of the level's stats: mean, median, p90, p95, p99, max
    limit_ms: float

    @property
    def name(self) -> str:
        return f"{self.metric}_{self.stat}"

    def value(self, level: dict[str, Any]) -> float | None:
        return level[f"{self.metric}_ms"][self.stat]


def parse_target(text: str) -> Target:
    """`ttft_p99<=500ms` (ms when no unit; `s` for seconds)."""
    found = _TARGET.match(text.lower())
    if not found:
        raise PerfInputError(f"--slo {text!r}: expected METRIC_STAT<=LIMIT, e.g. ttft_p99<=500ms")
    metric, stat, number, unit = found.groups()
    if metric not in METRICS:
        raise PerfInputError(f"--slo {text!r}: unknown metric {metric!r} (known: {', '.join(METRICS)})")
    if stat not in STATS:
        raise PerfInputError(f"--slo {text!r}: unknown statistic {stat!r} (known: {', '.join(STATS)})")
    try:
        limit = float(number) * (1000.0 if unit == "s" else 1.0)
    except ValueError:
        raise PerfInputError(f"--slo {text!r}: {number!r} is not a number") from None
    if not math.isfinite(limit) or limit <= 0:
        raise PerfInputError(f"--slo {text!r}: the limit must be a positive time")
    return Target(metric, STATS[stat], limit)


@dataclass
class SearchSettings:
    min_rate: float = 1.0
    max_rate: float = 1024.0
    precision: float = 0.05
    max_probes: int = 16
    requests: int = 100
    probe_s: float = 20.0

    def check(self) -> None:
        for name, value in (("--search-min-rate", self.min_rate), ("--search-max-rate", self.max_rate),
                            ("--search-precision", self.precision), ("--search-probe-s", self.probe_s)):
            if not math.isfinite(value) or value <= 0:
                raise PerfInputError(f"{name} must be a number > 0, got {value:g}")
        if self.max_rate < self.min_rate:
            raise PerfInputError("--search-max-rate must be at least --search-min-rate")
        if self.max_probes < 2 or self.requests < 1:
            raise PerfInputError("--search-max-probes must be >= 2 and --search-requests >= 1")

    def count(self, rate: float) -> int:
        """Requests of a probe at `rate`: enough for both the request floor and the time floor."""
        return max(self.requests, math.ceil(rate * self.probe_s))


def judge(level: dict[str, Any], targets: list[Target], span_s: float) -> tuple[bool, list[str]]:
    """(passed, reasons it did not) of one probe; see the module docstring for the rule."""
    reasons = []
    for target in targets:
        value = target.value(level)
        if value is None:
            reasons.append(f"{target.name}: no value")
        elif value > target.limit_ms:
            reasons.append(f"{target.name} {value:.4g} ms > {target.limit_ms:g} ms")
    requests = level["requests"]
    if requests["measured"] and requests["failed"] > MAX_ERROR_FRACTION * requests["measured"]:
        reasons.append(f"{requests['failed']} of {requests['measured']} requests failed")
    median = level["e2el_ms"]["median"]
    if median is not None and level["duration_s"] > (span_s + median / 1000) / STEADY:
        reasons.append(f"not steady: the level ran {level['duration_s']:.3g} s for {span_s:.3g} s of arrivals "
                       f"(the server fell behind)")
    return not reasons, reasons


@dataclass
class RateSearch:
    """The probes' rates, chosen one at a time from the verdicts so far."""

    settings: SearchSettings
    targets: list[Target]
    probes: list[dict[str, Any]] = field(default_factory=list)

    def best(self) -> float | None:
        passed = [p["rate"] for p in self.probes if p["passed"]]
        return max(passed) if passed else None

    def next_rate(self) -> float | None:
        s = self.settings
        if not self.probes:
            return s.min_rate
        if len(self.probes) >= s.max_probes:
            return None
        best = self.best()
        failed = [p["rate"] for p in self.probes if not p["passed"] and (best is None or p["rate"] > best)]
        if best is None:
            return None  # the lowest rate already misses
        if not failed:
            if best >= s.max_rate:
                return None
            return min(best * 2, s.max_rate)
        low_fail = min(failed)
        if (low_fail - best) / best <= s.precision:
            return None
        return math.sqrt(best * low_fail)  # bisection on a log scale: rates span orders of magnitude

    def record(self, rate: float, level: dict[str, Any], span_s: float) -> dict[str, Any]:
        passed, reasons = judge(level, self.targets, span_s)
        probe = {"rate": rate, "label": level["label"], "passed": passed, "reasons": reasons,
                 **{t.name: t.value(level) for t in self.targets}, "measured": level["requests"]["measured"]}
        self.probes.append(probe)
        return probe

    def result(self) -> dict[str, Any]:
        best = self.best()
        s = self.settings
        above = [p["rate"] for p in self.probes if not p["passed"] and best is not None and p["rate"] > best]
        if best is None:
            verdict = f"no sustainable rate: {s.min_rate:g}/s already misses the targets"
        elif not above:
            verdict = f"at least {best:.4g}/s (the highest rate tried passed)"
        else:
            verdict = f"{best:.4g}/s (the next rate tried, {min(above):.4g}/s, missed)"
        return {"targets": [{"name": t.name, "limit_ms": t.limit_ms} for t in self.targets],
                "max_sustainable_rate": best, "at_least": best is not None and not above, "verdict": verdict,
                "probes": self.probes, "settings": vars(s), "rule": RULE}


RULE = ("a probe passes when every target holds, at most 1% of its requests failed, and it was steady (its duration "
        "at most (arrival span + E2EL median) / 0.9); each probe sends max(--search-requests, rate x "
        "--search-probe-s) requests; rates double from --search-min-rate until one fails, then bisect (geometric "
        "mean) until within --search-precision")


def search_plans(search: RateSearch, options: Any, levels: list[dict[str, Any]]) -> Iterator[tuple[float, Any]]:
    """(rate, LevelPlan) of each probe in turn; the caller appends each probe's level to `levels` before asking
    for the next one, and the verdict is recorded here (in the level's `search` block too)."""
    from vlmkit.perf.schedule import Arrivals, LevelPlan

    k = options.warmup
    i = 0
    while True:
        rate = search.next_rate()
        if rate is None:
            return
        count = search.settings.count(rate)
        arrivals = Arrivals(rate, options.burstiness, options.seed + i, count, None)
        span_s = max(arrivals) / 1e9 if count > 1 else 0.0
        plan = LevelPlan(label=f"search {rate:.4g}/s", open_loop=True, slots=options.max_concurrency or 0,
                         warmup_ids=range(k), ids=range(k, k + count), arrivals=arrivals)
        before = len(levels)
        yield rate, plan
        if len(levels) == before:  # the level was not measured (cut short): no verdict
            return
        levels[-1]["search"] = search.record(rate, levels[-1], span_s)
        i += 1
