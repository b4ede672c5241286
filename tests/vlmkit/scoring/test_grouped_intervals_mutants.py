"""grouped_intervals.py's figures (mutation round 4): MME's image totals summed by a loop written here, the names and
counts each interval carries, and properties of the F1 statistic (its value by hand, scale-free in the weights,
0 with nothing to count)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlmkit.scoring.common.grouped_intervals import all_right_share, f1_interval, f1_statistic, hallusion_interval, \
    mme_interval

Z = 1.959963984540054


def mme_by_hand(hits: list[int], categories: list[str], images: list[str], counted: set[str]) -> tuple[float, float]:
    """(sum, SE): per category, image totals 100 * (hits / rows + all right / images), the m/(m-1) spread."""
    total, variance = 0.0, 0.0
    for cat in sorted(counted):
        rows = [i for i, c in enumerate(categories) if c == cat]
        names = sorted({images[i] for i in rows})
        t = []
        for name in names:
            mine = [hits[i] for i in rows if images[i] == name]
            t.append(100 * (sum(mine) / len(rows) + (1.0 if all(mine) else 0.0) / len(names)))
        total += sum(t)
        if len(t) > 1:
            mean = sum(t) / len(t)
            variance += len(t) / (len(t) - 1) * sum((v - mean) ** 2 for v in t)
    return total, math.sqrt(variance)


def test_mme_two_categories_sharing_image_names_and_one_not_counted() -> None:
    hits = [1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1]
    categories = ["color"] * 4 + ["code"] * 6 + ["artwork"] * 2
    images = ["i1", "i1", "i2", "i2", "i1", "i1", "j2", "j2", "j3", "j3", "i1", "i1"]
    ci = mme_interval(np.array(hits, dtype=float), categories, images, ("color", "code"), metric="Perception")
    total, se = mme_by_hand(hits, categories, images, {"color", "code"})
    assert ci.estimate == pytest.approx(total) and ci.se == pytest.approx(se)
    assert (ci.low, ci.high) == pytest.approx((total - Z * se, total + Z * se))
    assert (ci.metric, ci.n, ci.clusters, ci.cluster_by) == ("Perception", 10, 5, "image")
    assert mme_interval(np.array(hits, dtype=float), categories, images, ("color", "code")).metric == "Overall"


def test_hallusion_names_and_scale() -> None:
    hits = np.array([1, 0, 1, 1, 1, 0, 0, 1.0])
    sets = ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"]
    ci = hallusion_interval(hits, sets, [f"{s}f" for s in sets], [f"{s}q{i % 2}" for i, s in enumerate(sets)], 41.5)
    assert (ci.metric, ci.n, ci.clusters, ci.cluster_by, ci.resamples) == ("Overall", 8, 4, "question set", 2000)
    assert ci.estimate == pytest.approx(41.5)
    assert 0.0 <= ci.low <= ci.high <= 100.0


def test_hallusion_takes_booleans_and_numbers_as_group_names() -> None:
    hits = [True, False, True, True, True, False, False, True]
    sets = [1, 1, 2, 2, 3, 3, 4, 4]
    figures = [10, 10, 20, 20, 30, 30, 40, 40]
    questions = [100, 101, 200, 201, 300, 301, 400, 401]
    a = hallusion_interval(np.array(hits), sets, figures, questions, 50.0)
    b = hallusion_interval(np.array(hits, dtype=float), [str(s) for s in sets], [str(f) for f in figures],
                           [str(q) for q in questions], 50.0)
    assert (a.low, a.high, a.se) == pytest.approx((b.low, b.high, b.se))


def test_all_right_share_weighted_by_hand() -> None:
    # groups: g0 rows 0, 1 (all right) in cluster 0; g1 rows 2, 3 (one wrong) in cluster 1; g2 row 4 (right) in 1
    hits = np.array([1.0, 1.0, 1.0, 0.0, 1.0])
    group = np.array(["g0", "g0", "g1", "g1", "g2"], dtype=object)
    cluster = np.array([0, 0, 1, 1, 1])
    w = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    # per resample: (w_c0 * 1 + w_c1 * (0 + 1)) / (w_c0 + 2 * w_c1)
    assert all_right_share(w, hits, group, cluster).tolist() == pytest.approx([2 / 3, 1.0, 0.5])


def test_f1_statistic_by_hand_and_as_booleans() -> None:
    truth = np.array([True, True, False, False, True])
    said = np.array([True, False, True, False, True])
    statistic = f1_statistic(truth, said, np.array([1, 1, 1, 1, 2]))
    # tp = 1 + 2 = 3, fp 1, fn 1: F1 = 6 / 8
    assert statistic(np.ones((1, 5)))[0] == pytest.approx(0.75)
    # weights 2 on row 1 (a miss): fn 2, F1 = 6 / 9
    assert statistic(np.array([[1.0, 2.0, 1.0, 1.0, 1.0]]))[0] == pytest.approx(6 / 9)


def test_f1_statistic_is_scale_free_and_zero_with_nothing_to_count() -> None:
    truth, said = np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0])
    statistic = f1_statistic(truth, said, np.ones(4))
    w = np.array([[1.0, 2.0, 0.0, 5.0], [3.0, 0.0, 1.0, 1.0], [2.0, 1.0, 1.0, 0.0]])
    assert statistic(w * 0.1) == pytest.approx(statistic(w)) and statistic(w * 7) == pytest.approx(statistic(w))
    # only true negatives drawn: no Yes anywhere, F1 0 (as the figure scores it)
    nothing = np.zeros((64, 4))
    nothing[:, 3] = np.arange(1, 65)
    assert statistic(nothing).tolist() == [0.0] * 64


def test_f1_interval_scale() -> None:
    truth, said = np.array([1, 1, 0, 0, 1, 0]), np.array([1, 0, 1, 0, 1, 0])
    ci = f1_interval(truth, said, np.ones(6), 200 / 3, metric="F1")
    assert ci.estimate == pytest.approx(200 / 3) and ci.metric == "F1" and 0 <= ci.low <= ci.high <= 100
