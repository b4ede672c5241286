"""95% intervals and standard errors of a headline figure, each computed the way its metric calls for.

Methods (the name is written into results.json `scoring.interval.method`; docs/error_bars.md works an example of each):
- `wilson`: a mean of independent 0/1 hits (accuracy over rows, or over circular groups / MMVP pairs, each one
  0/1 unit). The Wilson score interval keeps its coverage near 0 and 1 and at small n, where mean +- 1.96 SE can
  leave [0, 1] or collapse to a point (0 of 20 right gives [0, 0]). The standard error beside it is the sample SE
  of the mean, sqrt(p(1-p)/(n-1)) (the SD with n-1, as lm-evaluation-harness reports `stderr`).
- `cluster_robust`: a mean over rows that come in dependent clusters (questions sharing an image or a question
  group): the cluster-robust (CR1) SE of the mean, SE^2 = G/(G-1) * sum_g (sum_{i in g} (y_i - mean))^2 / n^2 over
  G clusters and n rows, and mean +- 1.96 SE clipped to the metric's range. With one row per cluster it is the
  sample SE above.
- `cluster_robust_sum`: MME's score, a sum over categories of acc + acc+ (x100), both read per image pair: each
  image's share of its category's score is one cluster total; the variance of a category's score is
  m/(m-1) * sum_g (t_g - mean_t)^2 over its m images, categories add.
- `bootstrap_percentile`: where no closed form fits (CIDEr and ANLS means, judge scores, F1, averages of category
  or setting accuracies): B resamples (RESAMPLES, seed SEED, numpy's PCG64), clusters resampled where rows cluster
  and within strata (categories, settings) where the figure averages strata, so none goes empty; the interval is the
  2.5 and 97.5 percentiles of the resampled figure, the SE their standard deviation (n-1).

Every function works on the metric's unit scale (0..1 for a mean of hits) and takes `factor`, what the metric
multiplies it by (1 for a fraction, 100 for percent, n for OCRBench's count), so the interval is on the figure's
own scale (vlmkit.scoring.scales). numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # the 97.5% point of the standard normal
CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 0
_CHUNK_CELLS = 4_000_000  # resamples x clusters held at once (32 MB of float64)

WILSON = "wilson"
CLUSTER_ROBUST = "cluster_robust"
CLUSTER_ROBUST_SUM = "cluster_robust_sum"
BOOTSTRAP = "bootstrap_percentile"
METHODS = (WILSON, CLUSTER_ROBUST, CLUSTER_ROBUST_SUM, BOOTSTRAP)


@dataclass(frozen=True)
class Interval:
    """A 95% interval of one metric, on the metric's own scale."""

    metric: str
    estimate: float  # the figure itself (results.json writes the interval only when it equals the metric's value)
    low: float
    high: float
    se: float
    method: str  # one of METHODS
    n: int  # the units averaged (rows, circular groups, pairs)
    unit: str = "row"  # what one of the n is: "row", "circular group" (all rotations right), "question pair"
    clusters: int | None = None  # clusters resampled or summed over, where rows cluster
    cluster_by: str | None = None  # what a cluster is ("image pair", "question group", ...)
    resamples: int | None = None  # bootstrap only
    seed: int | None = None  # bootstrap only
    confidence: float = CONFIDENCE

    @property
    def half_width(self) -> float:
        """The larger distance from the figure to an end (the `+-` a table shows)."""
        return max(self.high - self.estimate, self.estimate - self.low)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metric": self.metric, "estimate": self.estimate, "low": self.low, "high": self.high, "se": self.se,
            "confidence": self.confidence, "method": self.method, "n": self.n, "unit": self.unit,
        }  # fmt: skip
        for key in ("clusters", "cluster_by", "resamples", "seed"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    def matches(self, value: float) -> bool:
        """Whether this interval is about `value` (a scorer that rewrites its figures leaves a stale one behind)."""
        return math.isclose(self.estimate, value, rel_tol=1e-9, abs_tol=1e-12)


def _scaled(metric: str, estimate: float, low: float, high: float, se: float, factor: float, **extra: Any) -> Interval:
    return Interval(metric, estimate * factor, low * factor, high * factor, se * factor, **extra)


def sample_se(values: Sequence[float] | np.ndarray) -> float:
    """The standard error of a mean: SD (n-1) / sqrt(n); 0 for fewer than 2 values."""
    y = np.asarray(values, dtype=float)
    if len(y) < 2:
        return 0.0
    return float(y.std(ddof=1) / math.sqrt(len(y)))


def wilson(hits: Sequence[float] | np.ndarray, metric: str, factor: float = 1.0, unit: str = "row") -> Interval:
    """The Wilson score interval of a mean of 0/1 hits (module docstring)."""
    y = np.asarray(hits, dtype=float)
    n = len(y)
    if n == 0:
        raise ValueError(f"interval of {metric}: no units")
    p = float(y.mean())
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    return _scaled(metric, p, low, high, sample_se(y), factor, method=WILSON, n=n, unit=unit)


def cluster_codes(labels: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, int]:
    """Each label's cluster number (0..G-1) and G."""
    _, codes = np.unique(np.asarray([str(v) for v in labels], dtype=object), return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if len(codes) else 0


def cluster_robust_se(values: Sequence[float] | np.ndarray, clusters: Sequence[Any] | np.ndarray) -> float:
    """The CR1 cluster-robust standard error of the mean of `values` (module docstring); 0 for one cluster."""
    y = np.asarray(values, dtype=float)
    codes, g = cluster_codes(clusters)
    if g < 2:
        return 0.0
    totals = np.bincount(codes, weights=y - y.mean(), minlength=g)
    return float(math.sqrt(g / (g - 1) * float((totals**2).sum())) / len(y))


def cluster_mean(
    values: Sequence[float] | np.ndarray, clusters: Sequence[Any] | np.ndarray, metric: str, *, factor: float = 1.0,
    bounds: tuple[float, float] = (0.0, 1.0), cluster_by: str | None = None,
) -> Interval:  # fmt: skip
    """Mean +- 1.96 cluster-robust SE, clipped to `bounds` (on the unit scale)."""
    y = np.asarray(values, dtype=float)
    if len(y) == 0:
        raise ValueError(f"interval of {metric}: no units")
    mean = float(y.mean())
    se = cluster_robust_se(y, clusters)
    _, g = cluster_codes(clusters)
    low, high = max(bounds[0], mean - Z95 * se), min(bounds[1], mean + Z95 * se)
    return _scaled(metric, mean, low, high, se, factor, method=CLUSTER_ROBUST, n=len(y), clusters=g,
                   cluster_by=cluster_by)


def stratified_cluster_sum(
    totals: Sequence[float] | np.ndarray, strata: Sequence[Any] | np.ndarray, metric: str, *,
    cluster_by: str | None = None, n: int | None = None,
) -> Interval:  # fmt: skip
    """A figure that is a sum of cluster totals (each cluster inside one stratum): its SE adds, over strata, the
    m/(m-1)-corrected spread of the stratum's m totals; the interval is the sum +- 1.96 SE, not clipped."""
    t = np.asarray(totals, dtype=float)
    codes, k = cluster_codes(strata)
    variance = 0.0
    for s in range(k):
        part = t[codes == s]
        m = len(part)
        if m > 1:
            variance += m / (m - 1) * float(((part - part.mean()) ** 2).sum())
    total, se = float(t.sum()), math.sqrt(variance)
    return Interval(metric, total, total - Z95 * se, total + Z95 * se, se, CLUSTER_ROBUST_SUM,
                    n if n is not None else len(t), clusters=len(t), cluster_by=cluster_by)


def resample_weights(
    n_clusters: int, strata: np.ndarray | None, count: int, rng: np.random.Generator
) -> np.ndarray:
    """(count, n_clusters) draw counts: each resample draws every stratum's clusters with replacement, as many as it
    holds (one stratum when `strata` is None)."""
    if strata is None:
        return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=count).astype(float)
    out = np.zeros((count, n_clusters))
    for s in np.unique(strata):
        members = np.flatnonzero(strata == s)
        draws = rng.multinomial(len(members), np.full(len(members), 1.0 / len(members)), size=count)
        out[:, members] = draws
    return out


def bootstrap(
    statistic: Callable[[np.ndarray], np.ndarray], n_clusters: int, metric: str, estimate: float, *,
    strata: Sequence[Any] | np.ndarray | None = None, n: int | None = None, cluster_by: str | None = None,
    factor: float = 1.0, resamples: int = RESAMPLES, seed: int = SEED,
) -> Interval:  # fmt: skip
    """Percentile bootstrap: `statistic` maps a (B, n_clusters) array of draw counts (how often each cluster was drawn
    in each resample) to the B resampled figures; `strata` (one label per cluster) keeps each stratum's size."""
    if n_clusters == 0:
        raise ValueError(f"interval of {metric}: no units")
    rng = np.random.default_rng(seed)
    codes = cluster_codes(strata)[0] if strata is not None else None
    chunk = max(1, _CHUNK_CELLS // max(1, n_clusters))
    values = []
    for start in range(0, resamples, chunk):
        weights = resample_weights(n_clusters, codes, min(chunk, resamples - start), rng)
        values.append(np.asarray(statistic(weights), dtype=float))
    figures = np.concatenate(values)
    low, high = np.percentile(figures, [2.5, 97.5])
    se = float(figures.std(ddof=1)) if len(figures) > 1 else 0.0
    return _scaled(metric, estimate, float(low), float(high), se, factor, method=BOOTSTRAP,
                   n=n if n is not None else n_clusters, clusters=n_clusters if cluster_by else None,
                   cluster_by=cluster_by, resamples=resamples, seed=seed)


def weighted_mean(values: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The bootstrap statistic of a plain mean over rows (one cluster each)."""
    y = np.asarray(values, dtype=float)
    return lambda w: (w @ y) / w.sum(axis=1)


def is_binary(values: Sequence[float] | np.ndarray) -> bool:
    y = np.asarray(values, dtype=float)
    return bool(np.isin(y, (0.0, 1.0)).all())


def mean_interval(
    values: Sequence[float] | np.ndarray, metric: str, *, factor: float = 1.0,
    clusters: Sequence[Any] | np.ndarray | None = None, cluster_by: str | None = None,
) -> Interval:  # fmt: skip
    """The interval of a mean over rows: Wilson for 0/1 hits, the cluster-robust SE where rows share a cluster, a
    bootstrap for graded scores (ANLS, VQA score, judge marks). `values` on the unit scale."""
    y = np.asarray(values, dtype=float)
    if len(y) == 0:
        raise ValueError(f"interval of {metric}: no units")
    if clusters is not None and cluster_codes(clusters)[1] < len(y):
        bounds = (0.0, 1.0) if bool(((y >= 0) & (y <= 1)).all()) else (-math.inf, math.inf)
        return cluster_mean(y, clusters, metric, factor=factor, bounds=bounds, cluster_by=cluster_by)
    if is_binary(y):
        return wilson(y, metric, factor)
    return bootstrap(weighted_mean(y), len(y), metric, float(y.mean()), factor=factor)


def stratum_mean_of_means(
    values: Sequence[float] | np.ndarray, strata: Sequence[Any] | np.ndarray, metric: str, estimate: float, *,
    factor: float = 1.0,
) -> Interval:  # fmt: skip
    """Bootstrap of the unweighted mean of per-stratum means (AMBER's Avg ACC, MMSci's Avg), rows resampled within
    their stratum so every stratum keeps its size."""
    y = np.asarray(values, dtype=float)
    codes, k = cluster_codes(strata)
    member = np.zeros((len(y), k))
    member[np.arange(len(y)), codes] = 1.0

    def statistic(w: np.ndarray) -> np.ndarray:
        return ((w @ (member * y[:, None])) / (w @ member)).mean(axis=1)

    return bootstrap(statistic, len(y), metric, estimate / factor, strata=codes, factor=factor)
