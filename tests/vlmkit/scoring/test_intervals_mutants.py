"""intervals.py piece by piece (mutation round 4): Wilson's formula written out here, the cluster-robust SE summed by
hand, the stratified sum, the resampling weights' properties and the bootstrap against a loop written in the test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlmkit.scoring.common import intervals as iv

Z = 1.959963984540054


def wilson_by_hand(right: int, n: int) -> tuple[float, float]:
    p = right / n
    denominator = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / denominator
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def test_constants() -> None:
    assert iv.Z95 == pytest.approx(1.959963984540054, abs=1e-15)
    assert (iv.CONFIDENCE, iv.RESAMPLES, iv.SEED) == (0.95, 2000, 0)
    assert iv.METHODS == ("wilson", "cluster_robust", "cluster_robust_sum", "bootstrap_percentile")


@pytest.mark.parametrize(("right", "n"), [(0, 1), (1, 1), (3, 7), (7, 7), (12, 40), (1, 2)])
def test_wilson_against_the_formula_written_out(right: int, n: int) -> None:
    hits = [1.0] * right + [0.0] * (n - right)
    ci = iv.wilson(hits, "Overall", factor=100.0, unit="pair")
    low, high = wilson_by_hand(right, n)
    assert ci.low == pytest.approx(100 * low, abs=1e-9) and ci.high == pytest.approx(100 * high, abs=1e-9)
    assert ci.estimate == pytest.approx(100 * right / n)
    se = 0.0 if n < 2 else math.sqrt(sum((h - right / n) ** 2 for h in hits) / (n - 1)) / math.sqrt(n)
    assert ci.se == pytest.approx(100 * se, abs=1e-12)
    assert (ci.method, ci.n, ci.unit, ci.metric, ci.confidence) == ("wilson", n, "pair", "Overall", 0.95)
    assert ci.clusters is None and ci.resamples is None and ci.seed is None and ci.cluster_by is None


def test_no_units_is_named() -> None:
    for call in (lambda: iv.wilson([], "Acc"), lambda: iv.cluster_mean([], [], "Acc"),
                 lambda: iv.bootstrap(lambda w: w.sum(axis=1), 0, "Acc", 0.0), lambda: iv.mean_interval([], "Acc")):
        with pytest.raises(ValueError, match=r"^interval of Acc: no units$"):
            call()


def test_half_width_is_the_larger_side() -> None:
    assert iv.Interval("m", 0.5, 0.1, 0.6, 0.0, "wilson", 3).half_width == pytest.approx(0.4)
    assert iv.Interval("m", 0.5, 0.45, 0.8, 0.0, "wilson", 3).half_width == pytest.approx(0.3)


def test_to_dict_lists_the_optional_fields_only_when_set() -> None:
    bare = iv.Interval("m", 1.0, 0.5, 1.5, 0.2, "wilson", 4)
    assert bare.to_dict() == {"metric": "m", "estimate": 1.0, "low": 0.5, "high": 1.5, "se": 0.2,
                              "confidence": 0.95, "method": "wilson", "n": 4, "unit": "row"}
    full = iv.Interval("m", 1.0, 0.5, 1.5, 0.2, "bootstrap_percentile", 4, "image", clusters=2, cluster_by="img",
                       resamples=10, seed=3)
    assert full.to_dict() == {"metric": "m", "estimate": 1.0, "low": 0.5, "high": 1.5, "se": 0.2,
                              "confidence": 0.95, "method": "bootstrap_percentile", "n": 4, "unit": "image",
                              "clusters": 2, "cluster_by": "img", "resamples": 10, "seed": 3}
    zero = iv.Interval("m", 1.0, 0.5, 1.5, 0.2, "x", 4, clusters=0, seed=0)
    assert zero.to_dict()["clusters"] == 0 and zero.to_dict()["seed"] == 0


def test_matches_tolerances() -> None:
    ci = iv.Interval("m", 50.0, 40.0, 60.0, 1.0, "wilson", 10)
    assert ci.matches(50.0) and ci.matches(50.0 + 1e-8) and not ci.matches(50.0 + 1e-6)
    at_zero = iv.Interval("m", 0.0, 0.0, 0.0, 0.0, "wilson", 10)
    assert at_zero.matches(1e-13) and not at_zero.matches(1e-11)


def test_sample_se_small_and_by_hand() -> None:
    assert iv.sample_se([]) == 0.0 and iv.sample_se([3.0]) == 0.0
    # 1, 2, 3, 6: mean 3, squares 4+1+0+9 = 14, SD^2 = 14/3, SE = sqrt(14/3)/2
    assert iv.sample_se([1, 2, 3, 6]) == pytest.approx(math.sqrt(14 / 3) / 2)
    assert iv.sample_se([1, 3]) == pytest.approx(1.0)  # SD sqrt(2), /sqrt(2)


def test_cluster_codes() -> None:
    codes, g = iv.cluster_codes(["b", "a", "b", 1, "1"])
    assert g == 3 and codes.tolist() == [2, 1, 2, 0, 0] and codes.dtype == np.int64
    codes, g = iv.cluster_codes([])
    assert g == 0 and len(codes) == 0


def test_cluster_robust_se_by_hand() -> None:
    # y = 1,0,1,1 in clusters a,a,b,c: mean 0.75; residual sums a: .25-.75 = -.5, b: .25, c: .25
    # SE^2 = 3/2 * (.25 + .0625 + .0625) / 16 = 1.5 * .375 / 16
    assert iv.cluster_robust_se([1, 0, 1, 1], ["a", "a", "b", "c"]) == pytest.approx(math.sqrt(1.5 * 0.375) / 4)
    assert iv.cluster_robust_se([1, 0, 1], ["a", "a", "a"]) == 0.0


def test_cluster_mean_clips_and_says_how() -> None:
    ci = iv.cluster_mean([1, 1, 1, 0], ["a", "a", "b", "c"], "Acc", factor=100.0, cluster_by="image")
    se = iv.cluster_robust_se([1, 1, 1, 0], ["a", "a", "b", "c"])
    assert ci.se == pytest.approx(100 * se) and ci.estimate == pytest.approx(75.0)
    assert ci.low == pytest.approx(100 * (0.75 - Z * se))
    assert ci.high == pytest.approx(100.0)  # 0.75 + 1.96 SE > 1: clipped
    assert (ci.method, ci.n, ci.clusters, ci.cluster_by) == ("cluster_robust", 4, 3, "image")
    low_side = iv.cluster_mean([0, 0, 0, 1], ["a", "a", "b", "c"], "Acc")
    assert low_side.low == 0.0 and low_side.high == pytest.approx(0.25 + Z * se)
    free = iv.cluster_mean([0, 0, 0, 1], ["a", "a", "b", "c"], "Acc", bounds=(-math.inf, math.inf))
    assert free.low == pytest.approx(0.25 - Z * se)


def test_stratified_cluster_sum_by_hand() -> None:
    # stratum x: totals 1, 3 (mean 2, squares 2, m/(m-1) = 2: 4); stratum y: 5 alone (no spread)
    ci = iv.stratified_cluster_sum([1.0, 3.0, 5.0], ["x", "x", "y"], "Overall", cluster_by="image", n=7)
    assert ci.estimate == 9.0 and ci.se == pytest.approx(2.0)
    assert ci.low == pytest.approx(9 - 2 * Z) and ci.high == pytest.approx(9 + 2 * Z)
    assert (ci.method, ci.n, ci.clusters, ci.cluster_by) == ("cluster_robust_sum", 7, 3, "image")
    # three totals 0, 3, 6 in one stratum: mean 3, squares 18, 3/2 * 18 = 27
    assert iv.stratified_cluster_sum([0, 3, 6], ["s"] * 3, "O").se == pytest.approx(math.sqrt(27))
    assert iv.stratified_cluster_sum([0, 3, 6], ["s"] * 3, "O").n == 3


def test_resample_weights_keep_sizes() -> None:
    rng = np.random.default_rng(5)
    w = iv.resample_weights(6, None, 40, rng)
    assert w.shape == (40, 6) and (w.sum(axis=1) == 6).all() and w.dtype == float
    assert len({tuple(r) for r in w}) > 1  # not one draw repeated
    strata = np.array([0, 0, 1, 1, 1, 2])
    ws = iv.resample_weights(6, strata, 40, np.random.default_rng(5))
    assert (ws[:, :2].sum(axis=1) == 2).all() and (ws[:, 2:5].sum(axis=1) == 3).all() and (ws[:, 5] == 1).all()
    assert (ws[:, 0] != 2).any() and (ws[:, 0] != 0).any()


def test_bootstrap_equals_a_loop_over_numpys_draws() -> None:
    y = np.array([0.2, 0.9, 0.4, 1.0, 0.0, 0.7, 0.3])
    ci = iv.bootstrap(lambda w: (w @ y) / w.sum(axis=1), len(y), "Score", float(y.mean()), factor=100.0,
                      resamples=300, seed=4)
    rng = np.random.default_rng(4)
    figures = []
    for _ in range(300):
        draws = rng.multinomial(7, [1 / 7] * 7)
        figures.append(float((draws * y).sum() / 7))
    assert ci.low == pytest.approx(100 * np.percentile(figures, 2.5))
    assert ci.high == pytest.approx(100 * np.percentile(figures, 97.5))
    assert ci.se == pytest.approx(100 * np.std(figures, ddof=1))
    assert ci.estimate == pytest.approx(100 * y.mean())
    assert (ci.method, ci.n, ci.resamples, ci.seed, ci.clusters, ci.cluster_by) == (
        "bootstrap_percentile", 7, 300, 4, None, None)


def test_bootstrap_in_small_chunks_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    y = np.array([0.2, 0.9, 0.4, 1.0, 0.0])
    whole = iv.bootstrap(lambda w: (w @ y) / w.sum(axis=1), 5, "S", 0.5, resamples=23, seed=1, n=9,
                         cluster_by="set")
    monkeypatch.setattr(iv, "_CHUNK_CELLS", 20)  # 4 resamples at a time, the last chunk 3
    chunked = iv.bootstrap(lambda w: (w @ y) / w.sum(axis=1), 5, "S", 0.5, resamples=23, seed=1, n=9,
                           cluster_by="set")
    assert (chunked.low, chunked.high, chunked.se) == (whole.low, whole.high, whole.se)
    assert (whole.n, whole.clusters, whole.cluster_by, whole.resamples) == (9, 5, "set", 23)
    seen: list[int] = []
    iv.bootstrap(lambda w: seen.append(len(w)) or w.sum(axis=1), 5, "S", 0.5, resamples=23)
    assert seen == [4, 4, 4, 4, 4, 3]


def test_bootstrap_of_one_resample_has_no_se() -> None:
    ci = iv.bootstrap(lambda w: w[:, 0], 3, "S", 0.5, resamples=1)
    assert ci.se == 0.0


def test_is_binary() -> None:
    assert iv.is_binary([0, 1, 1.0]) and iv.is_binary([])
    assert not iv.is_binary([0, 0.5]) and not iv.is_binary([2])


def test_mean_interval_picks_its_method() -> None:
    assert iv.mean_interval([1, 0, 1], "A", factor=100.0).method == "wilson"
    assert iv.mean_interval([1, 0, 1], "A", factor=100.0).estimate == pytest.approx(200 / 3)
    graded = iv.mean_interval([0.5, 0.25, 1.0], "A", factor=2.0)
    assert graded.method == "bootstrap_percentile" and graded.estimate == pytest.approx(2 * 1.75 / 3)
    assert graded.resamples == 2000 and graded.seed == 0
    # clusters that repeat: cluster-robust, clipped to 0..1 for values inside it
    clustered = iv.mean_interval([1, 1, 1, 0], "A", clusters=["a", "a", "b", "c"], cluster_by="image")
    assert clustered.method == "cluster_robust" and clustered.high == 1.0 and clustered.cluster_by == "image"
    # one row per cluster: no clustering, Wilson
    assert iv.mean_interval([1, 0], "A", clusters=["a", "b"]).method == "wilson"
    # values beyond 0..1: not clipped
    wide = iv.mean_interval([3.0, 3.0, 3.0, -1.0], "A", clusters=["a", "a", "b", "c"])
    se = iv.cluster_robust_se([3.0, 3.0, 3.0, -1.0], ["a", "a", "b", "c"])
    assert wide.high == pytest.approx(2.0 + Z * se) and wide.low == pytest.approx(2.0 - Z * se)
    assert iv.mean_interval([1.0, 1.0, 0.0, 0.5], "A", clusters=["a", "a", "b", "c"]).high == 1.0
    edge = iv.mean_interval([0.0, 0.0, 1.0, 1.0], "A", clusters=["a", "a", "b", "c"])
    assert edge.low == 0.0


def test_stratum_mean_of_means_equals_a_loop() -> None:
    y = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    strata = ["a", "a", "a", "b", "b", "c", "c"]
    estimate = 100 * ((2 / 3) + 0 + 1) / 3
    ci = iv.stratum_mean_of_means(y, strata, "Avg", estimate, factor=100.0)
    assert ci.estimate == pytest.approx(estimate) and ci.method == "bootstrap_percentile" and ci.n == 7
    rng = np.random.default_rng(0)
    figures = []
    for _ in range(2000):
        w = np.zeros(7)
        for members in ([0, 1, 2], [3, 4], [5, 6]):
            w[members] = rng.multinomial(len(members), [1 / len(members)] * len(members))
        means = [(w[m] @ y[m]) / w[m].sum() for m in ([0, 1, 2], [3, 4], [5, 6])]
        figures.append(sum(means) / 3)
    assert ci.low == pytest.approx(100 * np.percentile(figures, 2.5))
    assert ci.high == pytest.approx(100 * np.percentile(figures, 97.5))


def test_object_typed_columns_give_the_same_intervals() -> None:
    """A pandas column of Python numbers under dtype object (what `.map` over mixed cells gives) is read as floats."""
    y = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    clusters = ["a", "a", "b", "c", "c", "d"]
    as_object = np.array(y, dtype=object)
    assert iv.sample_se(as_object) == pytest.approx(iv.sample_se(y))
    assert iv.cluster_robust_se(as_object, clusters) == pytest.approx(iv.cluster_robust_se(y, clusters))
    assert iv.is_binary(as_object)
    assert iv.wilson(as_object, "A") == iv.wilson(y, "A")
    assert iv.cluster_mean(as_object, clusters, "A").se == pytest.approx(iv.cluster_mean(y, clusters, "A").se)
    assert iv.mean_interval(as_object, "A", clusters=clusters).se == pytest.approx(
        iv.mean_interval(y, "A", clusters=clusters).se)
    totals = np.array([1.0, 3.0, 5.0], dtype=object)
    assert iv.stratified_cluster_sum(totals, ["x", "x", "y"], "O").se == pytest.approx(2.0)
    graded = np.array([0.5, 0.25, 1.0, 0.0], dtype=object)
    assert iv.mean_interval(graded, "A").low == pytest.approx(iv.mean_interval([0.5, 0.25, 1.0, 0.0], "A").low)
    assert iv.stratum_mean_of_means(graded, ["s", "s", "t", "t"], "A", 0.4375).high == pytest.approx(
        iv.stratum_mean_of_means([0.5, 0.25, 1.0, 0.0], ["s", "s", "t", "t"], "A", 0.4375).high)


def test_defaults_and_names_carried_through() -> None:
    assert iv.wilson([1, 0], "Acc").unit == "row"
    y = np.array([0.2, 0.9, 0.4])
    plain = iv.bootstrap(lambda w: (w @ y) / w.sum(axis=1), 3, "S", 0.5, resamples=20)
    assert plain.estimate == 0.5 and plain.low >= 0.2 and plain.high <= 0.9
    clustered = iv.cluster_mean([1, 1, 0], ["a", "a", "b"], "Acc")
    assert clustered.metric == "Acc"
    via_mean = iv.mean_interval([1, 1, 0], "Acc", factor=100.0, clusters=["a", "a", "b"])
    assert via_mean.metric == "Acc" and via_mean.estimate == pytest.approx(200 / 3)
    strata = iv.stratum_mean_of_means([1.0, 0.0, 1.0, 1.0], ["s", "s", "t", "t"], "Avg", 0.75)
    assert strata.metric == "Avg" and strata.estimate == pytest.approx(0.75)
    assert 0.0 <= strata.low <= strata.high <= 1.0


def test_two_clusters_have_a_spread() -> None:
    # y = 1, 0, 0 in a, a, b: mean 1/3; sums a: 2/3 - 1/3 = 1/3, b: -1/3; SE^2 = 2 * (2/9) / 9
    assert iv.cluster_robust_se([1, 0, 0], ["a", "a", "b"]) == pytest.approx(2 / 9)


def test_values_above_one_are_not_clipped_in_clusters() -> None:
    values = [1.5, 1.5, 0.0, 1.0]
    clusters = ["a", "a", "b", "c"]
    se = iv.cluster_robust_se(values, clusters)
    ci = iv.mean_interval(values, "A", clusters=clusters)
    assert ci.high == pytest.approx(1.0 + Z * se) and ci.high > 1.0


def test_one_unit_has_an_interval() -> None:
    assert iv.mean_interval([1.0], "A").method == "wilson"
    assert iv.mean_interval([0.5], "A").low == 0.5


def test_strata_variances_add() -> None:
    # x: 1, 3 (2 * 2 = 4); y: 0, 4, 8 (mean 4, squares 32, 3/2 * 32 = 48): SE^2 = 52
    ci = iv.stratified_cluster_sum([1.0, 3.0, 0.0, 4.0, 8.0], ["x", "x", "y", "y", "y"], "O")
    assert ci.se == pytest.approx(math.sqrt(52))
    # the first stratum last in order: still added
    ci = iv.stratified_cluster_sum([0.0, 4.0, 8.0, 1.0, 3.0], ["a", "a", "a", "b", "b"], "O")
    assert ci.se == pytest.approx(math.sqrt(52))


def test_two_resamples_have_a_standard_deviation() -> None:
    figures: list[np.ndarray] = []

    def statistic(w: np.ndarray) -> np.ndarray:
        out = w[:, 0] * 1.0
        figures.append(out)
        return out
    ci = iv.bootstrap(statistic, 4, "S", 1.0, resamples=2, seed=3)
    drawn = np.concatenate(figures)
    assert len(drawn) == 2 and ci.se == pytest.approx(float(np.std(drawn, ddof=1)))


def test_chunks_never_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(iv, "_CHUNK_CELLS", 3)
    sizes: list[int] = []
    iv.bootstrap(lambda w: sizes.append(len(w)) or w.sum(axis=1), 5, "S", 0.5, resamples=3)
    assert sizes == [1, 1, 1]  # 3 // 5 = 0 resamples a chunk: one at a time
    sizes.clear()
    iv.bootstrap(lambda w: sizes.append(len(w)) or w.sum(axis=1), 1, "S", 0.5, resamples=7)
    assert sizes == [3, 3, 1]  # one cluster: 3 // 1


def test_an_indicator_statistic_is_read_as_numbers() -> None:
    ci = iv.bootstrap(lambda w: w[:, 0] > 1, 3, "S", 0.5, resamples=200)
    assert ci.low == 0.0 and ci.high == 1.0


def test_all_right_wilson_ends_at_one_and_matches_scales() -> None:
    for n in (1, 3, 16, 40):  # at n = 16 and 40 the formula gives 1 + 2e-16 before the clip
        assert iv.wilson([1.0] * n, "A").high <= 1.0
    big = iv.Interval("m", 1e6, 0.0, 2e6, 1.0, "wilson", 1)
    assert big.matches(1e6 + 1e-4) and not big.matches(1e6 + 1e-2)
