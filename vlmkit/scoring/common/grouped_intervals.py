"""Intervals of the Y/N headlines that are not a plain mean of rows (vlmkit.scoring.kinds.yorn hands the columns):
MME's sum of acc + acc+ clustered by image pair, HallusionBench's mean of aAcc, fAcc and qAcc bootstrapped by question
set, and POPE's F1 bootstrapped by row. Methods: vlmkit.scoring.common.intervals; docs/error_bars.md."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from vlmkit.scoring.common.intervals import Interval, cluster_codes, bootstrap, stratified_cluster_sum


def mme_interval(hits: np.ndarray, categories: Sequence[Any], images: Sequence[Any], counted: Collection[str],
                 metric: str = "Overall") -> Interval:
    """MME's `Overall` (points): per category c of n_c rows and m_c images, acc + acc+ = 100 * (mean of hits + share
    of images with every question right) = sum over its images g of t_g = 100 * (hits_g / n_c + all_right_g / m_c).
    The images are the clusters, the categories strata; only the `counted` categories (perception and reasoning)
    enter the sum."""
    y = np.asarray(hits, dtype=float)
    cats = np.asarray([str(c) for c in categories], dtype=object)
    keep = np.isin(cats, list(counted))
    y, cats = y[keep], cats[keep]
    pairs = np.asarray([f"{c}\x00{i}" for c, i in zip(cats, np.asarray(images, dtype=object)[keep])], dtype=object)
    codes, g = cluster_codes(pairs)
    hits_g = np.bincount(codes, weights=y, minlength=g)
    size_g = np.bincount(codes, minlength=g)
    all_right = (hits_g == size_g).astype(float)
    cat_of = np.empty(g, dtype=object)
    cat_of[codes] = cats
    rows_in = {c: int((cats == c).sum()) for c in set(cats)}
    images_in = {c: int((cat_of == c).sum()) for c in set(cats)}
    totals = np.array([100 * (hits_g[k] / rows_in[cat_of[k]] + all_right[k] / images_in[cat_of[k]]) for k in range(g)])
    return stratified_cluster_sum(totals, cat_of, metric, cluster_by="image", n=len(y))


def all_right_share(weights: np.ndarray, hits: np.ndarray, group: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """Per resample, the weighted share of groups whose rows are all right (each group inside one cluster)."""
    codes, g = cluster_codes(group)
    size = np.bincount(codes, minlength=g)
    all_right = (np.bincount(codes, weights=hits, minlength=g) == size).astype(float)
    cluster_of = np.empty(g, dtype=np.int64)
    cluster_of[codes] = cluster
    w = weights[:, cluster_of]
    return (w @ all_right) / w.sum(axis=1)


def hallusion_interval(hits: np.ndarray, sets: Sequence[Any], figures: Sequence[Any], questions: Sequence[Any],
                       estimate: float, metric: str = "Overall") -> Interval:
    """HallusionBench's `Overall` = 100 * mean(aAcc, fAcc, qAcc): a bootstrap that draws whole question sets (every
    figure group and question group lies inside one set, so resampled groups stay whole). `estimate` on the
    figure's scale (x100)."""
    y = np.asarray(hits, dtype=float)
    cluster, n_sets = cluster_codes(sets)
    fig = np.asarray(figures, dtype=object)
    que = np.asarray(questions, dtype=object)

    def statistic(w: np.ndarray) -> np.ndarray:
        rows = w[:, cluster]
        a_acc = (rows @ y) / rows.sum(axis=1)
        return (a_acc + all_right_share(w, y, fig, cluster) + all_right_share(w, y, que, cluster)) / 3

    return bootstrap(statistic, n_sets, metric, estimate / 100, n=len(y), cluster_by="question set", factor=100.0)


def f1_statistic(truth_yes: np.ndarray, said_yes: np.ndarray, copies: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """F1 (Yes positive, a fraction) under row draw counts; `copies`: how often each row counts (POPE counts a row
    once per category it lists). No true and no predicted Yes scores 0, as the figure does."""
    c = np.asarray(copies, dtype=float)
    t = np.asarray(truth_yes, dtype=float)
    p = np.asarray(said_yes, dtype=float)
    tp_row, fp_row, fn_row = c * t * p, c * (1 - t) * p, c * t * (1 - p)

    def statistic(w: np.ndarray) -> np.ndarray:
        tp, fp, fn = w @ tp_row, w @ fp_row, w @ fn_row
        denominator = 2 * tp + fp + fn
        return np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)

    return statistic


def f1_interval(truth_yes: np.ndarray, said_yes: np.ndarray, copies: np.ndarray, estimate: float,
                metric: str = "Overall") -> Interval:
    """POPE's F1 x100, bootstrapped by row (f1_statistic); `estimate` on the figure's scale."""
    statistic = f1_statistic(truth_yes, said_yes, copies)
    return bootstrap(statistic, len(np.asarray(copies)), metric, estimate / 100, factor=100.0)
