"""The box-grounding kind (TDBench's rule) checked against a second implementation written here, on seeded random boxes,
and against hand-worked readings, counts and notes (mutation testing found most of the module untested)."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from vlmkit.scoring.kinds.grounding import METHODS, box_iou, centroid_containment, read_box, score_grounding
from vlmkit.scoring.scales import FRACTION, Scale


def _centroid(p, g):  # second implementation: the centre of the predicted box lies in the gold box, edges included
    x, y = (p[0] + p[2]) / 2, (p[1] + p[3]) / 2  # VLMEvalKit's tdbench.py takes the centre this way
    return 1.0 if (g[0] <= x <= g[2]) and (g[1] <= y <= g[3]) else 0.0


def _iou(p, g):  # second implementation: intersection over union of two boxes, 0 where they do not meet
    w = min(p[2], g[2]) - max(p[0], g[0])
    h = min(p[3], g[3]) - max(p[1], g[1])
    if w < 0 or h < 0:
        return 0.0
    area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
    union = area(p) + area(g) - w * h
    return 0.0 if union == 0 else w * h / union


def _box(rng: random.Random) -> tuple[float, ...]:
    xs = sorted(round(rng.random(), 2) for _ in range(2))
    ys = sorted(round(rng.random(), 2) for _ in range(2))
    return xs[0], ys[0], xs[1], ys[1]


def test_the_measures_equal_a_second_implementation_on_random_boxes():
    rng = random.Random(7)
    for _ in range(3000):
        p, g = _box(rng), _box(rng)
        assert centroid_containment(p, g) == _centroid(p, g)
        assert math.isclose(box_iou(p, g), _iou(p, g), abs_tol=1e-12)


def test_measures_by_hand():
    assert box_iou((0, 0, 0.5, 0.5), (0.25, 0.25, 0.75, 0.75)) == pytest.approx(0.0625 / 0.4375)
    assert box_iou((0, 0, 0.5, 0.5), (0.5, 0.5, 1, 1)) == 0.0  # they touch at one corner: no area
    assert box_iou((0.2, 0.2, 0.2, 0.2), (0.2, 0.2, 0.2, 0.2)) == 0.0  # zero union
    assert box_iou((0.6, 0, 1, 1), (0, 0, 0.5, 1)) == 0.0  # apart in x
    assert box_iou((0, 0.6, 1, 1), (0, 0, 1, 0.5)) == 0.0  # apart in y
    assert centroid_containment((0, 0, 1, 1), (0.5, 0.5, 1, 1)) == 1.0  # centre on the corner: edges included
    assert centroid_containment((0, 0, 1, 0.9), (0.5, 0.5, 1, 1)) == 0.0  # centre y 0.45 is above the box
    assert centroid_containment((0, 0, 0.9, 1), (0.5, 0.5, 1, 1)) == 0.0  # centre x 0.45 is left of it
    assert centroid_containment((0.4, 0.4, 0.6, 0.6), (0, 0, 0.5, 0.5)) == 1.0
    assert centroid_containment((0.4, 0.4, 0.8, 0.8), (0, 0, 0.59, 1)) == 0.0  # x 0.6 past the right edge
    assert centroid_containment((0.4, 0.4, 0.8, 0.8), (0, 0, 1, 0.59)) == 0.0  # y 0.6 past the bottom edge


@pytest.mark.parametrize(
    ("text", "box"),
    [
        ("[0.1, 0.2, 0.3, 0.4]", (0.1, 0.2, 0.3, 0.4)),
        ("0.1,0.2,0.3,0.4", (0.1, 0.2, 0.3, 0.4)),
        ("box: [.5, 0, 1, 1]", (0.5, 0.0, 1.0, 1.0)),
        ("[0.1,\n 0.2, 0.3, 0.4]", (0.1, 0.2, 0.3, 0.4)),  # a line break inside is removed first
        ("[0.1,  0.2, 0.3, 0.4]", None),  # two spaces after a comma: not VLMEvalKit's pattern
        ("[0.1, 0.2, 0.3]", None),  # three numbers
        ("[0.1, 0.2, 0.3, 0.4] or [0.5, 0.5, 0.6, 0.6]", None),  # two boxes: not exactly one
        ("[, , , ]", None),  # empty numbers
        ("no box here", None),
    ],
)
def test_reading_a_box(text: str, box):
    assert read_box(text) == box


def _frame(rows: list[tuple[object, str]]) -> pd.DataFrame:
    return pd.DataFrame({"index": list(range(len(rows))), "prediction": [r[0] for r in rows],
                         "answer": [r[1] for r in rows]})


def test_scores_counts_and_notes_worked_by_hand():
    gold = "[0.0, 0.0, 0.5, 0.5]"
    df = _frame([
        ("[0.1, 0.1, 0.3, 0.3]", gold),  # centre (0.2, 0.2) inside: 1; IoU 0.04 / 0.25 = 0.16
        ("[0.6, 0.6, 0.8, 0.8]", gold),  # outside: 0; IoU 0
        ("I cannot tell", gold),  # unread
        (None, gold),  # a failed call
        ("[0.1, 0.1, 0.3, 0.3]", "somewhere"),  # the answer holds no box
    ])
    result = score_grounding(df, "centroid")
    assert result.primary == METHODS["centroid"] and result.metrics[result.primary] == pytest.approx(1 / 5)
    assert result.per_sample["read"].tolist() == ["box", "box", "unread", "inference_error", "invalid_target"]
    assert result.per_sample["score"].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    counts = result.counts
    assert (counts["total"], counts["boxes"], counts["unread"], counts["inference_errors"],
            counts["invalid_target"], counts["by_rule"]) == (5, 2, 1, 1, 1, 2)
    assert any("1 reply(ies) hold no single" in n for n in result.notes)
    assert any("1 row(s) have an answer that is not one box" in n for n in result.notes)
    assert result.table["Score"].tolist() == [pytest.approx(0.2), 5]
    iou = score_grounding(df, "iou")
    assert iou.primary == "Average IoU" and iou.metrics["Average IoU"] == pytest.approx(0.16 / 5)
    assert iou.vlmevalkit.metrics["Average IoU"] == pytest.approx(0.16 / 5) and not iou.vlmevalkit.differing


def test_a_reply_the_xlsx_round_trip_changes_is_listed():
    # VLMEvalKit reads the reply back from its xlsx: "None" becomes nan and holds no box; vlmkit reads the text
    df = _frame([("[0.1, 0.1, 0.3, 0.3]", "[0.0, 0.0, 0.5, 0.5]"), ("VLMEvalKit fail marker?", "[0, 0, 1, 1]")])
    result = score_grounding(df)
    assert result.metrics[result.primary] == pytest.approx(0.5)
    assert result.vlmevalkit.metrics[result.primary] == pytest.approx(0.5)


def test_no_rows_a_bad_method_and_missing_columns_are_refused():
    with pytest.raises(ValueError, match=r"^grounding scoring: method 'area'; choose one of centroid, iou$"):
        score_grounding(_frame([("x", "y")]), "area")
    with pytest.raises(ValueError, match=r"^grounding scoring: the predictions table has no rows$"):
        score_grounding(_frame([]))
    with pytest.raises(ValueError, match=r"grounding scoring"):
        score_grounding(pd.DataFrame({"index": [0], "prediction": ["x"]}))


def test_a_reply_holding_vlmevalkits_failure_marker_is_a_failed_call():
    from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER

    df = _frame([(f"{VLMEVALKIT_FAIL_MARKER} [0.1, 0.1, 0.3, 0.3]", "[0.0, 0.0, 0.5, 0.5]")])
    result = score_grounding(df)
    assert result.per_sample["read"].tolist() == ["inference_error"] and result.counts["inference_errors"] == 1
    assert result.metrics[result.primary] == 0.0


def test_the_rest_of_the_result_is_what_vlmkit_writes():
    df = _frame([("[0.1, 0.1, 0.3, 0.3]", "[0.0, 0.0, 0.5, 0.5]"), ("[0.6, 0.6, 0.8, 0.8]", "[0.0, 0.0, 0.5, 0.5]")])
    df["index"] = ["a", "b"]
    result = score_grounding(df)
    assert result.scorer == "grounding" and result.table_suffix == "acc" and result.scale == Scale(FRACTION)
    assert result.per_sample["index"].tolist() == ["a", "b"]
    assert result.table["Metric"].tolist() == ["Average Centroid Containment", "Total Samples"]
    assert (result.counts["scored"], result.counts["by_judge"], result.counts["judge_errors"]) == (2, 0, 0)
    assert result.notes == ["VLMEvalKit's rotational evaluation across the four rotated copies is not done: each is "
                            "scored alone"]


def test_a_reply_the_xlsx_cuts_is_a_reading_difference():
    # an xlsx cell holds at most 32,767 characters: VLMEvalKit reads the reply back cut, its box gone
    long = "x" * 40_000 + " [0.1, 0.1, 0.3, 0.3]"
    df = _frame([(long, "[0.0, 0.0, 0.5, 0.5]"), ("[0.1, 0.1, 0.3, 0.3]", "[0.0, 0.0, 0.5, 0.5]")])
    df["index"] = [7, 8]
    result = score_grounding(df)
    assert result.metrics[result.primary] == 1.0
    figure = result.vlmevalkit
    assert figure.metrics[figure.primary] == 0.5 and figure.primary == result.primary
    [diff] = figure.differing
    assert (diff.index, diff.vlmkit, diff.vlmkit_score, diff.vlmevalkit_score) == (7, long, 1.0, 0.0)
    assert len(diff.vlmevalkit) < len(long) and long.startswith(diff.vlmevalkit)  # the text VLMEvalKit reads back
