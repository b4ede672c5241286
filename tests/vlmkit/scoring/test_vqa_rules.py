"""vlmkit.scoring.kinds.vqa's per-row rules at their edges and score_vqa's whole result (counts, notes, scales,
OCRBench's groups), on hand-made rows; every expected value is worked out by hand beside it."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.kinds.vqa import (
    OCRBENCH_GROUPS,
    anls,
    normalize_vqa_answer,
    ocrbench_hit,
    relaxed_accuracy,
    score_vqa,
    vqa_soft_score,
)
from vlmkit.scoring.scales import PERCENT, POINTS, Scale

FAIL = "Failed to obtain answer via API"  # VLMEvalKit's marker of a failed call, stored as a prediction


def test_normalisation_edges() -> None:
    assert normalize_vqa_answer("a\tcat") == "cat"  # a tab is a space: the article goes
    assert normalize_vqa_answer("Two\ndogs.") == "2 dogs"
    assert vqa_soft_score("anything", []) == 0.0  # no ground truth: nothing to match


def test_anls_spaces_count_once_and_case_is_lowered() -> None:
    # "ab cd" vs "ab cx" after collapsing: one substitution; over the longer *raw* length, 7 ("ab   cd"), as the
    # official DocVQA/InfographicVQA script divides: 1 - 1/7
    assert anls("ab   cd", ["ab cx"]) == pytest.approx(6 / 7)
    # the example: ' New Yrok   ' (12 characters) against 'New York': 2 edits, 1 - 2/12 (not 1 - 2/8)
    assert anls(" New Yrok   ", ["New York"]) == pytest.approx(1 - 2 / 12)
    # lower-cased as documented: "straße" against "STRASSE" -> "strasse": 2 edits over 7 characters
    assert anls("straße", ["STRASSE"]) == pytest.approx(5 / 7)


def test_relaxed_accuracy_numbers_and_text() -> None:
    assert relaxed_accuracy("50%", ["0.5"], tolerance=0.0) == 1.0  # a percent divides by exactly 100
    assert relaxed_accuracy("0.52", ["0.5"]) == 1.0 and relaxed_accuracy("0.53", ["0.5"]) == 0.0  # 4% and 6% off
    assert relaxed_accuracy("inf", ["inf"]) == 1.0  # not a finite number: compared as text
    assert relaxed_accuracy("nan", ["NaN"]) == 1.0
    assert relaxed_accuracy("0", ["0"]) == 1.0  # a zero target is compared as text
    assert relaxed_accuracy("Paris", ["paris"]) == 1.0 and relaxed_accuracy("Rome", ["paris", "7"]) == 0.0


def test_ocrbench_hit_edges() -> None:
    assert ocrbench_hit("HELLO\nworld", ["hello world"])  # a newline is a space; case ignored
    assert ocrbench_hit("it says hello world", ["Hello\nWorld"])
    assert not ocrbench_hit("a b", ["ab"])  # spaces count, unless asked otherwise
    assert ocrbench_hit("x ^ 2\n+ 1", ["x^2+1"], space_insensitive=True)  # newlines and spaces dropped
    assert ocrbench_hit("x^2+1", ["x ^ 2\n+1"], space_insensitive=True)
    assert not ocrbench_hit("X^2+1", ["x^2+1"], space_insensitive=True)  # case kept for handwritten math


def test_score_vqa_whole_result() -> None:
    df = pd.DataFrame({
        "index": [10, 11, 12, 13, 14],
        "prediction": [None, "two", f"x {FAIL}", "cat", "dog"],
        "answer": ["2", "2", "cat", None, '["dog", "dog", "dog", "hound"]'],
        "category": ["c1", "c1", "c2", "c2", "c2"],
    })
    res = score_vqa(df, "vqa_score")
    # row 10 inference error: 0; row 11 "two" -> "2": single ground truth, exact: 1; row 12 failure marker: 0;
    # row 13 no answer: 0; row 14: three of four ground truths are "dog": for each "dog" the 2 others -> 2/3,
    # for "hound" the 3 -> 1: (3 * 2/3 + 1) / 4 = 0.75
    assert res.per_sample.columns.tolist() == ["index", "score"]
    assert res.per_sample["index"].tolist() == [10, 11, 12, 13, 14]
    assert res.per_sample["score"].tolist() == pytest.approx([0, 1, 0, 0, 0.75])
    assert res.metrics == pytest.approx({"Overall": 35.0, "c1": 50.0, "c2": 25.0})
    assert (res.scorer, res.primary, res.table_suffix, res.scale) == ("vqa_score", "Overall", "acc", Scale(PERCENT))
    assert res.counts == {"total": 5, "scored": 5, "inference_errors": 2, "invalid_target": 1, "single_answer": 1}
    assert res.notes == [
        "1 row(s) have no answer to compare with (scored 0): index 13",
        "1 row(s) have a single ground truth and were scored by normalised exact match (VLMEvalKit's leave-one-out "
        "formula gives such rows 0)",
    ]
    assert res.table["Overall"].tolist() == pytest.approx([35.0])
    assert res.table.columns.tolist() == ["split", "Overall", "c1", "c2"]


def test_single_answers_are_all_counted_and_errors_do_not_stop_the_loop() -> None:
    df = pd.DataFrame({"index": [1, 2, 3, 4], "prediction": [None, "a", "b", "c"], "answer": ["a", "a", "b", "x"]})
    res = score_vqa(df)
    assert res.per_sample["score"].tolist() == [0, 1, 1, 0]  # rows after the failed first are still scored
    assert res.counts["single_answer"] == 3 and res.counts["inference_errors"] == 1
    assert score_vqa(df, "anls").scorer == "vqa_anls" and score_vqa(df, "exact").scorer == "vqa_exact"


def test_score_vqa_errors_are_one_line() -> None:
    df = pd.DataFrame({"index": [1], "prediction": ["a"], "answer": ["a"]})
    with pytest.raises(ValueError, match=r"^VQA scoring: unknown metric 'bleu'; choose one of vqa_score, anls, "
                                         r"relaxed, exact, ocrbench$"):
        score_vqa(df, "bleu")
    with pytest.raises(ValueError, match=r"^VQA scoring \(anls\): the predictions table has no `answer` column"):
        score_vqa(df.drop(columns="answer"), "anls")
    with pytest.raises(ValueError, match=r"^VQA scoring \(ocrbench\): the predictions table has no `category`"):
        score_vqa(df, "ocrbench")
    with pytest.raises(ValueError, match=r"^VQA scoring \(exact\): the predictions table has no rows$"):
        score_vqa(df.iloc[0:0], "exact")
    bad = df.assign(category=["Poetry"])
    with pytest.raises(ValueError, match=r"^VQA scoring \(ocrbench\): row 0, field `category`: 'Poetry' is not an "
                                         r"OCRBench category \(Artistic Text Recognition, Digit String Recognition, "):
        score_vqa(bad, "ocrbench")


def test_ocrbench_sums_hits_by_group_with_their_scales() -> None:
    df = pd.DataFrame({
        "index": [0, 1, 2, 3, 4],
        "prediction": ["it reads STOP", "x^2 + 1", "none", "Total: 42", None],
        "answer": ["stop", "x^2+1", "cat", "42", "a"],
        "category": ["Regular Text Recognition", "Handwritten Mathematical Expression Recognition",
                     "Regular Text Recognition", "Key Information Extraction", "Doc-oriented VQA"],
    })
    res = score_vqa(df, "ocrbench")
    # hits: row 0 (case ignored), row 1 (spaces ignored for handwritten math), row 3; row 2 miss; row 4 error
    assert res.per_sample["hit"].tolist() == [True, True, False, True, False]
    assert res.per_sample["hit"].dtype == bool
    assert res.counts["hits"] == 3 and res.counts["inference_errors"] == 1
    assert (res.scorer, res.primary, res.table_suffix, res.scale) == ("ocrbench", "Final Score", "score",
                                                                       Scale(POINTS))
    expected = {
        "Text Recognition": 1.0, "Scene Text-centric VQA": 0.0, "Doc-oriented VQA": 0.0,
        "Key Information Extraction": 1.0, "Handwritten Mathematical Expression Recognition": 1.0,
        "Final Score": 3.0, "Final Score Norm": 0.3,
        **{cat: 0.0 for cat in OCRBENCH_GROUPS["Text Recognition"]}, "Regular Text Recognition": 1.0,
    }
    assert res.metrics == pytest.approx(expected)
    assert res.table.columns.tolist() == [*OCRBENCH_GROUPS, "Final Score", "Final Score Norm"]
    # each figure is out of the rows it covers: Text Recognition 2 rows, Doc-oriented 1, the whole set 5
    scales = res.metric_scales
    assert scales["Text Recognition"] == Scale(POINTS, out_of=2.0)
    assert scales["Scene Text-centric VQA"] == Scale(POINTS, out_of=0.0)
    assert scales["Doc-oriented VQA"] == Scale(POINTS, out_of=1.0)
    assert scales["Regular Text Recognition"] == Scale(POINTS, out_of=2.0)
    assert scales["Handwriting Recognition"] == Scale(POINTS, out_of=0.0)
    assert scales["Final Score"] == Scale(POINTS, out_of=5.0)
    assert scales["Final Score Norm"] == Scale(POINTS, out_of=0.5)
    assert res.notes == []
    # a row without an answer scores 0 and is named in the notes
    res = score_vqa(df.assign(answer=["stop", "x^2+1", None, "42", "a"]), "ocrbench")
    assert res.metrics["Final Score"] == 3.0 and res.counts["invalid_target"] == 1
    assert res.notes == ["1 row(s) have no answer to compare with (scored 0): index 2"]
