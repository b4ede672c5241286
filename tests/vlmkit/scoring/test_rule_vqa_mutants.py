"""Rule-scored short answers (score_rule_vqa): whole results worked by hand for each metric, and VLMEvalKit's TallyQA
reading of a cell checked against a second implementation written from its text_to_int (tallyqa.py)."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from vlmkit.scoring.kinds.rule_vqa import score_rule_vqa, vlmevalkit_count

FAILED = "Failed to obtain answer via API"
_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]


def text_to_int(value):
    """VLMEvalKit's text_to_int, again."""
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value != value:
            return None
        return int(value) if 0 <= value <= 20 else None
    words = r"\b(" + "|".join(_WORDS) + r")\b"
    m = re.search(rf"(\b([0-9]|1[0-9]|20)\b|{words})", str(value).lower())
    if not m:
        return None
    return int(m.group()) if m.group().isdigit() else _WORDS.index(m.group())


@pytest.mark.parametrize(
    "value",
    [0, 20, 21, -1, 3.0, 20.0, 20.5, 0.0, -0.5, 19.9, math.nan, "25 then 3", "Twenty one", "I see 0", "21", "none"],
)
def test_vlmevalkit_count_is_text_to_int(value):
    assert vlmevalkit_count(value) == text_to_int(value)


def test_vlmevalkit_count_bounds_by_hand():
    assert [vlmevalkit_count(v) for v in (0, 20, 21, -1, 0.0, 20.0)] == [0, 20, None, None, 0, 20]


def frame(preds, answers, **extra) -> pd.DataFrame:
    return pd.DataFrame({"index": [10 + i for i in range(len(preds))], "prediction": preds, "answer": answers,
                         **extra})


def test_tallyqa_result_by_hand():
    # hits: 3 = "three", 4 != 5, failed call (a miss, counted), "" answer (no whole number: a miss, noted), 0 = "0"
    df = frame(["three", "4 dogs", FAILED, "2", "0"], ["3", "5", "1", "", "0"])
    result = score_rule_vqa(df, "tallyqa")
    assert result.scorer == "tallyqa" and result.primary == "TallyQA"
    assert result.metrics == {"TallyQA": pytest.approx(2 / 5)}
    assert result.per_sample["index"].tolist() == [10, 11, 12, 13, 14]
    assert result.per_sample["hit"].tolist() == [True, False, False, False, True]
    assert result.counts == {"total": 5, "scored": 5, "hits": 2, "inference_errors": 1, "invalid_target": 1}
    assert result.notes == ["1 row(s) have no whole-number answer to compare with (scored as misses): index 13"]


def test_countbench_result_by_hand():
    df = frame(["10 apples", "There are 7.", FAILED], ["1", "7", "2"])
    result = score_rule_vqa(df, "countbench")
    assert result.scorer == "countbench" and result.primary == "accuracy"
    assert result.metrics == {"accuracy": pytest.approx(100 / 3)}
    assert result.counts["inference_errors"] == 1 and result.notes == []


def test_zerobench_result_by_hand():
    df = frame(["so {Blue Car}", "{red}", "blue car", "x"], ["blue car", "Red", "blue car", " "])
    result = score_rule_vqa(df, "zerobench")
    assert result.scorer == "zerobench" and result.primary == "accuracy"
    assert result.metrics == {"accuracy": pytest.approx(0.5)}
    assert result.per_sample["hit"].tolist() == [True, True, False, False]
    assert result.counts == {"total": 4, "scored": 4, "hits": 2, "inference_errors": 0, "invalid_target": 1}
    assert result.notes == ["1 row(s) have no answer to compare with (scored as misses): index 13"]


def test_mtvqa_result_by_hand():
    # answer and reply stripped, lower-cased, dots removed; a hit when the answer is in the reply
    df = frame(["U.S.A. it is", FAILED, "STRASSE", "Straße", "no"], ["usa", "api", "straße", "strasse", "yes"],
               category=["a", "a", "b", "b", "b"])
    result = score_rule_vqa(df, "mtvqa")
    # row 2: "strasse" does not hold "straße"; row 3: "straße" does not hold "strasse" (lower-casing keeps ß)
    assert result.per_sample["hit"].tolist() == [True, False, False, False, False]
    assert result.scorer == "mtvqa" and result.primary == "Average"
    assert result.metrics == {"Average": pytest.approx(20.0), "a": pytest.approx(50.0), "b": pytest.approx(0.0)}
    assert result.counts["inference_errors"] == 1 and result.counts["hits"] == 1


def test_one_row_is_enough_and_no_row_is_refused():
    assert score_rule_vqa(frame(["{x}"], ["x"]), "zerobench").metrics == {"accuracy": 1.0}
    with pytest.raises(ValueError, match=r"^zerobench scoring: the predictions table has no rows$"):
        score_rule_vqa(frame([], []), "zerobench")


def test_unknown_metric_and_missing_columns_are_one_line():
    with pytest.raises(ValueError) as err:
        score_rule_vqa(frame(["1"], ["1"]), "vqa")
    assert str(err.value) == "rule VQA scoring: unknown metric 'vqa'; choose one of tallyqa, countbench, zerobench, mtvqa"
    with pytest.raises(ValueError) as err:
        score_rule_vqa(frame(["1"], ["1"]), "mtvqa")
    assert str(err.value) == "mtvqa scoring: the predictions table has no `category` column (columns: index, " \
                             "prediction, answer)"
    assert score_rule_vqa(frame(["1"], ["1"]), "countbench").metrics == {"accuracy": 100.0}  # no category needed


def wilson_by_hand(hits: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.mark.parametrize(
    ("metric", "preds", "answers", "factor"),
    [
        ("tallyqa", ["3", "2", "5", "1", "x"], ["3", "3", "5", "2", "4"], 1.0),
        ("zerobench", ["{a}", "{b}", "{c}", "{x}", "{y}"], ["a", "z", "c", "w", "v"], 1.0),
        ("countbench", ["3", "2", "5", "1", "x"], ["3", "3", "5", "2", "4"], 100.0),
    ],
)
def test_the_table_and_the_interval_of_two_hits_in_five(metric, preds, answers, factor):
    result = score_rule_vqa(frame(preds, answers), metric)
    assert result.counts["hits"] == 2
    assert result.table_suffix == "acc"
    assert result.table.to_dict("records") == [result.metrics]
    low, high = wilson_by_hand(2, 5)
    assert result.interval.metric == result.primary and result.interval.n == 5
    assert (result.interval.low, result.interval.high) == (pytest.approx(low * factor), pytest.approx(high * factor))


def test_mtvqa_interval_is_in_percent():
    df = frame(["a", "b", "c", "x"], ["a", "b", "z", "y"], category=["k"] * 4)
    low, high = wilson_by_hand(2, 4)
    interval = score_rule_vqa(df, "mtvqa").interval
    assert (interval.metric, interval.low, interval.high) == ("Average", pytest.approx(100 * low),
                                                              pytest.approx(100 * high))


def test_vlmevalkit_figures_for_each_metric_by_hand():
    # TallyQA: VLMEvalKit reads only 0..20, the first of them: "25 then 3" -> 3 (vlmkit 25); "21" -> nothing
    df = frame(["25 then 3", FAILED, "21", "two"], ["3", "3", "21", "2"])
    result = score_rule_vqa(df, "tallyqa")
    figure = result.vlmevalkit
    assert figure.primary == "TallyQA" and figure.metrics == {"TallyQA": pytest.approx(2 / 4)}
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (10, 25, 3, 0.0, 1.0), (12, 21, None, 1.0, 0.0),
    ]
    assert figure.notes == ["VLMEvalKit reads only the numbers 0..20 (the first of them); vlmkit the first whole "
                            "number"]
    # CountBenchQA: a substring test ("1" is in "10")
    figure = score_rule_vqa(frame(["10", "1"], ["1", "1"]), "countbench").vlmevalkit
    assert figure.primary == "accuracy" and figure.metrics == {"accuracy": pytest.approx(100.0)}
    assert [(d.index, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [(10, 0.0, 1.0)]
    assert figure.notes == ["VLMEvalKit's CountBenchQA rule is a substring test (the answer `1` is found in the reply "
                            "`10`); vlmkit compares the reply's first whole number with the answer"]
    # ZEROBench: the same verdicts on both sides here
    figure = score_rule_vqa(frame(["{a}", "{b}"], ["a", "c"]), "zerobench").vlmevalkit
    assert (figure.primary, figure.metrics, figure.differing, figure.notes) == ("accuracy", {"accuracy": 0.5}, [], [])


def test_mtvqa_figure_reads_na_replies_as_nan():
    # "None" and "" are the text `nan` to VLMEvalKit (noted); "NaN" already reads `nan` on both sides (not noted);
    # the answer "nan" is then found in them: VLMEvalKit hits where vlmkit misses "None" and ""
    df = frame(["None", FAILED, "NaN", "", "it is nan"], ["nan", "nan", "nan", "nan", "x"], category=["c"] * 5)
    result = score_rule_vqa(df, "mtvqa")
    assert result.per_sample["hit"].tolist() == [False, False, True, False, False]
    figure = result.vlmevalkit
    assert figure.primary == "Average"
    assert figure.metrics == {"Average": pytest.approx(60.0), "c": pytest.approx(60.0)}
    assert [d.index for d in figure.differing] == [10, 13]
    assert figure.notes == [
        "2 reply/replies (empty, or a text pandas reads as NaN such as None, N/A, NA, null) are the text 'nan' to "
        "VLMEvalKit, a quirk of its xlsx round trip; vlmkit scores them as the reply given: index 10, 13"
    ]


def test_tallyqa_lists_rows_read_differently_even_when_both_miss():
    # `25 then 3` against 4: vlmkit reads 25, VLMEvalKit 3; both miss, and the row is listed (TallyQA lists counts)
    figure = score_rule_vqa(frame(["25 then 3", "2"], ["4", "2"]), "tallyqa").vlmevalkit
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (10, 25, 3, 0.0, 0.0),
    ]
    # MTVQA lists a row only when the verdict differs: the same reply on both sides is never listed
    figure = score_rule_vqa(frame(["a", "b"], ["a", "z"], category=["c", "c"]), "mtvqa").vlmevalkit
    assert figure.differing == [] and figure.notes == []
