"""MathVerse scored with a judge that answers from a key: extraction, the exact-match shortcut, the 0/1 verdict, both
prompts equal to the facts' text, the per-version breakdown, and failed or unusable judge replies reported apart."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.math_answers import BadRow
from vlmkit.scoring.benchmarks.mathverse import (
    MAX_TOKENS,
    TEMPERATURES,
    extract_prompt,
    score_mathverse,
    score_prompt,
)

# The two judge prompts of the facts (vlmevalkit-judge-facts.md section 7, MathVerse), JSON-escaped.
# slot <<PREDICTION>>
FACTS_EXTRACT = (
    "\n"
    "I am providing you a response from a model to a math problem, termed 'Model Response'. You "
    "should extract the answer from the response as 'Extracted Answer'. Directly output the "
    "extracted answer with no explanation.\n"
    "\n"
    "\n"
    "\n"
    "1.\n"
    "Model response: 'Rounded to two decimal places, the perimeter of the sector is "
    "approximately:\n"
    "\n"
    "(-2, 1)'\n"
    "Extracted Answer: (-2, 1)\n"
    "\n"
    "\n"
    "\n"
    "2.\n"
    "Model response: 'at those points.\n"
    "\n"
    "Therefore, the correct option that represents the meaning of the intersection points of the "
    "graphs is:\n"
    "\n"
    "D. They give the solutions to the equation $f(t)=g(t)$.\",'\n"
    "Extracted Answer: D\n"
    "\n"
    "\n"
    "\n"
    "3.\n"
    "Model response: ' at 1 (there's a closed circle at y = 1), the range in interval notation "
    "is \\((-4, 1]\\).\n"
    "\n"
    "Final values:\n"
    "Domain: \\((-3, 3]\\)\n"
    "Range: \\((-4, 1]\\)'\n"
    "Extracted Answer: Domain: \\((-3, 3]\\)\n"
    "Range: \\((-4, 1]\\)\n"
    "\n"
    "\n"
    "\n"
    "4.\n"
    "Model response: 'As it stands, I cannot provide the correct option letter because there "
    "isn't enough information to solve for 'y'.'\n"
    "Extracted Answer: null\n"
    "\n"
    "\n"
    "\n"
    "5.\n"
    "Model response: 'Given that AB = 17.6 meters, we can now substitute into the equation:\n"
    "\n"
    "d = 17.6 / cos(38°)\n"
    "\n"
    "Therefore, to one decimal place, the distance d between Ned and Bart is approximately 22.3 "
    "meters.'\n"
    "Extracted answer: 22.3\n"
    "\n"
    "\n"
    "\n"
    "6.\n"
    "Model response:  have all the coefficients for the quadratic function:\n"
    "\\( f(x) = ax^2 + bx + c \\)\n"
    "\\( f(x) = -1x^2 - 2x + 1 \\)\n"
    "\n"
    "Therefore, the equation for the graphed function \\( f \\) is:\n"
    "\\( f(x) = -x^2 - 2x + 1 \\)\"'\n"
    "Extracted answer: f(x) = -x^2 - 2x + 1\n"
    "\n"
    "\n"
    "7.\n"
    "Model response: '<<PREDICTION>>'\n"
    "Extracted Answer: "
)

# slots <<QUESTION_FOR_EVAL>>, <<ANSWER>>, <<EXTRACT>>
FACTS_SCORE = (
    "\n"
    "Below are two answers to a math question. Question is [Question], [Standard Answer] is the "
    "standard answer to the question, and [Model_answer] is the answer extracted from a model's "
    "output to this question.  Determine whether these two answers are consistent.\n"
    "Please note that only when the [Model_answer] completely matches the [Standard Answer] "
    "means they are consistent. For non-multiple-choice questions, if the meaning is expressed "
    "in the same way, it is also considered consistent, for example, 0.5m and 50cm.\n"
    "If they are consistent, Judement is 1; if they are different, Judement is 0.\n"
    "\n"
    "\n"
    "\n"
    "[Question]: Write the set of numbers represented on the number line in interval notation.\n"
    "[Standard Answer]: (-2,1]\n"
    "[Model_answer] : Extracted Answer: \\((-2, 1)\\)\n"
    "Judgement: 0\n"
    "\n"
    "\n"
    "\n"
    "[Question]: As shown in the figure, circle O has a radius 1.0, if angle BAC = 60.0, then "
    "the length of BC is ()\n"
    "Choices:\n"
    "A:2\n"
    "B:2√{{3}}\n"
    "C:√{{3}}\n"
    "D:2√{{2}}\n"
    "[Standard Answer]: C\n"
    "[Model_answer] : B:2√{{3}}\n"
    "Judgement: 0\n"
    "\n"
    "\n"
    "\n"
    "[Question]: Find the domain and range of the function f using interval notation.\n"
    "[Standard Answer]: domain: [-4, 0) and range: (-3, 1]\n"
    "[Model_answer] : Range: \\((-4, 1]\\)\n"
    "Judgement: 0\n"
    "\n"
    "\n"
    "\n"
    "[Question]: As shown in the figure, circle O has a radius 1.0, if angle BAC = 60.0, then "
    "the length of BC is ()\n"
    "Choices:\n"
    "A:2\n"
    "B:2√{{3}}\n"
    "C:√{{3}}\n"
    "D:2√{{2}}\n"
    "[Standard Answer]: C\n"
    "[Model_answer] : null\n"
    "Judgement: 0\n"
    "\n"
    "\n"
    "\n"
    "    [Question]: <<QUESTION_FOR_EVAL>>\n"
    "    [Standard Answer]: <<ANSWER>>\n"
    "    [Model_answer] : <<EXTRACT>>\n"
    "    Judgement:"
)

EXTRACT_TAIL = "'\nExtracted Answer: "


def meta(version: str, subject: str, subfield: str) -> str:
    """The `metadata` cell as the TSV holds it: a Python dict literal (one value with an apostrophe)."""
    return str({"split": "testmini", "source": "Ned's geometry book", "subject": subject, "subfield": subfield,
                "problem_version": version})


def row(index, prediction, answer, version, subject, subfield):
    question = f"As shown in the figure, find x ({index})."
    return {"index": index, "problem_index": index, "question": question, "answer": answer,
            "question_type": "free-form", "metadata": meta(version, subject, subfield),
            "query_wo": question, "query_cot": question + " Think step by step.",
            "question_for_eval": f"Q{index}: {question}", "prediction": prediction}


VO, TL, PG, FN = "Vision Only", "Text Lite", "plane geometry", "functions"


def table() -> pd.DataFrame:
    return pd.DataFrame([
        row(1, "So BC = √3, option C.", "C", VO, PG, "Length"),  # extract C == answer: hit without a verdict
        row(2, "The angle is 40 degrees.", "40", TL, PG, "Angle"),  # extract 40° != 40; verdict 1: hit
        row(3, "y = 2x + 1", "y=2x-1", VO, FN, "Coordinate"),  # verdict 0: miss
        row(4, "x is 5", "6", TL, FN, "Coordinate"),  # verdict never 0/1 in five asks: judge_unread, miss
        row(5, "The angle is big.", "30", VO, PG, "Angle"),  # the extraction call fails: judge_error, miss
        row(6, None, "7", TL, PG, "Length"),  # no prediction: inference error, miss
    ])


EXTRACTS = {"So BC = √3, option C.": "C", "The angle is 40 degrees.": "40°", "y = 2x + 1": " y=2x+1",
            "x is 5": "5"}
VERDICTS = {"40°": "1", "y=2x+1": "0 ", "5": "I think 0"}


def keyed(request: JudgeRequest) -> str:
    if request.prompt.endswith(EXTRACT_TAIL):
        prediction = request.prompt.rsplit("7.\nModel response: '", 1)[1].removesuffix(EXTRACT_TAIL)
        if prediction == "The angle is big.":
            raise TimeoutError("judge timed out")
        return EXTRACTS[prediction]
    extract = request.prompt.rsplit("[Model_answer] : ", 1)[1].removesuffix("\n    Judgement:")
    return VERDICTS[extract]


def test_the_prompts_are_the_facts_text():
    assert FACTS_EXTRACT.endswith("Extracted Answer: ") and "B:2√{{3}}" in FACTS_SCORE
    assert extract_prompt("<<PREDICTION>>") == FACTS_EXTRACT
    assert score_prompt("<<QUESTION_FOR_EVAL>>", "<<ANSWER>>", "<<EXTRACT>>") == FACTS_SCORE


def test_scores_breakdown_and_counts_by_hand():
    judge = FunctionJudge(keyed)
    result = score_mathverse(table(), judge)
    per = result.per_sample.set_index("index")
    assert per["hit"].tolist() == [True, True, False, False, False, False]
    assert per["method"].tolist() == ["judge", "judge", "judge", "judge_unread", "judge_error", "inference_error"]
    assert per["extracted"].tolist()[:4] == ["C", "40°", "y=2x+1", "5"]
    assert per["prefetch"].tolist() == [True, False, False, False, False, False]
    assert per.loc[1, "judge"] == "C" and per.loc[3, "judge"] == "0 " and per.loc[4, "judge"] == "I think 0"
    assert per.loc[5, "judge"] is None
    # hits: rows 1 and 2 of 6
    assert result.primary == "Overall" and result.metrics["Overall"] == pytest.approx(100 / 3)
    assert result.counts == {"total": 6, "scored": 6, "hits": 2, "by_rule": 0, "by_judge": 3, "unread": 1,
                             "judge_errors": 1, "inference_errors": 1, "prefetch": 1}
    # over all rows: plane geometry rows 1,2,5,6 -> 2/4; functions rows 3,4 -> 0/2; Length rows 1,6 -> 1/2;
    # Angle rows 2,5 -> 1/2; Coordinate rows 3,4 -> 0/2; Text Lite rows 2,4,6 -> 1/3; Vision Only rows 1,3,5 -> 1/3
    expect = {PG: 50.0, FN: 0.0, "Length": 50.0, "Angle": 50.0, "Coordinate": 0.0, TL: 100 / 3, VO: 100 / 3}
    for name, value in expect.items():
        assert result.metrics[name] == pytest.approx(value), name
    t = result.table.set_index("split")
    assert list(t.index) == [TL, VO]
    assert list(result.table.columns) == ["split", "Overall", FN, PG, "Angle", "Coordinate", "Length"]
    # Text Lite: rows 2 (hit), 4, 6 -> Overall 1/3; plane geometry 2,6 -> 1/2; functions 4 -> 0; Angle 2 -> 1;
    # Coordinate 4 -> 0; Length 6 -> 0. Vision Only: rows 1 (hit), 3, 5 -> 1/3; plane geometry 1,5 -> 1/2;
    # functions 3 -> 0; Length 1 -> 1; Angle 5 -> 0; Coordinate 3 -> 0
    assert t.loc[TL].tolist() == pytest.approx([100 / 3, 0.0, 50.0, 100.0, 0.0, 0.0])
    assert t.loc[VO].tolist() == pytest.approx([100 / 3, 0.0, 50.0, 0.0, 0.0, 100.0])
    assert result.table_suffix == "score" and result.scale.kind == "percent"
    assert any("judge_error" in note for note in result.notes)


def test_prompts_sent_are_the_facts_text_at_vlmevalkits_temperatures():
    df = table()
    judge = FunctionJudge(keyed)
    score_mathverse(df, judge)
    by_index = df.set_index("index")
    extracts = [r for r in judge.asked if r.prompt.endswith(EXTRACT_TAIL)]
    verdicts = [r for r in judge.asked if not r.prompt.endswith(EXTRACT_TAIL)]
    # extraction: rows 1-5 once each at temperature 0 (row 5 fails; row 6 has no prediction)
    assert sorted(r.row for r in extracts) == ["1", "2", "3", "4", "5"]
    for request in extracts:
        expected = FACTS_EXTRACT.replace("<<PREDICTION>>", by_index.loc[int(request.row), "prediction"])
        assert request.prompt == expected and request.temperature == 0.0 and request.max_tokens == MAX_TOKENS == 128
    # verdicts: rows 2, 3 once; row 4 five times at 0, 0.5, 1.0, 1.5, 2.0 (never a bare 0/1); row 1 needs none
    assert sorted(r.row for r in verdicts) == ["2", "3", "4", "4", "4", "4", "4"]
    assert [r.temperature for r in verdicts if r.row == "4"] == list(TEMPERATURES) == [0.0, 0.5, 1.0, 1.5, 2.0]
    stripped = {"2": "40°", "3": "y=2x+1", "4": "5"}  # the extraction as VLMEvalKit's client returns it (stripped)
    for request in verdicts:
        line = by_index.loc[int(request.row)]
        expected = (FACTS_SCORE.replace("<<QUESTION_FOR_EVAL>>", line["question_for_eval"])
                    .replace("<<ANSWER>>", line["answer"]).replace("<<EXTRACT>>", stripped[request.row]))
        assert request.prompt == expected and request.max_tokens == 128


def test_no_problem_version_gives_one_row_and_bad_metadata_names_the_row():
    df = table().drop(columns=["metadata"]).head(3)
    result = score_mathverse(df, FunctionJudge(keyed))
    assert result.table["split"].tolist() == ["none"] and list(result.table.columns) == ["split", "Overall"]
    assert result.metrics == pytest.approx({"Overall": 200 / 3})  # rows 1, 2 of 1-3
    bad = table()
    bad.loc[2, "metadata"] = "{'subject': "
    with pytest.raises(BadRow, match=r"^row 2 \(index 3\), field metadata: not a JSON object"):
        score_mathverse(bad, FunctionJudge(keyed))
