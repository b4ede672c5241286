"""judged_rows.py directly (no test imported it before round 4): each row's value, method and reply from the judge's
outcomes, the notes by method, the hit columns, the counts and the EvalResult, all written out by hand."""

from __future__ import annotations

import pandas as pd

from vlmkit.judging.base import JudgeOutcome
from vlmkit.scoring.common import judged_rows as jr
from vlmkit.scoring.scales import Scale


def test_method_names() -> None:
    assert (jr.JUDGE, jr.UNREAD, jr.JUDGE_ERROR, jr.INFERENCE_ERROR) == (
        "judge", "judge_unread", "judge_error", "inference_error")


def test_judged_columns_row_by_row() -> None:
    outcomes = {
        "a": JudgeOutcome(value=8, replies=["maybe", "8"]),
        "b": JudgeOutcome(value=None, replies=["?"], error={"kind": "http", "message": "500", "status": 500}),
        "c": JudgeOutcome(value=None, replies=["no idea"]),
    }
    values, methods, replies = jr.judged_columns(["a", "missing", "b", "c"], outcomes, unasked=-1)
    assert values == [8, -1, None, None]
    assert methods == ["judge", "inference_error", "judge_error", "judge"]
    assert replies == ["8", None, None, "no idea"]
    assert jr.judged_columns([], outcomes, unasked=0) == ([], [], [])


def test_method_notes_in_the_order_explained() -> None:
    per_sample = pd.DataFrame({"index": [4, 7, 9, 12], "method": ["judge_error", "judge", "judge_error", "x"]})
    notes = jr.method_notes(per_sample, {"x": "what x means", "judge_error": "asked again", "judge_unread": "unread"})
    assert notes == ["1 row(s) x: what x means; index 12", "2 row(s) judge_error: asked again; index 4, 9"]
    assert jr.method_notes(per_sample, {}) == []


def test_hit_columns() -> None:
    cols = jr.hit_columns([True, None, False])
    assert cols["hit"].tolist() == [True, None, False] and cols["hit"].dtype == object
    assert cols["score"].tolist() == [1.0, None, 0.0] and cols["score"].dtype == object
    assert set(cols) == {"hit", "score"}


def test_judged_counts() -> None:
    methods = ["judge", "judge_unread", "judge", "judge_error", "inference_error", "inference_error"]
    assert jr.judged_counts(methods, 3) == {"total": 6, "scored": 3, "by_judge": 2, "judge_errors": 1,
                                            "inference_errors": 2}
    assert list(jr.judged_counts(methods, 3, count_unread=True)) == [
        "total", "scored", "by_judge", "unread", "judge_errors", "inference_errors"]
    assert jr.judged_counts(methods, 3, count_unread=True)["unread"] == 1


def test_judged_result_holds_every_part() -> None:
    scale = Scale("percent")
    result = jr.judged_result(
        "toy_judged", [10, 11, 12], columns={"hit": [True, False, None], "points": [1, 0, None]},
        methods=["judge", "judge", "judge_error"], replies=["yes", "no", None], scored=2,
        metrics={"Overall": 50.0, "Easy": 100.0}, primary="Overall", notes=["first note"],
        explained={"judge_error": "asked again next run"}, scale=scale, count_unread=True,
    )
    assert result.scorer == "toy_judged" and result.primary == "Overall" and result.scale == scale
    assert result.metrics == {"Overall": 50.0, "Easy": 100.0}
    assert list(result.per_sample.columns) == ["index", "hit", "points", "method", "judge"]
    assert result.per_sample["index"].tolist() == [10, 11, 12]
    assert result.per_sample["judge"].tolist() == ["yes", "no", None] and result.per_sample["judge"].dtype == object
    assert result.per_sample["method"].tolist() == ["judge", "judge", "judge_error"]
    assert result.notes == ["first note", "1 row(s) judge_error: asked again next run; index 12"]
    assert result.table is not None and result.table.to_dict("list") == {"metric": ["Overall", "Easy"],
                                                                          "value": [50.0, 100.0]}
    assert result.table_suffix == "score"
    assert result.counts == {"total": 3, "scored": 2, "by_judge": 2, "unread": 0, "judge_errors": 1,
                             "inference_errors": 0}
    plain = jr.judged_result("t", [1], columns={}, methods=["judge"], replies=["r"], scored=1,
                             metrics={"Overall": 1.0}, primary="Overall", notes=[], explained={},
                             scale=scale)
    assert "unread" not in plain.counts and plain.notes == []


def test_hit_columns_stay_object_without_a_missing_verdict() -> None:
    """Object columns whether or not a row is missing, so a rerun that fills every verdict writes the same type."""
    cols = jr.hit_columns([True, False])
    assert cols["hit"].dtype == object and cols["hit"].tolist() == [True, False]
    assert cols["score"].dtype == object and cols["score"].tolist() == [1.0, 0.0]
