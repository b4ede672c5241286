"""Percentiles of a stream of latencies in bounded memory: exact while the stream is short, then an HDR-style
log-linear histogram.

A `Digest` keeps its values (ms) until it holds `EXACT_LIMIT` of them; its statistics are then numpy's, exactly
(linear interpolation between order statistics). Past that it folds them, and every later batch of `EXACT_LIMIT`, into
a histogram of integer nanoseconds: unit-wide buckets below 2**(SUB_BITS+1) ns, above that 2**SUB_BITS buckets per
power of two (the layout of HdrHistogram with SUB_BITS significant bits). A bucket is at most 1/2**SUB_BITS of its
lower bound wide, so a percentile read from it (the bucket's middle, clamped to the exact min and max, interpolated
like numpy between the two order statistics around the rank) is within ERROR_BOUND of the exact figure, relatively,
plus one nanosecond: with SUB_BITS = 8, 0.2 %. Mean, max and n stay exact. Values above `TOP_NS` (about 9.8 hours)
share the last bucket.

Why not a library: hdrhistogram (PyPI) and ddsketch record one value per Python call, about a microsecond each,
which on the inter-token gaps of a fast stream costs as much as parsing the chunks; here a batch is bucketed by
numpy in one pass. Digests merge exactly (bucket counts add), so the processes of a `--workers` run send their
digests, not their values.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any

import numpy as np

SUB_BITS = 8
EXACT_LIMIT = 32_768  # values kept as they are: exact figures up to this many, and the batch size after
TOP_NS = (1 << 45) - 1
ERROR_BOUND = 1.0 / (1 << (SUB_BITS + 1))  # relative, plus 1 ns
_UNIT = 1 << (SUB_BITS + 1)  # below this, one bucket per nanosecond
_BUCKETS = (45 - SUB_BITS) * (1 << SUB_BITS) + (1 << SUB_BITS)
STATS = ("mean", "median", "p90", "p95", "p99", "max")
PERCENTS = (50.0, 90.0, 95.0, 99.0)


def bucket_of(ns: np.ndarray) -> np.ndarray:
    """The bucket index of each non-negative integer value (int64 array)."""
    ns = np.clip(ns, 0, TOP_NS)
    _, exp = np.frexp(ns.astype(np.float64))  # exp = bit length for 0 < v < 2**53
    shift = np.maximum(exp.astype(np.int64) - 1 - SUB_BITS, 0)
    return np.where(ns < _UNIT, ns, (shift << SUB_BITS) + (ns >> shift))


def bucket_bounds(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lowest, highest) integer value of each bucket."""
    index = np.asarray(index, dtype=np.int64)
    shift = np.maximum((index >> SUB_BITS) - 1, 0)
    low = np.where(index < _UNIT, index, (index - (shift << SUB_BITS)) << shift)
    high = np.where(index < _UNIT, index, low + (np.int64(1) << shift) - 1)
    return low, high


class Digest:
    """Count, sum, max and percentiles of non-negative values in ms; see the module docstring for the bound."""

    __slots__ = ("n", "total", "top", "bottom", "values", "counts")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.top = float("-inf")
        self.bottom = float("inf")
        self.values = array("d")  # not yet folded (all of them while `counts` is None: the exact figures)
        self.counts: np.ndarray | None = None  # the histogram, once the values outgrew EXACT_LIMIT

    @property
    def exact(self) -> bool:
        return self.counts is None

    def add(self, value: float) -> None:
        self.values.append(value)
        if len(self.values) >= EXACT_LIMIT:
            self._fold()

    def extend(self, values: Iterable[float]) -> None:
        self.values.extend(values)
        if len(self.values) >= EXACT_LIMIT:
            self._fold()

    def _fold(self) -> None:
        """Move the kept values into the histogram (n, total, top, bottom counted here, once per value)."""
        if not self.values:
            return
        arr = np.frombuffer(self.values, dtype=np.float64)
        self.n += arr.size
        self.total += float(arr.sum())
        self.top = max(self.top, float(arr.max()))
        self.bottom = min(self.bottom, float(arr.min()))
        if self.counts is None:
            self.counts = np.zeros(_BUCKETS, dtype=np.int64)
        ns = np.rint(np.maximum(arr, 0.0) * 1e6).astype(np.int64)
        self.counts += np.bincount(bucket_of(ns), minlength=_BUCKETS)
        self.values = array("d")

    def merge(self, other: "Digest") -> None:
        """Add another digest's values (exact while both together stay short)."""
        if other.counts is not None or self.counts is not None or len(self.values) + len(other.values) >= EXACT_LIMIT:
            self._fold()
            if self.counts is None:
                self.counts = np.zeros(_BUCKETS, dtype=np.int64)
            if other.counts is not None:
                self.counts += other.counts
                self.n += other.n
                self.total += other.total
                self.top = max(self.top, other.top)
                self.bottom = min(self.bottom, other.bottom)
            self.values.extend(other.values)
            self._fold()
        else:
            self.values.extend(other.values)

    def count(self) -> int:
        return self.n + len(self.values)

    def stats(self) -> dict[str, float | int | None]:
        """n, mean, median, p90, p95, p99, max (as vlmkit.perf.metrics.stats defines them)."""
        if self.exact:
            return exact_stats(np.frombuffer(self.values, dtype=np.float64))
        self._fold()
        assert self.counts is not None
        if self.n == 0:
            return {"n": 0, **{s: None for s in STATS}}
        p50, p90, p95, p99 = (self.percentile(p) for p in PERCENTS)
        return {"n": self.n, "mean": self.total / self.n, "median": p50, "p90": p90, "p95": p95, "p99": p99,
                "max": self.top}

    def percentile(self, p: float) -> float:
        """The p-th percentile from the histogram (after _fold), in ms."""
        assert self.counts is not None
        cumulative = np.cumsum(self.counts)
        rank = p / 100.0 * (self.n - 1)
        lo = int(np.floor(rank))
        hi = min(lo + 1, self.n - 1)
        lo_value, hi_value = (self._order_statistic(cumulative, k) for k in (lo, hi))
        return lo_value + (hi_value - lo_value) * (rank - lo)

    def _order_statistic(self, cumulative: np.ndarray, k: int) -> float:
        """The k-th smallest value (0-based), as the middle of its bucket clamped to [min, max], in ms."""
        index = int(np.searchsorted(cumulative, k, side="right"))
        low, high = bucket_bounds(np.array([index]))
        middle = (float(low[0]) + float(high[0])) / 2 / 1e6
        return min(max(middle, self.bottom), self.top)

    def cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """(values in ms, fraction of values <= each) for a CDF plot: every value while exact, else one point per
        non-empty bucket (its upper bound)."""
        if self.exact:
            x = np.sort(np.frombuffer(self.values, dtype=np.float64))
            return x, np.arange(1, x.size + 1) / max(x.size, 1)
        self._fold()
        assert self.counts is not None
        used = np.nonzero(self.counts)[0]
        _, high = bucket_bounds(used)
        cumulative = np.cumsum(self.counts[used])
        return np.minimum(high / 1e6, self.top), cumulative / max(self.n, 1)

    def nbytes(self) -> int:
        """Memory held by the values and the histogram (for tests and benchmarks)."""
        return self.values.buffer_info()[1] * self.values.itemsize + (0 if self.counts is None else self.counts.nbytes)

    def __getstate__(self) -> dict[str, Any]:
        return {s: getattr(self, s) for s in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            setattr(self, key, value)


def exact_stats(arr: np.ndarray) -> dict[str, float | int | None]:
    """The statistics of every value, exactly (numpy's linear interpolation between order statistics)."""
    if arr.size == 0:
        return {"n": 0, **{s: None for s in STATS}}
    p50, p90, p95, p99 = np.percentile(arr, PERCENTS)
    return {
        "n": int(arr.size), "mean": float(arr.mean()), "median": float(p50), "p90": float(p90),
        "p95": float(p95), "p99": float(p99), "max": float(arr.max()),
    }
