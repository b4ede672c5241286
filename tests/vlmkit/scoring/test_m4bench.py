"""M4Bench as VLMEvalKit scores it (vlmeval/dataset/m4bench.py at e8e78f05): `get_ans` on the reply (no judge) or on
the judge's reply, `acc` in percent; values worked by hand from VLMEvalKit's code."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.benchmarks.m4bench import JUDGE_PROMPT, judge_prompt, read_option, score_m4bench

QUERY = "Which picture is brighter?\n(A) the first\n(B) the second\n(C) both"


@pytest.mark.parametrize(("reply", "letter"), [
    ("(B) the second", "B"), ("  (C)", "C"), ("B", "B"), ("B. the second", "B"),
    ("The answer is (B)", "T"),  # the first capital letter it starts with, as get_ans reads it
    (" B", None), ("b", None), ("(b) second", None), ("", None), ("nan", None), ("3", None),
])  # fmt: skip
def test_the_option_is_read_as_get_ans_reads_it(reply, letter):
    assert read_option(reply) == letter


def test_the_judge_prompt_splits_the_query_at_its_first_option():
    prompt = judge_prompt(QUERY, "the second one")  # VLMEvalKit's split drops the first option's `\n(`
    tail = "Question: Which picture is brighter?\nOptions: A) the first\n(B) the second\n(C) both\n" \
           "Answer: the second one\nYour output: "  # fmt: skip
    assert prompt.endswith("Example 3: \n" + tail)
    assert prompt.startswith("You are an AI assistant who will help me to match an answer with several options of a "
                             "single-choice question. ")  # fmt: skip
    assert judge_prompt("No options here", "x").endswith("Question: No options here\nOptions: \nAnswer: x\n"
                                                         "Your output: ")  # fmt: skip
    assert JUDGE_PROMPT.count("{") == 3


def _rows() -> pd.DataFrame:
    return pd.DataFrame([
        {"index": 1, "query": QUERY, "response": "B", "prediction": "(B) the second"},  # right
        {"index": 2, "query": QUERY, "response": "A", "prediction": "A"},  # right
        {"index": 3, "query": QUERY, "response": "C", "prediction": "The answer is (C)"},  # read T: wrong
        {"index": 4, "query": QUERY, "response": "A", "prediction": ""},  # nothing read: wrong
        {"index": 5, "query": QUERY, "response": "B", "prediction": None},  # failed call: a miss
    ])  # fmt: skip


def test_without_a_judge_the_reply_itself_is_read():
    result = score_m4bench(_rows())
    assert result.metrics == {"acc": pytest.approx(40.0)}  # 2 right of 5
    assert result.primary == "acc" and result.scale.kind == "percent"
    assert result.per_sample["extracted"].tolist() == ["B", "A", "T", None, None]
    assert result.counts["inference_errors"] == 1 and result.counts["by_rule"] == 4 and result.counts["unread"] == 1
    assert result.vlmevalkit.metrics == {"acc": pytest.approx(40.0)} and result.vlmevalkit.differing == []


def test_with_a_judge_every_reply_is_judged_and_its_reply_read():
    answers = {"(B) the second": "B", "A": "Z", "The answer is (C)": "(C)", "": "A", "nan": "C"}

    def fn(request: JudgeRequest) -> str:
        reply = request.prompt.rsplit("\nAnswer: ", 1)[1].removesuffix("\nYour output: ")
        return answers[reply]

    judge = FunctionJudge(fn)
    result = score_m4bench(_rows(), judge)
    # judge read: B (right), Z (wrong), C (right), A (right); the failed call is not sent
    assert result.metrics == {"acc": pytest.approx(60.0)}
    assert result.counts["by_judge"] == 4 and result.counts["judge_errors"] == 0
    assert all(r.temperature == 0.0 and r.system is None for r in judge.asked)
    # VLMEvalKit's xlsx round trip shows the empty reply as `nan`: its judge read C there, a miss: 2 of 5
    assert result.vlmevalkit.metrics == {"acc": pytest.approx(40.0)}
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(4, "A", "C")]
    assert len(judge.asked) == 5  # four replies, and the empty one again as VLMEvalKit shows it


def test_a_failed_judge_call_is_a_judge_error_not_a_letter():
    def fn(request: JudgeRequest) -> str:
        if "(B) the second\nYour" in request.prompt:
            raise ConnectionError("down")
        return "A"

    result = score_m4bench(_rows().iloc[:2], FunctionJudge(fn))
    assert result.counts["judge_errors"] == 1 and result.metrics == {"acc": pytest.approx(50.0)}
    assert result.per_sample["method"].tolist() == ["judge_error", "judge"]


def test_an_empty_table_or_a_missing_column_is_refused():
    with pytest.raises(ValueError, match="no rows"):
        score_m4bench(_rows().iloc[:0])
    with pytest.raises(ValueError, match="response"):
        score_m4bench(_rows().drop(columns=["response"]))
