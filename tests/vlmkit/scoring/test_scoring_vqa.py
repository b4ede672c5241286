"""VQA normalisation and metrics (VQA score, ANLS, relaxed, exact, OCRBench) on hand-computed values."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from vlmkit.scoring.common.text_norm import parse_answer_list
from vlmkit.scoring.kinds.vqa import (
    anls,
    exact_match_ignoring_case,
    normalize_vqa_answer,
    relaxed_accuracy,
    score_vqa,
    vqa_soft_score,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("two", "2"),
        ("Ten", "10"),
        ("a dog.", "dog"),
        ("The Two dogs!", "2 dogs"),
        ("dont", "don't"),
        ("Its a cat, isnt it?", "its cat isn't it"),
        ("1,000", "1000"),  # a digit,digit comma: marks are deleted, not spaced
        ("3.5", "3.5"),
        ("yes/no", "yes no"),  # no mark touches a space: replaced by a space
        ("left - right", "left right"),
        ("  an apple\n", "apple"),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize_vqa_answer(text) == expected


def test_vqa_soft_score_known_values() -> None:
    gts_2 = ["cat", "cat"] + ["dog"] * 8
    # matching GTs see 1 other match (1/3), the 8 others see 2 (2/3): (2/3 + 16/3) / 10
    assert vqa_soft_score("cat", gts_2) == pytest.approx(0.6)
    gts_3 = ["cat"] * 3 + ["dog"] * 7
    assert vqa_soft_score("Cat.", gts_3) == pytest.approx((3 * 2 / 3 + 7 * 1) / 10)
    assert vqa_soft_score("cat", ["cat"] * 4 + ["dog"] * 6) == pytest.approx(1.0)
    assert vqa_soft_score("dog", ["dog"] * 10) == pytest.approx(1.0)
    assert vqa_soft_score("bird", gts_2) == 0.0
    assert vqa_soft_score("two", ["2"] * 10) == pytest.approx(1.0)
    # a single ground truth: normalised exact match (VLMEvalKit's formula would always give 0)
    assert vqa_soft_score("A dog", ["dog"]) == 1.0
    assert vqa_soft_score("cat", ["dog"]) == 0.0


def test_anls() -> None:
    assert anls("hallo", ["hello"]) == pytest.approx(0.8)
    assert anls(" HELLO  world ", ["hello world"]) == pytest.approx(1.0)
    assert anls("abc", ["xyz"]) == 0.0
    assert anls("ab", ["abcd"]) == pytest.approx(0.5)  # exactly the threshold: kept
    assert anls("ab", ["abcd"], threshold=0.6) == 0.0
    assert anls("hallo", ["xyz", "hello"]) == pytest.approx(0.8)  # best ground truth


@pytest.mark.parametrize(
    "prediction, answers, expected",
    [
        ("105", ["100"], 1.0),  # exactly 5 %
        ("95", ["100"], 1.0),
        ("105.1", ["100"], 0.0),
        ("94.9", ["100"], 0.0),
        ("0.5", ["50%"], 1.0),  # percent converted
        ("51%", ["0.5"], 1.0),
        ("50", ["50%"], 0.0),
        ("0", ["0"], 1.0),  # target 0: exact string comparison
        ("0.0", ["0"], 0.0),
        ("Yes", ["yes"], 1.0),
        ("1,000", ["1000"], 0.0),  # not a number: exact comparison
        ("12", ["blue", "12.5"], 1.0),  # best over answers (4 % off)
    ],
)
def test_relaxed_accuracy(prediction: str, answers: list[str], expected: float) -> None:
    assert relaxed_accuracy(prediction, answers) == expected


def test_exact_match_ignoring_case() -> None:
    assert exact_match_ignoring_case(" Paris ", ["paris"]) == 1.0
    assert exact_match_ignoring_case("Paris, France", ["paris"]) == 0.0
    assert exact_match_ignoring_case("b", ["a", "B"]) == 1.0


def test_parse_answer_list_is_safe() -> None:
    assert parse_answer_list("['a', 'b']") == ["a", "b"]
    assert parse_answer_list('["x", 2]') == ["x", "2"]
    assert parse_answer_list("plain") == ["plain"]
    assert parse_answer_list("[citation needed]") == ["[citation needed]"]
    evil = "[__import__('os').system('echo hacked')]"
    assert parse_answer_list(evil) == [evil]  # not evaluated: kept as a plain string
    assert parse_answer_list(float("nan")) is None
    assert parse_answer_list(["a", 3.0]) == ["a", "3"]


def test_score_vqa_default_with_categories_and_errors() -> None:
    df = pd.DataFrame(
        {
            "index": [1, 2, 3, 4, 5],
            "prediction": ["cat", "two", None, "dog", "x"],
            "answer": [str(["cat", "cat"] + ["dog"] * 8), json.dumps(["2"] * 10), "['dog'] * 10", "dog", None],
            "category": ["c1", "c1", "c2", "c2", "c2"],
        }
    )
    res = score_vqa(df)
    assert res.scorer == "vqa_score" and res.table_suffix == "acc"
    assert res.per_sample["score"].tolist() == pytest.approx([0.6, 1.0, 0.0, 1.0, 0.0])
    assert res.metrics["Overall"] == pytest.approx(52.0)
    assert res.metrics["c1"] == pytest.approx(80.0)
    assert res.metrics["c2"] == pytest.approx(100 / 3)
    assert res.counts["inference_errors"] == 1 and res.counts["invalid_target"] == 1
    assert res.counts["single_answer"] == 1
    assert list(res.table.columns) == ["split", "Overall", "c1", "c2"]


@pytest.mark.parametrize(
    "metric, expected",
    [("anls", [80.0, 200 / 3]), ("relaxed", [0.0, 100.0]), ("exact", [0.0, 0.0])],
)
def test_score_vqa_other_metrics(metric: str, expected: list[float]) -> None:
    df = pd.DataFrame(
        {"index": [1, 2], "prediction": ["hallo", "104"], "answer": ["['hello']", "100"], "split": ["a", "b"]}
    )
    res = score_vqa(df, metric=metric)
    assert res.scorer == f"vqa_{metric}"
    # VLMEvalKit's _acc.csv layout: one row, a column per split, then Overall
    assert list(res.table.columns) == ["a", "b", "Overall"] and len(res.table) == 1
    assert res.table.iloc[0][["a", "b"]].tolist() == pytest.approx(expected)
    assert res.metrics["Overall"] == pytest.approx(sum(expected) / 2)
    assert res.table.iloc[0]["Overall"] == pytest.approx(sum(expected) / 2)


def test_ocrbench_sums() -> None:
    rows = [
        ("Regular Text Recognition", "['STOP']", "The sign says stop."),  # hit (case-insensitive substring)
        ("Artistic Text Recognition", "['Coffee']", "coffe"),  # miss
        ("Digit String Recognition", "['123', '0123']", "0123"),  # hit
        ("Scene Text-centric VQA", "['red']", "It is RED"),  # hit
        ("Doc-oriented VQA", "['1999']", None),  # inference error: miss
        ("Key Information Extraction", "['$5.00']", "total: $5.00"),  # hit
        ("Handwritten Mathematical Expression Recognition", "['x ^ { 2 }']", "x^{2}"),  # hit: spaces removed
        ("Handwritten Mathematical Expression Recognition", "['X']", "x"),  # miss: case kept
    ]
    df = pd.DataFrame(
        {
            "index": range(len(rows)),
            "category": [r[0] for r in rows],
            "answer": [r[1] for r in rows],
            "prediction": [r[2] for r in rows],
        }
    )
    res = score_vqa(df, metric="ocrbench")
    m = res.metrics
    assert m["Text Recognition"] == 2.0
    assert m["Regular Text Recognition"] == 1.0 and m["Artistic Text Recognition"] == 0.0
    assert m["Scene Text-centric VQA"] == 1.0 and m["Doc-oriented VQA"] == 0.0
    assert m["Key Information Extraction"] == 1.0
    assert m["Handwritten Mathematical Expression Recognition"] == 1.0
    assert res.primary == "Final Score" and m["Final Score"] == 5.0 and m["Final Score Norm"] == 0.5
    assert list(res.table.columns) == [
        "Text Recognition",
        "Scene Text-centric VQA",
        "Doc-oriented VQA",
        "Key Information Extraction",
        "Handwritten Mathematical Expression Recognition",
        "Final Score",
        "Final Score Norm",
    ]
    assert res.table_suffix == "score" and res.counts["inference_errors"] == 1
    assert res.per_sample["hit"].tolist() == [True, False, True, True, False, True, True, False]


def test_ocrbench_rejects_unknown_category() -> None:
    df = pd.DataFrame({"index": [0], "category": ["Poetry"], "answer": ["['a']"], "prediction": ["a"]})
    with pytest.raises(ValueError, match=r"row 0, field `category`: 'Poetry'"):
        score_vqa(df, metric="ocrbench")


def test_unknown_metric_and_missing_column() -> None:
    df = pd.DataFrame({"index": [0], "answer": ["a"], "prediction": ["a"]})
    with pytest.raises(ValueError, match="unknown metric"):
        score_vqa(df, metric="bleu")
    with pytest.raises(ValueError, match="no `prediction` column"):
        score_vqa(df.drop(columns=["prediction"]))
