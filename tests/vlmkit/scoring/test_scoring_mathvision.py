"""MathVision scored with a judge that answers from a key: boxed answers, letters and `is_equal` read by rule, the
judge's extraction with VLMEvalKit's prompt (compared with the facts' text), no eval() of anything, and failed judge
calls reported as such."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.math_answers import math_equal
from vlmkit.scoring.benchmarks.mathvision import (
    MAX_TOKENS,
    TEMPERATURES,
    extract_prompt,
    score_mathvision,
)

# The judge prompt of the facts (vlmevalkit-judge-facts.md section 7, MathVision), JSON-escaped; slots <<QUESTION>>,
# <<PREDICTION>>.
FACTS_PROMPT = (
    "\n"
    "Please read the following example.\n"
    "Then extract the answer from the model response and type it at the end of the prompt.\n"
    "\n"
    "\n"
    "Hint: Please answer the question and provide the final answer at the end.\n"
    "\n"
    "Question: Which number is missing?\n"
    "\n"
    "Model response: The number missing in the sequence is 14.\n"
    "\n"
    "Extracted answer: 14\n"
    "\n"
    "\n"
    "Hint: Please answer the question and provide the final answer at the end.\n"
    "\n"
    "Question: What is the fraction of females facing the camera?\n"
    "\n"
    "Model response: The fraction of females facing the camera is 0.6,\n"
    "which means that six out of ten females in the group are facing the camera.\n"
    "\n"
    "Extracted answer: 0.6\n"
    "\n"
    "\n"
    "Hint: Please answer the question and provide the final answer at the end.\n"
    "\n"
    "Question: How much money does Luca need to buy a sour apple candy and a butter-scotch "
    "candy? (Unit: $)\n"
    "\n"
    "Model response: Luca needs $1.45 to buy a sour apple candy and a butterscotch candy.\n"
    "\n"
    "Extracted answer: 1.45\n"
    "\n"
    "\n"
    "Hint: Please answer the question and provide the final answer at the end.\n"
    "\n"
    "Question: Between which two years does the line graph saw its maximum peak?\n"
    "\n"
    "Model response: The line graph saw its maximum peak between 2007 and 2008.\n"
    "\n"
    "Extracted answer: [2007, 2008]\n"
    "\n"
    "\n"
    "Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, "
    "at the end.\n"
    "\n"
    "Question: What fraction of the shape is blue?\n"
    "\n"
    "Choices: (A) 3/11 (B) 8/11 (C) 6/11 (D) 3/5\n"
    "\n"
    "Model response: The correct answer is (B) 8/11.\n"
    "\n"
    "Extracted answer: B\n"
    "\n"
    "<<QUESTION>>\n"
    "Model respone: <<PREDICTION>>Extracted answer:"
)

FIVE = "['1', '2', '3', '4', '5']"


def row(index, prediction, answer, category, choices="[]"):
    """One MathVision row (the TSV's columns, less the image) with a prediction."""
    return {"index": index, "question": f"Question {index}: how many?", "answer": answer, "choices": choices,
            "category": category, "level": 2, "prediction": prediction}


def table() -> pd.DataFrame:
    return pd.DataFrame([
        row(1, "The answer is C.", "C", "counting", FIVE),  # rule C: hit
        row(2, "I choose option D", "A", "counting", FIVE),  # rule D: miss (any letter counts as prefetch)
        row(3, "Thus $\\boxed{0.5}$.", "\\frac{1}{2}", "algebra"),  # boxed 0.5 equals 1/2 by rule: hit
        row(4, "The length is about twice root three.", "2\\sqrt{3}", "metric geometry - length"),  # judge: hit
        row(5, "It's seven, I believe.", "6", "algebra"),  # judge 7: miss
        row(6, "(lambda: 4)()", "4", "algebra"),  # VLMEvalKit's eval() gives 4 (a hit); vlmkit runs nothing: miss
        row(7, "ten-ish", "10", "algebra"),  # the judge call fails: judge_error, miss
    ])


EXTRACTIONS = {"The length is about twice root three.": "\\sqrt{12}", "It's seven, I believe.": "7",
               "(lambda: 4)()": "(lambda: 4)()"}


def prediction_of(request: JudgeRequest) -> str:
    return request.prompt.split("\nModel respone: ", 1)[1].removesuffix("Extracted answer:")


def keyed(request: JudgeRequest) -> str:
    prediction = prediction_of(request)
    if prediction == "ten-ish":
        raise ConnectionError("judge unreachable")
    return EXTRACTIONS[prediction]


def test_the_prompt_is_the_facts_text():
    assert "Hint: Please answer the question and provide the final answer at the end." in FACTS_PROMPT
    assert extract_prompt("<<QUESTION>>", "<<PREDICTION>>") == FACTS_PROMPT


def test_scores_breakdown_and_counts_by_hand():
    df = table()
    judge = FunctionJudge(keyed)
    result = score_mathvision(df, judge)
    per = result.per_sample.set_index("index")
    assert per["hit"].tolist() == [True, False, True, True, False, False, False]
    assert per["method"].tolist() == ["rule", "rule", "rule", "judge", "judge", "judge", "judge_error"]
    assert per["extracted"].tolist()[:5] == ["C", "D", "0.5", "\\sqrt{12}", "7"]
    # hits: rows 1, 3, 4 of 7
    assert result.metrics["Overall"] == pytest.approx(300 / 7)
    assert result.counts == {"total": 7, "scored": 7, "hits": 3, "by_rule": 3, "by_judge": 3, "unread": 0,
                             "judge_errors": 1, "inference_errors": 0, "prefetch": 3, "invalid_target": 0}
    t = result.table.set_index("Subject")
    assert list(t.index) == ["Overall", "algebra", "counting", "metric geometry - length"]
    # (tot, prefetch, hit): Overall 7/3/3; algebra rows 3,5,6,7 -> 4/1/1; counting rows 1,2 -> 2/2/1;
    # metric geometry - length row 4 -> 1/0/1
    expect = {"Overall": (7, 3, 3), "algebra": (4, 1, 1), "counting": (2, 2, 1), "metric geometry - length": (1, 0, 1)}
    for label, (tot, fetched, hit) in expect.items():
        assert t.loc[label, ["tot", "prefetch", "hit"]].tolist() == [tot, fetched, hit], label
        assert t.loc[label, "acc"] == pytest.approx(hit / tot * 100)
        assert t.loc[label, "prefetch_rate"] == pytest.approx(fetched / tot * 100)
        assert result.metrics[label] == pytest.approx(hit / tot * 100)
    assert result.table_suffix == "score" and any("eval()" in note for note in result.notes)


def test_prompts_sent_are_the_facts_text_and_a_failed_call_is_not_retried_as_an_answer():
    df = table()
    judge = FunctionJudge(keyed)
    score_mathvision(df, judge)
    by_index = df.set_index("index")
    assert sorted(r.row for r in judge.asked) == ["4", "5", "6", "7"]  # one ask each: every reply was usable
    for request in judge.asked:
        line = by_index.loc[int(request.row)]
        expected = FACTS_PROMPT.replace("<<QUESTION>>", line["question"]).replace("<<PREDICTION>>", line["prediction"])
        assert request.prompt == expected
        assert request.temperature == TEMPERATURES[0] == 0.0 and request.max_tokens == MAX_TOKENS == 128


def test_empty_replies_are_asked_again_then_unread():
    df = table().head(5).tail(1)  # row 5 only
    judge = FunctionJudge(lambda r: "")
    result = score_mathvision(df, judge)
    assert result.per_sample["method"].tolist() == ["judge_unread"] and result.counts["unread"] == 1
    assert [r.temperature for r in judge.asked] == [0.0, 0.5, 1.0, 1.5, 2.0]


@pytest.mark.parametrize(("prediction", "answer", "equal"), [
    ("0.5", "1/2", True), ("\\frac{1}{2}", "0.5", True), ("\\dfrac{\\sqrt{3}}{2}", "\\frac{\\sqrt 3}{2}", True),
    ("6\\pi", "18.8495559215", True), ("\\sqrt[3]{8}", "2", True), ("30^\\circ", "30", True), ("A", "a", True),
    ("x + 1", "x+1", True), ("1,000", "1000", False), ("0.5000001", "0.5", True), ("0.50001", "0.5", False),
    ("__import__('os').getcwd()", "0", False), ("9**9**9", "1", False), ("2", "3", False),
])
def test_is_equal_without_eval(prediction, answer, equal):
    assert math_equal(prediction, answer) is equal
