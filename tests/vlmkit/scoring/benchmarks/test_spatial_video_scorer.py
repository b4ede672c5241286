"""vlmkit.scoring.benchmarks.spatial_video on prediction tables built by hand: VsiBench's per-type aggregation (MRA
for numbers, merged relative-direction types, Overall the mean of the figures), the pooled one, ReVSI's own reading,
and VLMEvalKit's figure where its xlsx round trip changes a reply."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.spatial_video import score_spatial_video


def table(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["index", "question_type", "answer", "prediction"])


def test_per_type_by_hand():
    df = table([
        (0, "count", "8", "8"),            # MRA 1
        (1, "count", "8", "6"),            # error 0.25: 1 - t >= 0.25 for t = .50 .. .75: 0.6
        (2, "size", "100", "none"),        # no number: 0
        (3, "dir_a", "A", "A"), (4, "dir_b", "B", "A"), (5, "other", "C", "C"),
    ])  # fmt: skip
    result = score_spatial_video(df, numeric_types=("count", "size"), merge={"dir": ("dir_a", "dir_b")},
                                 order=("size", "count"))
    # count 0.8, size 0, dir (1 + 0) / 2, other 1: Overall (0.8 + 0 + 0.5 + 1) / 4
    assert result.metrics == pytest.approx({"Overall": 57.5, "size_MRA:.5:.95:.05": 0.0,
                                            "count_MRA:.5:.95:.05": 80.0, "dir_accuracy": 50.0,
                                            "other_accuracy": 100.0})
    assert list(result.metrics)[:3] == ["Overall", "size_MRA:.5:.95:.05", "count_MRA:.5:.95:.05"]
    assert result.per_sample["extracted"].tolist() == [8.0, 6.0, None, "A", "A", "C"]
    assert result.counts["unread"] == 1 and result.counts["numeric"] == 3


def test_a_number_pandas_reads_back_as_nan_differs_for_vlmevalkit():
    # "N/A" holds no number for either reading (0 on both); as an option it reads A here, and `nan` for VLMEvalKit
    df = table([(0, "count", "3", "N/A"), (1, "count", "3", "3"), (2, "pick", "A", "N/A")])
    result = score_spatial_video(df, numeric_types=("count",))
    assert result.metrics["pick_accuracy"] == 100.0  # vlmkit reads the A of N/A, as VLMEvalKit's rule does on text
    assert result.vlmevalkit.metrics["pick_accuracy"] == 0.0  # its xlsx gives "nan" back
    assert [d.index for d in result.vlmevalkit.differing] == [2]


def test_pooled_by_hand_with_an_order():
    df = table([(2, "x", "B", "B"), (0, "y", "A", "A"), (1, "x", "C", "D")])
    result = score_spatial_video(df, aggregate="pooled", order=("y",))
    assert result.metrics == pytest.approx({"Overall": 200 / 3, "y_accuracy": 100.0, "x_accuracy": 50.0})
    assert list(result.metrics) == ["Overall", "y_accuracy", "x_accuracy"] and result.scorer == "spatial_video"


def test_revsi_reading_and_partial_merges():
    df = pd.DataFrame([
        (0, "c_single", "4", "4."), (1, "c_multiple", "5", "five"),  # 1, 0 (not a number)
        (2, "d_easy", "A", "a"), (3, "route", "B", "B) right"),      # right, wrong ("B)" is not "B")
    ], columns=["index", "question_type", "ground_truth", "prediction"])  # fmt: skip
    result = score_spatial_video(df, aggregate="revsi", numeric_types=("c_single", "c_multiple"),
                                 merge={"c": ("c_single", "c_multiple"), "d": ("d_easy", "d_hard")})
    # c (1 + 0) / 2; d: only d_easy present, merged alone; route 0
    assert result.metrics == pytest.approx({"overall_accuracy": (0.5 + 1.0 + 0.0) / 3, "route_accuracy": 0.0,
                                            "c_accuracy": 0.5, "d_accuracy": 1.0})
    assert result.primary == "overall_accuracy"


def test_bad_options_are_one_line():
    with pytest.raises(ValueError, match="aggregate 'mean'"):
        score_spatial_video(table([(0, "a", "A", "A")]), aggregate="mean")
    with pytest.raises(ValueError, match="no `question_type` column"):
        score_spatial_video(pd.DataFrame({"index": [0], "answer": ["A"], "prediction": ["A"]}))
