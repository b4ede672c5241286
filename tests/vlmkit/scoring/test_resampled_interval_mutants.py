"""The rescored bootstrap's parts one at a time (mutation round 4): which units and strata a table gets, fresh
indices, the judge replay's counts, the failure and budget accounting and the exact notes. Expectations are worked
by hand or come from a second implementation of the draws in this file (numpy default_rng(seed), per resample and
stratum `integers(0, m, m)`)."""

from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.intervals import Interval
from vlmkit.scoring.common.resampled_interval import (
    JudgeNotAsked,
    RecordingJudge,
    ReplayJudge,
    Settings,
    add_resampled_interval,
    fresh_indices,
    resample_plan,
    resampled_table,
    scored_with_interval,
)
from vlmkit.scoring.result import EvalResult

POINTS = [3, 0, 5, 1, 0, 2, 4, 0, 1, 3, 0, 2]


def summed(table: pd.DataFrame, judge: object = None) -> EvalResult:
    points = table["points"].astype(float)
    return EvalResult("toy_sum", {"Total": float(points.sum())}, "Total",
                      pd.DataFrame({"index": table["index"].tolist(), "score": points.tolist()}))


def sum_table(points: list[float] = POINTS) -> pd.DataFrame:
    return pd.DataFrame({"index": range(len(points)), "points": points})


def plain_result(table: pd.DataFrame, **columns: list[object]) -> EvalResult:
    return EvalResult("toy", {"Total": 1.0}, "Total", pd.DataFrame({"index": table["index"].tolist(), **columns}))


def second_sums(points: list[float], resamples: int, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    y = np.asarray(points, dtype=float)
    return [float(y[rng.integers(0, len(y), size=len(y))].sum()) for _ in range(resamples)]


# -- units and strata ----------------------------------------------------------------------------------------------
def test_groups_with_only_index_and_group_columns_are_clusters() -> None:
    table = pd.DataFrame({"index": range(6)})
    plan = resample_plan(plain_result(table, group=["a", "a", "b", "b", "c", "c"]), table)
    assert plan.grouped is True and [u.tolist() for u in plan.units] == [[0, 1], [2, 3], [4, 5]]
    assert plan.strata is None and plan.strata_by is None


def test_group_size_boundaries() -> None:
    # 20 rows in 2 groups: 10 on average, a stratum (fewer than 10 would be clusters)
    table = pd.DataFrame({"index": range(20)})
    plan = resample_plan(plain_result(table, group=["a"] * 10 + ["b"] * 10), table)
    assert plan.grouped is False and len(plan.units) == 20 and plan.strata_by == "the scorer's `group`"
    assert plan.strata is not None and plan.strata.tolist() == [0] * 10 + [1] * 10
    # 19 rows in 2 groups: 9.5 on average: clusters
    table19 = pd.DataFrame({"index": range(19)})
    plan = resample_plan(plain_result(table19, group=["a"] * 10 + ["b"] * 9), table19)
    assert plan.grouped is True and len(plan.units) == 2
    # one group of 12 rows: neither clusters nor strata; rows alone
    table12 = pd.DataFrame({"index": range(12)})
    plan = resample_plan(plain_result(table12, group=["g"] * 12), table12)
    assert plan.grouped is False and plan.strata is None and plan.strata_by is None and len(plan.units) == 12
    # group_hit beside the group: clusters whatever their size
    plan = resample_plan(plain_result(table, group=["a"] * 10 + ["b"] * 10, group_hit=[True] * 20), table)
    assert plan.grouped is True and len(plan.units) == 2


def test_table_strata_boundaries_and_names() -> None:
    def strata_of(table: pd.DataFrame) -> tuple[list[int] | None, str | None]:
        plan = resample_plan(plain_result(table), table)
        assert plan.grouped is False and len(plan.units) == len(table)
        return (None if plan.strata is None else plan.strata.tolist()), plan.strata_by

    # 20 rows in two categories: 10 on average, strata
    assert strata_of(pd.DataFrame({"index": range(20), "category": ["a"] * 10 + ["b"] * 10})) == (
        [0] * 10 + [1] * 10, "`category`")
    # 6 rows in two categories: too few; 18 rows in two: 9 on average, too few
    assert strata_of(pd.DataFrame({"index": range(6), "category": ["a", "b"] * 3})) == (None, None)
    assert strata_of(pd.DataFrame({"index": range(18), "category": ["a", "b"] * 9})) == (None, None)
    # one category value: no strata
    assert strata_of(pd.DataFrame({"index": range(30), "category": ["a"] * 30})) == (None, None)
    # split x category cells of 10: both named
    both = pd.DataFrame({"index": range(40), "split": ["s"] * 20 + ["t"] * 20,
                         "category": (["a"] * 10 + ["b"] * 10) * 2})
    assert strata_of(both) == ([0] * 10 + [1] * 10 + [2] * 10 + [3] * 10, "`split` x `category`")
    # cells of 9 on average: too small together; category alone before split alone
    mixed = pd.DataFrame({"index": range(36), "split": ["s", "t"] * 18, "category": ["a"] * 18 + ["b"] * 18})
    assert strata_of(mixed)[1] == "`category`"
    # a split column alone
    by_split = pd.DataFrame({"index": range(40), "split": ["s"] * 20 + ["t"] * 20})
    assert strata_of(by_split) == ([0] * 20 + [1] * 20, "`split`")


# -- fresh indices and resampled tables ----------------------------------------------------------------------------
def test_fresh_indices_keep_the_columns_kind() -> None:
    ints = fresh_indices(pd.Series([7, 9, 11], dtype="int32"), 4)
    assert ints.tolist() == [0, 1, 2, 3] and ints.dtype == np.dtype("int32")
    floats = fresh_indices(pd.Series([1.5, 2.5]), 3)
    assert floats.tolist() == [0.0, 1.0, 2.0] and floats.dtype == np.dtype("float64")
    text = fresh_indices(pd.Series(["q1", 3], dtype=object), 3)
    assert text.tolist() == ["0", "1", "2"] and text.dtype == object
    flags = fresh_indices(pd.Series([True, False]), 3)
    assert flags.tolist() == ["0", "1", "2"] and flags.dtype == object


def test_an_empty_order_is_an_empty_table() -> None:
    table = sum_table()
    plan = resample_plan(plain_result(table), table)
    out, copies = resampled_table(table, plan, [])
    assert len(out) == 0 and list(out.columns) == ["index", "points"] and len(copies) == 0


# -- the judge replay ----------------------------------------------------------------------------------------------
def test_recording_and_replay_judges_count_and_name() -> None:
    inner = FunctionJudge(lambda request: request.prompt.upper(), name="upper")
    recorder = RecordingJudge(inner)
    assert recorder.name == "upper"
    asked = [JudgeRequest("a"), JudgeRequest("b", temperature=0.5)]
    assert [r.text for r in recorder.ask(asked)] == ["A", "B"]
    replay = ReplayJudge(recorder)
    assert replay.name == "upper" and replay.asked == 0 and replay.missed == 0
    assert [r.text for r in replay.ask([JudgeRequest("b", temperature=0.5)])] == ["B"]
    assert [r.text for r in replay.ask([JudgeRequest("a"), JudgeRequest("a")])] == ["A", "A"]
    assert replay.asked == 3 and len(inner.asked) == 2
    refusal = r"^the rescoring asked the judge a request the scoring did not \(row r7\)$"
    with pytest.raises(JudgeNotAsked, match=refusal):
        replay.ask([JudgeRequest("b", row="r7")])  # another temperature: another request
    with pytest.raises(JudgeNotAsked):
        replay.ask([JudgeRequest("c")])
    assert replay.missed == 2 and replay.asked == 3


def test_a_scorer_that_swallows_the_replays_refusal_is_still_stopped() -> None:
    judge = FunctionJudge(lambda request: "1", name="ones")

    def swallowing(table: pd.DataFrame, judge: object) -> EvalResult:
        try:  # the prompt names the row's index, which a resampled table changes
            judge.ask([JudgeRequest(f"row {i}") for i in table["index"]])
        except Exception:  # noqa: BLE001 - a scorer that hides the judge's failure
            pass
        return summed(table)

    result = scored_with_interval(swallowing, pd.DataFrame({"index": [f"q{i}" for i in range(12)], "points": POINTS}),
                                  judge)
    assert result.interval is None
    assert result.notes == ["no 95% interval for Total: rescoring resampled tables would ask the judge again "
                            "(a request the scoring did not make)"]


def test_a_judge_without_an_asked_count_gets_no_reuse_clause() -> None:
    class Plain:
        name = "plain"

    result = add_resampled_interval(summed(sum_table()), summed, sum_table(), Plain())
    assert result.interval is not None
    assert result.notes == ["95% interval of Total: the scorer re-run on 200 resampled tables (rows drawn with "
                            "replacement, seed 0)"]


# -- what gets an interval -----------------------------------------------------------------------------------------
def test_two_rows_get_an_interval() -> None:
    table = sum_table([1.0, 4.0])
    result = add_resampled_interval(summed(table), summed, table)
    sums = second_sums([1.0, 4.0], 200)
    ci = result.interval
    assert ci is not None and (ci.low, ci.high) == pytest.approx(tuple(np.percentile(sums, [2.5, 97.5])))
    assert ci.cluster_by is None and ci.clusters is None and ci.n == 2
    one = sum_table([3.0])
    assert add_resampled_interval(summed(one), summed, one).interval is None


def test_an_interval_given_is_kept_without_rescoring() -> None:
    calls: list[int] = []

    def counting(table: pd.DataFrame, judge: object = None) -> EvalResult:
        calls.append(len(table))
        return summed(table)

    result = summed(sum_table())
    own = Interval("Total", result.metrics["Total"], 1.0, 2.0, 0.1, "cluster_robust_sum", 12)
    result.interval = own
    assert add_resampled_interval(result, counting, sum_table()).interval is own and calls == [] and not result.notes


@pytest.mark.parametrize("headline", ["n/a", True, float("nan"), float("inf"), None])
def test_a_headline_that_is_not_a_finite_number_gets_nothing(headline: object) -> None:
    table = sum_table()
    result = EvalResult("toy", {"Total": headline}, "Total", pd.DataFrame({"index": table["index"].tolist()}))
    out = add_resampled_interval(result, summed, table)
    assert out.interval is None and out.notes == []


def test_an_int_headline_is_a_number() -> None:
    table = sum_table()

    def int_sum(t: pd.DataFrame, judge: object = None) -> EvalResult:
        return EvalResult("toy", {"Total": int(t["points"].sum())}, "Total", pd.DataFrame({"index": t["index"]}))

    assert add_resampled_interval(int_sum(table), int_sum, table).interval is not None


# -- the checks ----------------------------------------------------------------------------------------------------
def test_check_orders_repeat_from_run_to_run() -> None:
    seen: list[list[list[float]]] = []
    for _ in range(2):
        calls: list[list[float]] = []

        def recording(table: pd.DataFrame, judge: object = None, calls: list[list[float]] = calls) -> EvalResult:
            calls.append(table["points"].tolist())
            return summed(table)

        scored_with_interval(recording, sum_table())
        seen.append(calls[1:4])
    assert seen[0] == seen[1] and seen[0][0] != POINTS


def test_large_and_zero_headlines_pass_the_checks_despite_float_rounding() -> None:
    """A sum in table order differs in its last bits when the rows are shuffled: the checks allow 1e-9 relative
    (large sums) and 1e-9 absolute (sums near 0)."""
    def ordered_sum(table: pd.DataFrame, judge: object = None) -> EvalResult:
        total = 0.0
        for v in table["points"]:
            total += float(v)
        return EvalResult("toy", {"Total": total}, "Total", pd.DataFrame({"index": table["index"].tolist()}))

    rng = np.random.default_rng(11)
    large = (rng.random(24) * 3e9).tolist()
    near_zero = [0.1, 0.2, -0.3, 0.7, -0.7, 0.15, -0.15, 0.3, -0.1, -0.2, 1e-3, -1e-3]
    for points in (large, near_zero):
        orders = [sum(points[i] for i in np.random.default_rng(s).permutation(len(points))) for s in range(20)]
        assert len(set(orders)) > 1  # the order changes the float sum
        result = scored_with_interval(ordered_sum, sum_table(points))
        assert result.interval is not None, result.notes


def order_note(primary: str, estimate: float, again: float) -> str:
    return (f"no 95% interval for {primary}: the scorer reads its rows together by their order or their index "
            f"({primary} was {estimate:.6g}, then {again} with the rows shuffled and re-indexed), and names no "
            "per-sample `group` to draw whole")


def test_the_order_notes_in_full() -> None:
    def first_row(table: pd.DataFrame, judge: object = None) -> EvalResult:
        return EvalResult("toy", {"First": float(table["points"].iloc[0])}, "First",
                          pd.DataFrame({"index": table["index"].tolist()}))

    result = scored_with_interval(first_row, sum_table([1.0, 2.0, 3.0, 4.0]))
    assert len(result.notes) == 1
    again = re.search(r"then (\S+) with", result.notes[0])
    assert again is not None and result.notes == [order_note("First", 1.0, float(again.group(1)))]

    def grouped_first(table: pd.DataFrame, judge: object = None) -> EvalResult:
        return EvalResult("toy", {"First": float(table["points"].iloc[0])}, "First",
                          pd.DataFrame({"index": table["index"].tolist(),
                                        "group": [f"g{i // 2}" for i in range(len(table))]}))

    result = scored_with_interval(grouped_first, sum_table([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert len(result.notes) == 1 and result.notes[0].startswith(
        "no 95% interval for First: the scorer's figure changes when its groups are shuffled whole and re-indexed "
        "(First was 1, then ")
    assert result.notes[0].endswith("): it groups rows by their order (a group of another size?) or by their index")


def test_groups_lost_in_the_resamples_fail_them() -> None:
    calls = [0]

    def losing(table: pd.DataFrame, judge: object = None) -> EvalResult:
        calls[0] += 1
        columns = {"index": table["index"].tolist()}
        if calls[0] <= 4:  # the scoring and the three checks name the groups; the resamples do not
            columns["group"] = [f"g{i // 2}" for i in range(len(table))]
        return EvalResult("toy", {"Total": float(table["points"].sum())}, "Total", pd.DataFrame(columns))

    result = scored_with_interval(losing, sum_table([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert result.interval is None
    assert result.notes == ["no 95% interval for Total: the scorer failed on 200 of 200 resampled tables (whole "
                            "scorer groups drawn with replacement; at most 10% may fail and 50 must score)"]


# -- counting failures, blocks and the budget ----------------------------------------------------------------------
def failing_calls(failing: set[int], *, nan: bool = False):
    """The sum scorer, failing on the given resample numbers (1 = the first resample; the scoring and the three
    checks come before), by raising or by a NaN headline."""
    calls = [0]

    def score(table: pd.DataFrame, judge: object = None) -> EvalResult:
        calls[0] += 1
        if calls[0] - 4 in failing:
            if nan:
                return EvalResult("toy", {"Total": float("nan")}, "Total", pd.DataFrame({"index": table["index"]}))
            raise KeyError("category m")
        return summed(table)

    return score


@pytest.mark.parametrize("nan", [False, True])
def test_failures_at_the_share_allowed(nan: bool) -> None:
    settings = Settings(resamples=10, block=10, min_resamples=1, max_failed_share=0.1)
    result = scored_with_interval(failing_calls({3}, nan=nan), sum_table(), settings=settings)
    ci = result.interval
    sums = second_sums(POINTS, 10)
    kept = sums[:2] + sums[3:]
    assert ci is not None and ci.resamples == 9
    assert (ci.low, ci.high) == pytest.approx(tuple(np.percentile(kept, [2.5, 97.5])))
    assert result.notes == ["95% interval of Total: the scorer re-run on 9 resampled tables (rows drawn with "
                            "replacement, seed 0); 1 resample(s) the scorer failed on skipped"]
    two = scored_with_interval(failing_calls({3, 7}, nan=nan), sum_table(),
                               settings=Settings(resamples=10, block=10, min_resamples=1, max_failed_share=0.2))
    assert two.notes[-1].endswith("; 2 resample(s) the scorer failed on skipped")
    over = scored_with_interval(failing_calls({3, 7}, nan=nan), sum_table(), settings=settings)
    assert over.interval is None and over.notes == [
        "no 95% interval for Total: the scorer failed on 2 of 10 resampled tables (rows drawn with replacement; at "
        "most 10% may fail and 1 must score)"]


@pytest.mark.parametrize("nan", [False, True])
def test_a_failure_does_not_end_its_block(nan: bool) -> None:
    settings = Settings(resamples=200, block=50, min_resamples=1, time_budget_s=0.0)
    result = scored_with_interval(failing_calls({3}, nan=nan), sum_table(), settings=settings)
    assert result.interval is not None and result.interval.resamples == 49
    assert result.notes == ["95% interval of Total: the scorer re-run on 49 resampled tables (rows drawn with "
                            "replacement, seed 0); 1 resample(s) the scorer failed on skipped; "
                            f"{50} resamples, not 200: they took " + result.notes[0].split("they took ")[1]]
    assert re.fullmatch(r".*they took \d+\.\d s, and 50 more would pass the 0 s budget", result.notes[0])


def test_a_last_partial_block_and_no_budget_note_after_the_last() -> None:
    result = scored_with_interval(summed, sum_table(), settings=Settings(resamples=60, block=50, time_budget_s=0.0,
                                                                          min_resamples=1))
    assert result.interval is not None and result.interval.resamples == 50  # stopped after the first block
    whole = scored_with_interval(summed, sum_table(), settings=Settings(resamples=60, block=50, min_resamples=1))
    assert whole.interval is not None and whole.interval.resamples == 60
    sums = second_sums(POINTS, 60)
    assert (whole.interval.low, whole.interval.high) == pytest.approx(tuple(np.percentile(sums, [2.5, 97.5])))
    assert whole.notes == ["95% interval of Total: the scorer re-run on 60 resampled tables (rows drawn with "
                           "replacement, seed 0)"]
    exact = scored_with_interval(summed, sum_table(), settings=Settings(resamples=50, block=50, time_budget_s=0.0))
    assert exact.notes == ["95% interval of Total: the scorer re-run on 50 resampled tables (rows drawn with "
                           "replacement, seed 0)"]


def test_the_first_block_cap() -> None:
    def slow(table: pd.DataFrame, judge: object = None) -> EvalResult:
        time.sleep(0.03)  # at least 0.03 s a scoring: 50 of them at least 1.5 s
        return summed(table)

    result = scored_with_interval(slow, sum_table(), settings=Settings(first_block_cap_s=0.5))
    assert result.interval is None and len(result.notes) == 1
    found = re.fullmatch(r"no 95% interval for Total: one scoring takes (\d+\.\d) s, so 50 rescorings would take "
                         r"about (\d+) s \(more than 0 s\)", result.notes[0])
    assert found is not None and int(found.group(2)) >= 1
    # the cap compares the slowest check's time x 50 (not a second x 50 from the start): a toy scoring well under
    # 0.9 s passes a 45 s cap
    quick = scored_with_interval(summed, sum_table(), settings=Settings(first_block_cap_s=45.0))
    assert quick.interval is not None
    # no rescoring needed before the first block: allowed even with no time at all
    none_needed = scored_with_interval(summed, sum_table(), settings=Settings(min_resamples=0, first_block_cap_s=0.0,
                                                                               resamples=5, block=5))
    assert none_needed.interval is not None and none_needed.interval.resamples == 5


def test_strata_and_groups_in_the_note() -> None:
    table = pd.DataFrame({"index": range(20), "points": list(range(20)), "category": ["a"] * 10 + ["b"] * 10})
    result = scored_with_interval(summed, table)
    assert result.notes == ["95% interval of Total: the scorer re-run on 200 resampled tables (rows drawn with "
                            "replacement within `category`, seed 0)"]

    def grouped(t: pd.DataFrame, judge: object = None) -> EvalResult:
        return EvalResult("toy", {"Total": float(t["points"].sum())}, "Total",
                          pd.DataFrame({"index": t["index"].tolist(), "group": [f"g{i // 2}" for i in range(len(t))]}))

    result = scored_with_interval(grouped, sum_table([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert result.notes == ["95% interval of Total: the scorer re-run on 200 resampled tables (whole scorer groups "
                            "drawn with replacement, seed 0)"]
    assert result.interval is not None and result.interval.cluster_by == "scorer group"
    assert result.interval.clusters == 3


def test_the_judge_reuse_note_in_full() -> None:
    judge = FunctionJudge(lambda request: request.prompt.split()[-1], name="echo")

    def judged_sum(table: pd.DataFrame, judge: object) -> EvalResult:
        replies = judge.ask([JudgeRequest(f"points {p}") for p in table["points"]])
        return summed(table.assign(points=[float(r.text) for r in replies]))

    result = scored_with_interval(judged_sum, sum_table(), judge)
    assert result.interval is not None
    assert result.notes == ["95% interval of Total: the scorer re-run on 200 resampled tables (rows drawn with "
                            "replacement, seed 0); the judge's replies reused, never asked again"]
