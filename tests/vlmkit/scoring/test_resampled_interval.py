"""The rescored bootstrap (vlmkit.scoring.common.resampled_interval): a headline that is a sum, an F1 or a mean of
categories gets a 95% interval by re-running its own scorer on resampled tables. Checked against a second
implementation in this file that draws with the same seed logic (numpy default_rng(0), per resample and stratum
`integers(0, m, m)`) and computes the figure straight from the draws, and against properties: the interval holds the
figure, shrinks with more rows, repeats with the same seed. A judge is never asked again; failing resamples are
skipped and counted; a scorer that reads rows by their order gets no interval but a note."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.benchmarks.crpe import score_crpe
from vlmkit.scoring.benchmarks.matbench import score_matbench
from vlmkit.scoring.common.intervals import Interval
from vlmkit.scoring.common.resampled_interval import RESCORED, Settings, scored_with_interval
from vlmkit.scoring.result import EvalResult

POINTS = [3, 0, 5, 1, 0, 2, 4, 0, 1, 3, 0, 2]  # one row's points each; the headline is their sum


def sum_scorer(calls: list[pd.DataFrame] | None = None):
    """A headline that is a sum (points of the rows), with a per-row `score` whose mean is not the headline."""

    def score(table: pd.DataFrame, judge=None) -> EvalResult:
        if calls is not None:
            calls.append(table)
        points = table["points"].astype(float)
        per_sample = pd.DataFrame({"index": table["index"].tolist(), "score": points.tolist()})
        return EvalResult("toy_sum", {"Total": float(points.sum())}, "Total", per_sample)

    return score


def second_sum_bootstrap(points, resamples=200, seed=0):
    rng = np.random.default_rng(seed)
    y = np.asarray(points, dtype=float)
    figures = [y[rng.integers(0, len(y), size=len(y))].sum() for _ in range(resamples)]
    return np.percentile(figures, [2.5, 97.5]), float(np.std(figures, ddof=1))


def test_a_sum_matches_a_second_implementation_with_the_same_draws() -> None:
    table = pd.DataFrame({"index": range(len(POINTS)), "points": POINTS})
    result = scored_with_interval(sum_scorer(), table)
    ci = result.primary_interval
    (low, high), se = second_sum_bootstrap(POINTS)
    assert ci is not None and ci.method == RESCORED and ci.resamples == 200 and ci.seed == 0
    assert ci.estimate == sum(POINTS) and ci.n == len(POINTS) and ci.unit == "row" and ci.clusters is None
    assert (ci.low, ci.high, ci.se) == (pytest.approx(low), pytest.approx(high), pytest.approx(se))
    assert ci.low <= sum(POINTS) <= ci.high
    assert any("re-run on 200 resampled tables" in note for note in result.notes)
    assert result.to_dict()["interval"]["method"] == RESCORED  # results.json carries it


def test_resampled_tables_have_unique_fresh_indices_and_the_same_columns() -> None:
    calls: list[pd.DataFrame] = []
    table = pd.DataFrame({"index": [f"q{i}" for i in range(len(POINTS))], "points": POINTS, "extra": "x"})
    scored_with_interval(sum_scorer(calls), table)
    assert len(calls) == 1 + 3 + 200  # the scoring, the three shuffled checks, the resamples
    for seen in calls[1:]:
        assert list(seen.columns) == list(table.columns) and len(seen) == len(table)
        assert seen["index"].is_unique and set(seen["index"]) == {str(p) for p in range(len(table))}
    # a resample repeats rows: some resample holds a row twice (by its points and extra), under two indices
    assert any(seen["points"].value_counts().max() > POINTS.count(max(POINTS)) for seen in calls[4:])


def f1_scorer(table: pd.DataFrame, judge=None) -> EvalResult:
    """F1 with Yes positive over rows (a ratio of counts, not a mean of rows)."""
    truth, said = table["answer"].eq("Yes"), table["prediction"].eq("Yes")
    tp, fp, fn = int((truth & said).sum()), int((~truth & said).sum()), int((truth & ~said).sum())
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    per_sample = pd.DataFrame({"index": table["index"].tolist(), "hit": (truth == said).tolist()})
    return EvalResult("toy_f1", {"F1": f1}, "F1", per_sample)


def f1_table(copies: int = 1) -> pd.DataFrame:
    answers = ["Yes", "Yes", "No", "Yes", "No", "No", "Yes", "No", "Yes", "Yes"]
    predictions = ["Yes", "No", "No", "Yes", "Yes", "No", "Yes", "No", "No", "Yes"]
    n = len(answers) * copies
    return pd.DataFrame({"index": range(n), "answer": answers * copies, "prediction": predictions * copies})


def test_f1_interval_holds_the_figure_repeats_with_its_seed_and_shrinks_with_more_rows() -> None:
    small = scored_with_interval(f1_scorer, f1_table()).primary_interval
    again = scored_with_interval(f1_scorer, f1_table()).primary_interval
    other_seed = scored_with_interval(f1_scorer, f1_table(), settings=Settings(seed=1)).primary_interval
    large = scored_with_interval(f1_scorer, f1_table(8)).primary_interval
    # tp 4, fp 1, fn 2 (by hand): F1 = 8 / 11
    assert small is not None and small.estimate == pytest.approx(8 / 11) and small.low <= 8 / 11 <= small.high
    assert again == small and other_seed != small and other_seed.seed == 1
    assert large.estimate == pytest.approx(8 / 11) and large.high - large.low < small.high - small.low
    assert large.se < small.se


def category_mean_scorer(calls: list[pd.DataFrame]):
    """The unweighted mean of per-category accuracies (MLVU's G-Avg, CC-OCR's tracks are built so)."""

    def score(table: pd.DataFrame, judge=None) -> EvalResult:
        calls.append(table)
        hits = table["prediction"].eq(table["answer"])
        means = hits.groupby(table["category"]).mean()
        per_sample = pd.DataFrame({"index": table["index"].tolist(), "hit": hits.tolist()})
        return EvalResult("toy_categories", {"Avg": float(means.mean())}, "Avg", per_sample)

    return score


def test_a_mean_of_categories_draws_rows_within_each_category() -> None:
    sizes = {"a": 12, "b": 30}  # both hold at least 10 rows on average: strata
    hits_in = {"a": [1] * 9 + [0] * 3, "b": [1] * 12 + [0] * 18}
    rows = [{"category": c, "answer": "x", "prediction": "x" if h else "y"} for c in sizes for h in hits_in[c]]
    table = pd.DataFrame(rows).assign(index=lambda t: range(len(t)))
    calls: list[pd.DataFrame] = []
    result = scored_with_interval(category_mean_scorer(calls), table)
    ci = result.primary_interval
    assert result.primary_value == pytest.approx((9 / 12 + 12 / 30) / 2)  # not the mean of the 42 rows
    assert all(seen["category"].value_counts().to_dict() == sizes for seen in calls)
    # the second implementation: per resample, stratum a (code 0) then b, each `integers(0, m, m)`
    rng = np.random.default_rng(0)
    figures = []
    for _ in range(200):
        a = np.asarray(hits_in["a"])[rng.integers(0, 12, size=12)].mean()
        b = np.asarray(hits_in["b"])[rng.integers(0, 30, size=30)].mean()
        figures.append((a + b) / 2)
    assert (ci.low, ci.high) == tuple(pytest.approx(v) for v in np.percentile(figures, [2.5, 97.5]))
    assert ci.se == pytest.approx(np.std(figures, ddof=1))
    assert any("within `category`" in note for note in result.notes)


def crpe_table(groups_right: list[bool]) -> pd.DataFrame:
    rows = []
    for g, right in enumerate(groups_right):
        for k in range(4):
            pred = "A" if right or k != 2 else "B"  # a wrong group misses its third shift only
            rows.append({"index": 10 * g + k, "prediction": pred, "answer": "A a cat", "category": "exist"})
    return pd.DataFrame(rows)


def crpe_without_group_hits(table: pd.DataFrame) -> EvalResult:
    """CRPE's scoring with its per-row `group_hit` taken away: a scorer of groups that names its groups only, whose
    interval the rescored bootstrap must find by drawing whole groups."""
    result = score_crpe(table)
    result.per_sample = result.per_sample.drop(columns="group_hit")
    return result


def test_crpe_carries_wilson_over_its_groups() -> None:
    right = [True, False, True, True, False, True, False, True, True, True, False, True]
    result = scored_with_interval(lambda t, judge=None: score_crpe(t), crpe_table(right))
    ci = result.primary_interval
    assert ci is not None and ci.method == "wilson" and ci.n == 12 and ci.unit == "circular group"
    z, n, p = 1.959963984540054, 12, 8 / 12
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (ci.low, ci.high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    # every group wrong: still over the 12 groups, not the 48 rows
    none = scored_with_interval(lambda t, judge=None: score_crpe(t), crpe_table([False] * 12)).primary_interval
    assert none is not None and none.n == 12 and none.high == pytest.approx(z * z / (n + z * z))


def test_groups_named_only_by_group_are_drawn_whole() -> None:
    right = [True, False, True, True, False, True, False, True, True, True, False, True]
    calls: list[pd.DataFrame] = []

    def score(table: pd.DataFrame, judge=None) -> EvalResult:
        calls.append(table)
        return crpe_without_group_hits(table)

    result = scored_with_interval(score, crpe_table(right))
    ci = result.primary_interval
    assert result.primary_value == pytest.approx(8 / 12)
    assert ci is not None and ci.clusters == 12 and ci.cluster_by == "scorer group" and ci.n == 48
    rng = np.random.default_rng(0)
    y = np.asarray(right, dtype=float)
    figures = [y[rng.integers(0, 12, size=12)].mean() for _ in range(200)]
    assert (ci.low, ci.high) == tuple(pytest.approx(v) for v in np.percentile(figures, [2.5, 97.5]))
    # every resampled table is whole groups: 4 rows of one group in a row, the 3rd a miss exactly when the group is
    for seen in calls[4:]:
        preds = seen["prediction"].tolist()
        assert len(preds) == 48 and all(preds[i] == "A" for i in range(len(preds)) if i % 4 != 2)


def test_groups_by_position_with_a_trailing_short_group_get_no_interval_but_a_note() -> None:
    # 13 groups by position, the last of 2 rows: shuffled whole, the short group shifts the others' boundaries
    table = crpe_table([True, False] * 6 + [False]).iloc[:50]
    result = scored_with_interval(lambda t, judge=None: crpe_without_group_hits(t), table)
    assert result.interval is None
    assert any(n.startswith("no 95% interval for total: the scorer's") and "groups" in n and "shuffled" in n
               for n in result.notes)  # its figure changed, or its groups came back cut


def test_matbench_rows_are_drawn_within_the_scorers_groups() -> None:
    rng = np.random.default_rng(5)
    cells = [("code", "simple")] * 12 + [("code", "hard")] * 10 + [("search", "simple")] * 14 + [("search", "hard")] * 12
    table = pd.DataFrame({"index": range(len(cells)), "category": [c for c, _ in cells], "split": [s for _, s in cells],
                          "answer": "the red cat", "prediction": rng.choice(["the red cat", "red dog", "cat"], len(cells))})
    calls: list[pd.DataFrame] = []

    def score(t: pd.DataFrame, judge=None) -> EvalResult:
        calls.append(t)
        return score_matbench(t)

    result = scored_with_interval(score, table)
    ci = result.primary_interval
    assert ci is not None and ci.method == RESCORED and ci.low <= result.primary_value <= ci.high
    sizes = table.groupby(["category", "split"]).size().to_dict()
    assert all(t.groupby(["category", "split"]).size().to_dict() == sizes for t in calls)
    assert any("within the scorer's `group`" in note for note in result.notes)


def test_a_scorer_reading_rows_by_their_order_gets_no_interval_but_a_note() -> None:
    def pairs(table: pd.DataFrame, judge=None) -> EvalResult:
        """Rows 2k and 2k+1 are one question pair (by position), and the result names no group."""
        hits = table["prediction"].eq(table["answer"]).to_numpy()
        both = hits[0::2] & hits[1::2]
        return EvalResult("toy_pairs", {"acc+": float(both.mean())}, "acc+",
                          pd.DataFrame({"index": table["index"].tolist()}))

    answers = ["x"] * 20
    predictions = ["x"] * 12 + ["y"] * 8  # pairs 1-6 right, 7-10 wrong
    result = scored_with_interval(pairs, pd.DataFrame({"index": range(20), "answer": answers,
                                                       "prediction": predictions}))
    assert result.interval is None and result.primary_value == pytest.approx(6 / 10)
    assert any("reads its rows together by their order or their index" in n for n in result.notes)


def marker_scorer(fail_from: int):
    """The sum scorer, failing (a KeyError as a scorer missing a category would) where the row marked `m` was drawn
    `fail_from` times or more."""
    inner = sum_scorer()

    def score(table: pd.DataFrame, judge=None) -> EvalResult:
        if int(table["mark"].sum()) >= fail_from:
            raise KeyError("category m")
        return inner(table)

    return score


def marker_counts(n: int, resamples: int = 200) -> list[int]:
    rng = np.random.default_rng(0)
    return [int((rng.integers(0, n, size=n) == 0).sum()) for _ in range(resamples)]


def test_failing_resamples_are_skipped_and_counted() -> None:
    points = POINTS * 3
    table = pd.DataFrame({"index": range(len(points)), "points": points, "mark": [1] + [0] * (len(points) - 1)})
    counts = marker_counts(len(points))
    failing = sum(c >= 4 for c in counts)
    assert 0 < failing <= 20  # at most 10% of 200: the interval stands on the others
    result = scored_with_interval(marker_scorer(4), table)
    assert result.primary_interval is not None and result.primary_interval.resamples == 200 - failing
    assert any(f"{failing} resample(s) the scorer failed on skipped" in n for n in result.notes)


def test_too_many_failures_leave_no_interval_and_a_note_not_a_traceback() -> None:
    points = POINTS * 3
    table = pd.DataFrame({"index": range(len(points)), "points": points, "mark": [1] + [0] * (len(points) - 1)})
    failing = sum(c >= 2 for c in marker_counts(len(points)))
    assert failing > 20
    result = scored_with_interval(marker_scorer(2), table)
    assert result.interval is None
    assert any(f"failed on {failing} of 200 resampled tables" in n for n in result.notes)


def test_a_scorer_that_fails_on_its_own_shuffled_rows_gets_a_note() -> None:
    def needs_original_indices(table: pd.DataFrame, judge=None) -> EvalResult:
        if not set(table["index"]) <= {f"q{i}" for i in range(len(POINTS))}:
            raise ValueError("row index 3: unknown")
        return sum_scorer()(table)

    table = pd.DataFrame({"index": [f"q{i}" for i in range(len(POINTS))], "points": POINTS})
    result = scored_with_interval(needs_original_indices, table)
    assert result.interval is None
    assert any("fails on its own rows shuffled and re-indexed (ValueError: row index 3: unknown)" in n
               for n in result.notes)


def test_an_interval_already_there_is_kept_and_the_scorer_runs_once() -> None:
    own = Interval("Total", float(sum(POINTS)), 10.0, 30.0, 5.0, "cluster_robust_sum", len(POINTS))
    calls: list[pd.DataFrame] = []
    inner = sum_scorer(calls)

    def with_own(table: pd.DataFrame, judge=None) -> EvalResult:
        result = inner(table)
        result.interval = own
        return result

    result = scored_with_interval(with_own, pd.DataFrame({"index": range(len(POINTS)), "points": POINTS}))
    assert result.interval is own and len(calls) == 1


def test_a_mean_of_rows_keeps_the_generic_interval() -> None:
    calls: list[pd.DataFrame] = []
    table = f1_table()

    def accuracy(t: pd.DataFrame, judge=None) -> EvalResult:
        calls.append(t)
        hits = t["prediction"].eq(t["answer"])
        return EvalResult("toy", {"Overall": float(hits.mean())}, "Overall",
                          pd.DataFrame({"index": t["index"].tolist(), "hit": hits.tolist()}))

    result = scored_with_interval(accuracy, table)
    assert result.primary_interval.method == "wilson" and len(calls) == 1


def test_a_judge_scored_headline_is_resampled_from_the_replies_already_given() -> None:
    def review(request: JudgeRequest) -> str:
        return "1" if "Yes" in request.prompt.split("reply:")[1] else "0"

    judge = FunctionJudge(review, name="counting")

    def judged_f1(table: pd.DataFrame, judge) -> EvalResult:
        """F1 where the judge says whether each reply says Yes (asked once per distinct reply and answer)."""
        requests = [JudgeRequest(f"answer: {a} reply: {p}") for a, p in zip(table["answer"], table["prediction"])]
        said = [reply.text == "1" for reply in judge.ask(requests)]
        return f1_scorer(table.assign(prediction=["Yes" if s else "No" for s in said]))

    table = f1_table().assign(prediction=lambda t: [f"I think {p}" for p in t["prediction"]])
    result = scored_with_interval(judged_f1, table, judge)
    assert len(judge.asked) == len(table)  # the first scoring's asks only: 200 rescorings asked nothing
    ci = result.primary_interval
    plain = scored_with_interval(f1_scorer, f1_table()).primary_interval
    assert ci is not None and (ci.low, ci.high, ci.se) == (plain.low, plain.high, plain.se)
    assert any("the judge's replies reused, never asked again" in n for n in result.notes)


def test_a_rescoring_that_would_ask_the_judge_anew_stops_with_a_note() -> None:
    judge = FunctionJudge(lambda request: "1", name="counting")

    def keyed_by_index(table: pd.DataFrame, judge) -> EvalResult:
        """The judge prompt names the row's index, which a resampled table changes."""
        replies = judge.ask([JudgeRequest(f"row {i}: {p}") for i, p in zip(table["index"], table["prediction"])])
        return f1_scorer(table.assign(prediction=["Yes" if r.text == "1" else "No" for r in replies]))

    result = scored_with_interval(keyed_by_index, f1_table(), judge)
    assert result.interval is None and len(judge.asked) == len(f1_table())
    assert any("would ask the judge again" in n for n in result.notes)


def test_the_time_budget_stops_after_a_whole_block_and_says_so() -> None:
    table = pd.DataFrame({"index": range(len(POINTS)), "points": POINTS})
    cut = scored_with_interval(sum_scorer(), table, settings=Settings(time_budget_s=0.0))
    ci = cut.primary_interval
    (low, high), _ = second_sum_bootstrap(POINTS, resamples=50)
    assert ci is not None and ci.resamples == 50 and (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))
    assert any("50 resamples, not 200" in n for n in cut.notes)
    none = scored_with_interval(sum_scorer(), table, settings=Settings(first_block_cap_s=0.0))
    assert none.interval is None and any("rescorings would take about" in n for n in none.notes)
