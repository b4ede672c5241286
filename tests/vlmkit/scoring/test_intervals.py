"""95% intervals of headline figures (vlmkit.scoring.common.intervals, grouped_intervals): values worked by hand, and
properties (the interval holds the figure and shrinks with n; the clustered SE is the plain one with one row per
cluster). scipy and statsmodels are not installed in this venv, so the checks against them are skipped."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vlmkit.scoring.common.grouped_intervals import f1_interval, f1_statistic, hallusion_interval, mme_interval
from vlmkit.scoring.common.intervals import (
    BOOTSTRAP,
    CLUSTER_ROBUST,
    CLUSTER_ROBUST_SUM,
    WILSON,
    Z95,
    bootstrap,
    cluster_mean,
    cluster_robust_se,
    mean_interval,
    sample_se,
    stratum_mean_of_means,
    weighted_mean,
    wilson,
)
from vlmkit.scoring.kinds.mcq import score_mcq
from vlmkit.scoring.kinds.mcq_reports import paired_report
from vlmkit.scoring.kinds.yorn import score_yorn


def test_wilson_61_of_100_by_hand() -> None:
    # p = 0.61, z^2 = 3.841459, z^2/n = 0.03841459
    # centre = (0.61 + 0.01920729) / 1.03841459 = 0.605931
    # half = 1.959964 / 1.03841459 * sqrt(0.61 * 0.39 / 100 + 3.841459 / 40000)
    #      = 1.887458 * sqrt(0.0023790 + 0.0000960) = 1.887458 * 0.0497497 = 0.093901
    ci = wilson([1] * 61 + [0] * 39, "Overall")
    assert ci.method == WILSON and ci.n == 100 and ci.estimate == pytest.approx(0.61)
    assert ci.low == pytest.approx(0.605931 - 0.093901, abs=2e-6)
    assert ci.high == pytest.approx(0.605931 + 0.093901, abs=2e-6)
    # the SE: sqrt(p (1 - p) / (n - 1)) = sqrt(0.2379 / 99) = 0.0490209
    assert ci.se == pytest.approx(0.0490209, abs=1e-6)


def test_wilson_none_right_is_not_a_point() -> None:
    # 0 of 10: the upper end is z^2 / (n + z^2) = 3.841459 / 13.841459 = 0.277533; mean +- 1.96 SE would give [0, 0]
    ci = wilson([0] * 10, "acc")
    assert ci.low == 0.0 and ci.high == pytest.approx(0.277533, abs=1e-6)


def test_wilson_on_the_percent_scale() -> None:
    ci = wilson([1] * 61 + [0] * 39, "Overall", factor=100.0)
    assert ci.estimate == pytest.approx(61.0) and ci.low == pytest.approx(51.2030, abs=1e-3)
    # Wilson leans towards 0.5: the low side is the longer one
    assert ci.to_dict()["method"] == "wilson" and ci.half_width == pytest.approx(61.0 - ci.low)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.93])
def test_interval_holds_the_figure_and_shrinks_with_n(p: float) -> None:
    widths = []
    for n in (20, 100, 1000):
        hits = np.zeros(n)
        hits[: round(p * n)] = 1
        for ci in (wilson(hits, "m"), cluster_mean(hits, np.arange(n) // 2, "m"),
                   mean_interval(hits * 0.5 + 0.25, "m")):
            assert ci.low <= ci.estimate <= ci.high
        widths.append(wilson(hits, "m").high - wilson(hits, "m").low)
    assert widths[0] > widths[1] > widths[2]


def test_clustered_se_by_hand() -> None:
    # mean 0.5; cluster sums of residuals: a 0.5+0.5 = 1, b -0.5-0.5 = -1, c 0.5-0.5 = 0; sum of squares 2
    # SE^2 = G/(G-1) * 2 / n^2 = 3/2 * 2 / 36 = 1/12; SE = 0.288675
    se = cluster_robust_se([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"])
    assert se == pytest.approx(math.sqrt(1 / 12))
    ci = cluster_mean([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"], "Overall")
    assert ci.method == CLUSTER_ROBUST and ci.clusters == 3
    assert ci.low == pytest.approx(max(0.0, 0.5 - Z95 * se)) and ci.high == pytest.approx(min(1.0, 0.5 + Z95 * se))


def test_clustered_se_is_the_plain_se_with_one_row_per_cluster() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        y = rng.random(37)
        assert cluster_robust_se(y, np.arange(37)) == pytest.approx(sample_se(y), rel=1e-12)
        assert sample_se(y) == pytest.approx(np.std(y, ddof=1) / math.sqrt(37))


def test_bootstrap_is_fixed_by_its_seed_and_says_so() -> None:
    y = np.linspace(0, 1, 50) ** 2
    one = mean_interval(y, "ANLS", factor=100.0)
    two = mean_interval(y, "ANLS", factor=100.0)
    assert one == two and one.method == BOOTSTRAP and one.resamples == 2000 and one.seed == 0
    assert one.low < one.estimate < one.high
    # the bootstrap SE of a mean is close to the sample SE (B = 2000: within 10%)
    assert one.se == pytest.approx(100 * sample_se(y), rel=0.1)


def test_bootstrap_statistic_sees_draw_counts() -> None:
    seen = []

    def statistic(w: np.ndarray) -> np.ndarray:
        seen.append(w)
        return weighted_mean(np.arange(4.0))(w)

    bootstrap(statistic, 4, "m", 1.5, resamples=30)
    draws = np.concatenate(seen)
    assert draws.shape == (30, 4) and (draws.sum(axis=1) == 4).all()


def test_mean_of_strata_with_no_spread_inside_is_exact() -> None:
    # every row of a stratum alike: every resample keeps each stratum's mean, so the interval is the figure
    hits = np.array([1, 1, 1, 0, 0, 1, 1])
    strata = ["a", "a", "a", "b", "b", "c", "c"]
    ci = stratum_mean_of_means(hits, strata, "Avg ACC", 100 * (1 + 0 + 1) / 3, factor=100.0)
    assert ci.low == pytest.approx(200 / 3) and ci.high == pytest.approx(200 / 3) and ci.se == pytest.approx(0)


def test_mme_sum_by_hand() -> None:
    # one category, images x (rows 1, 1) and y (rows 1, 0): acc 75 + acc+ 50 = 125
    # image totals t = 100 * (hits/4 + all_right/2): x 100*(2/4 + 1/2) = 100, y 100*(1/4 + 0) = 25
    # var = m/(m-1) * sum (t - 62.5)^2 = 2 * (37.5^2 + 37.5^2) = 5625, SE = 75
    ci = mme_interval(np.array([1, 1, 1, 0.0]), ["OCR"] * 4, ["x", "x", "y", "y"], ("OCR",))
    assert ci.method == CLUSTER_ROBUST_SUM and ci.estimate == pytest.approx(125) and ci.se == pytest.approx(75)
    assert ci.low == pytest.approx(125 - Z95 * 75) and ci.clusters == 2 and ci.n == 4


def test_f1_statistic_by_hand() -> None:
    # truth Y Y N N, said Y N Y N: tp 1, fp 1, fn 1, F1 = 2/(2+1+1) = 0.5
    truth, said = np.array([1, 1, 0, 0]), np.array([1, 0, 1, 0])
    ci = f1_interval(truth, said, np.ones(4), 50.0)
    assert ci.estimate == 50.0 and ci.low <= 50.0 <= ci.high and 0 <= ci.low and ci.high <= 100


def test_pope_f1_statistic_is_the_scorers_f1_with_rows_listing_two_categories() -> None:
    # rows: (target, answer, categories) -> exploded: Y/Y x2 (a, b), Y/N a, N/Y b, N/N a
    # tp 2, fn 1, fp 1: F1 = 4 / (4 + 1 + 1) = 2/3
    rows = [("Yes", "Yes", "a, b"), ("Yes", "No", "a"), ("No", "Yes", "b"), ("No", "No", "a")]
    df = pd.DataFrame([{"index": i, "answer": t, "prediction": p, "category": c} for i, (t, p, c) in enumerate(rows)])
    result = score_yorn(df, "pope")
    assert result.primary_value == pytest.approx(200 / 3)
    statistic = f1_statistic(np.array([1, 1, 0, 0]), np.array([1, 0, 1, 0]), np.array([2, 1, 1, 1]))
    assert statistic(np.ones((1, 4)))[0] == pytest.approx(2 / 3)
    assert result.primary_interval is not None and result.primary_interval.method == BOOTSTRAP


def test_hallusion_all_right_is_exact() -> None:
    figures = ["s1f1", "s1f1", "s1f2", "s2f1", "s2f1", "s2f2"]  # every group inside its set, as the scorer builds them
    questions = ["s1q1", "s1q2", "s1q1", "s2q1", "s2q2", "s2q1"]
    ci = hallusion_interval(np.ones(6), ["s1"] * 3 + ["s2"] * 3, figures, questions, 100.0)
    assert ci.low == ci.high == 100.0 and ci.cluster_by == "question set" and ci.clusters == 2


def test_hallusion_bootstrap_matches_a_loop_over_sets() -> None:
    # a second, plain implementation: draw sets with the same generator, recompute the three figures from the rows
    hits = np.array([1, 0, 1, 1, 1, 0, 0, 1.0])
    sets = ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"]
    figures = [f"{s}f" for s in sets]
    questions = [f"{s}q{i % 2}" for i, s in enumerate(sets)]
    ci = hallusion_interval(hits, sets, figures, questions, 0.0, metric="Overall")
    rng = np.random.default_rng(0)
    names = sorted(set(sets))
    values = []
    for counts in rng.multinomial(4, [0.25] * 4, size=2000):
        rows = [i for s, c in zip(names, counts) for _ in range(c) for i, t in enumerate(sets) if t == s]
        a_acc = np.mean(hits[rows])
        def share(groups: list[str]) -> float:
            drawn = [g for s, c in zip(names, counts) for _ in range(c)
                     for g in sorted({groups[i] for i in range(8) if sets[i] == s})]
            return float(np.mean([hits[[i for i in range(8) if groups[i] == g]].all() for g in drawn]))

        f_acc, q_acc = share(figures), share(questions)
        values.append(100 * (a_acc + f_acc + q_acc) / 3)
    assert (ci.low, ci.high) == pytest.approx(tuple(np.percentile(values, [2.5, 97.5])))


def test_scorers_write_the_interval_into_results() -> None:
    rows = []
    for q in range(6):
        for rot in range(2):  # circular: group q, two rotations
            hit = q < 3 or (q == 3 and rot == 0)
            rows.append({"index": q + rot * 1_000_000, "prediction": "A" if hit else "B", "answer": "A",
                         "A": "cat", "B": "dog"})
    result = score_mcq(pd.DataFrame(rows), circular=True)
    block = result.to_dict()["interval"]
    assert block["unit"] == "circular group" and block["n"] == 6 and block["method"] == "wilson"
    assert block["estimate"] == pytest.approx(0.5) == result.primary_value  # groups 0..2 right, group 3 half
    result.metrics[result.primary] = 0.9  # a later step changed the headline: the interval is no longer written
    assert result.to_dict()["interval"] is None


def test_mme_scorer_interval_is_about_its_overall() -> None:
    rows = [{"index": i, "prediction": p, "answer": "Yes", "category": "OCR", "image_path": f"im{i // 2}.jpg"}
            for i, p in enumerate(["Yes", "Yes", "Yes", "No"])]
    result = score_yorn(pd.DataFrame(rows), "mme")
    ci = result.primary_interval
    assert ci is not None and ci.estimate == pytest.approx(125) and ci.se == pytest.approx(75)


def test_against_statsmodels_where_installed() -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion", reason="statsmodels is not in this venv")
    low, high = proportion.proportion_confint(61, 100, alpha=0.05, method="wilson")
    ci = wilson([1] * 61 + [0] * 39, "m")
    assert (ci.low, ci.high) == pytest.approx((low, high))


def test_mmvp_interval_is_over_pairs() -> None:
    preds = ["A", "A", "A", "B"]  # pair 0 both right, pair 1 one right: Overall 0.5 over 2 pairs
    df = pd.DataFrame([{"index": i, "question": f"q{i // 2}", "prediction": p, "answer": "A", "A": "x", "B": "y"}
                       for i, p in enumerate(preds)])
    result = paired_report(score_mcq(df, circular=False), df)
    ci = result.primary_interval
    assert ci is not None and ci.unit == "question pair" and ci.n == 2 and ci == wilson([1, 0], "Overall",
                                                                                        unit="question pair")


def test_ocrbench_final_score_interval_is_on_its_count() -> None:
    from vlmkit.scoring.kinds.vqa import score_vqa

    df = pd.DataFrame([{"index": i, "prediction": "cat" if i < 3 else "dog", "answer": "cat",
                        "category": "Regular Text Recognition"} for i in range(4)])
    result = score_vqa(df, "ocrbench")
    ci = result.primary_interval
    expected = wilson([1, 1, 1, 0], "Final Score")
    assert ci is not None and ci.estimate == 3 and ci.low == pytest.approx(4 * expected.low)
