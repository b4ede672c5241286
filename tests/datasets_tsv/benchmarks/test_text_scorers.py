"""How the text-only benchmarks' scorers read replies (vlmkit.scoring.benchmarks.text_choice and text_bbh), worked
by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.text_bbh import read_answer, score_text_bbh
from vlmkit.scoring.benchmarks.text_choice import read_choice, score_text_choice

ABCD = list("ABCD")


@pytest.mark.parametrize(("reply", "reader", "expected"), [
    ("B", "letter", "B"),
    ("  (C) because", "letter", "C"),
    ("D. The Moon", "letter", "D"),
    ("The answer is (A). Not B", "letter", "A"),
    ("I pick A, no wait, the answer is C", "letter", "C"),  # "I" is no option: the last `answer is` reads
    ("Answer: B", "letter", "B"),
    ("E", "letter", None),  # not one of the row's options
    ("Apples", "letter", None),
    ("Let me think. The answer is (B). So the answer is (D).", "answer_is", "B"),  # the first, as TIGER-Lab's
    ("B", "answer_is", "B"),
    ("Yes, it is.", "yorn", "Yes"),
    ("no", "yorn", "No"),
    ("It is not so; no.", "yorn", "No"),
    ("yes and no", "yorn", "Yes"),  # the first word decides
    ("maybe yes, maybe no", "yorn", None),
])
def test_read_choice(reply: str, reader: str, expected: str | None) -> None:
    letters = ["Yes", "No"] if reader == "yorn" else ABCD
    assert read_choice(reply, letters, reader) == expected


def test_score_text_choice_by_group() -> None:
    df = pd.DataFrame({"index": [0, 1, 2, 3], "prediction": ["A", "B", None, "C"], "answer": ["A", "C", "B", "C"],
                       "A": ["a"] * 4, "B": ["b"] * 4, "C": ["c"] * 4, "D": [None] * 4,
                       "subject": ["x", "x", "y", "y"]})
    result = score_text_choice(df, group="subject")
    assert result.metrics == {"Overall": 2 / 4, "subject:x": 1 / 2, "subject:y": 1 / 2}
    assert result.counts["inference_errors"] == 1
    with pytest.raises(ValueError, match="row index 1, field answer: empty"):
        score_text_choice(df.assign(answer=["A", "", "B", "C"]))


@pytest.mark.parametrize(("reply", "target", "expected"), [
    ("Let's think. So the answer is False.", "False", "False"),
    ("So the answer is (B).", "(B)", "(B)"),
    ("the answer is B", "(B)", "(B)"),
    ("valid\nmore text", "valid", "valid"),
    ("no answer here at all", "(A)", ""),
])
def test_bbh_read_answer(reply: str, target: str, expected: str) -> None:
    assert read_answer(reply, target) == expected


def test_bbh_overall_and_task_mean() -> None:
    df = pd.DataFrame({"index": [0, 1, 2], "prediction": ["So the answer is true.", "x", "the answer is (A)."],
                       "answer": ["True", "False", "(A)"], "task": ["t1", "t1", "t2"]})
    result = score_text_bbh(df)
    assert result.metrics["Overall"] == pytest.approx(2 / 3)
    assert result.metrics["task:t1"] == 0.5 and result.metrics["task:t2"] == 1.0
    assert result.metrics["task_mean"] == pytest.approx(0.75)  # OpenCompass's plain mean over tasks
