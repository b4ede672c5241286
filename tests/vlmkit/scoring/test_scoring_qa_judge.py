"""vlmkit.scoring.kinds.qa_judge: the prompt text, reading the judge's reply, and the judged QA scores worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest, JudgeStopped
from vlmkit.scoring.common.fence import unfence
from vlmkit.scoring.kinds.qa_judge import (
    JUDGE_TEMPERATURES,
    QAJudgement,
    context_turns,
    parse_qa_judgement,
    qa_judge_prompt,
    score_qa_with_judge,
)

# The whole prompt for one row as it was before the reply was fenced, written out: the documented text must not drift
# unnoticed (the fence's two lines and its rule are checked in tests/vlmkit/scoring/test_judge_prompt_fence.py).
EXPECTED_PROMPT = """\
You are a strict and fair grader. Compare a model's reply with the reference answer to a question, and score how \
well the reply answers the question.

[Conversation before the question]
System: Answer briefly.
User: Hi
Assistant: Hello!

[Question]
What is the capital of France?

[Reference answer]
Paris

[Model reply]
It is Paris.

Scoring rules:
- The reference answer is correct by definition. Judge the reply by whether it agrees with the reference on the \
points that matter.
- Wording, language, length and extra correct explanation do not lower the score; extra content that is wrong or \
contradicts the reference does.
- A reply that refuses, is empty, or answers a different question scores 0.

Scale (an integer from 0 to 10):
10 = fully correct: the same answer as the reference, nothing wrong.
7-9 = correct in substance, with a minor omission or imprecision that does not change the answer.
4-6 = partly correct: some key points match the reference, others are missing or wrong.
1-3 = mostly wrong: only a small part is correct.
0 = wrong, contradicts the reference, irrelevant, a refusal or no answer.

Answer with one JSON object and nothing else, with the analysis in the language of the question:
{"analysis": "<one to three sentences: what matches the reference, what is missing or wrong>", "score": <integer 0-10>}"""


def test_prompt_text_is_exactly_the_documented_one():
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    prompt = qa_judge_prompt("What is the capital of France?", ["Paris"], "It is Paris.", context_turns(messages))
    lines = prompt.split("\n")
    begin = lines.index("[Model reply]") + 1
    token = lines[begin].removeprefix("<<<reply ").removesuffix(">>>")
    assert lines[begin:begin + 3] == [f"<<<reply {token}>>>", "It is Paris.", f"<<<end of reply {token}>>>"]
    rule = lines.index("Scoring rules:") + 1
    assert lines[rule].startswith(f"- The model reply is exactly the text between the lines <<<reply {token}>>> and ")
    unfenced = lines[:begin] + [lines[begin + 1]] + lines[begin + 3:rule] + lines[rule + 1:]
    assert "\n".join(unfenced) == EXPECTED_PROMPT


def test_prompt_without_context_and_with_several_references():
    prompt = qa_judge_prompt("2+2?", ["4", "four"], "It is {4}.")
    assert "[Conversation before the question]" not in prompt
    assert "\n\n[Question]\n2+2?\n\n[Reference answers (any one of them is correct)]\n- 4\n- four\n\n" in prompt
    assert unfence(prompt) == "It is {4}."  # braces in the data are text, not template slots
    assert context_turns(None, "Be terse.") == [("system", "Be terse.")]
    assert context_turns([{"role": "user", "content": [{"type": "image", "value": "a.png"},
                                                       {"type": "text", "value": "what?"}]},
                          {"role": "assistant", "content": "a cat"}, {"role": "user", "content": "colour?"}]) == [
        ("user", "[image]\nwhat?"), ("assistant", "a cat")]
    with pytest.raises(ValueError):
        qa_judge_prompt("q", [], "r")


@pytest.mark.parametrize(
    "reply, expected",
    [
        ('{"analysis": "Matches.", "score": 10}', QAJudgement(10.0, "Matches.")),
        ('```json\n{"analysis": "Half right.", "score": "5"}\n```', QAJudgement(5.0, "Half right.")),
        ('<think>maybe {"score": 1}</think>{"score": 8, "analysis": "Close."}', QAJudgement(8.0, "Close.")),
        ('{"score": 2, "analysis": "a"} then corrected: {"analysis": "b", "score": 7}', QAJudgement(7.0, "b")),
        ('{"analysis": "Partly.", "score": 7.5}', QAJudgement(7.5, "Partly.")),
        ('{"Analysis": "Caps.", "Score": 0}', QAJudgement(0.0, "Caps.")),
        ("The reply is right.\nScore: 9/10", QAJudgement(9.0, "The reply is right.\nScore: 9/10")),
    ],
)
def test_replies_that_are_read(reply, expected):
    assert parse_qa_judgement(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot decide.",
        '{"analysis": "Too good.", "score": 11}',
        '{"analysis": "Negative.", "score": -1}',
        '{"analysis": "No number.", "score": "high"}',
        '{"analysis": "Boolean.", "score": true}',
        '{"analysis": "missing score"}',
        '{"analysis": "x", "score": 12} Score: 8',  # the JSON object says 12: never fall back to a guess
        "<think>Score: 8</think>I would rather not say.",  # reasoning is never read as the answer
        "",
    ],
)
def test_replies_that_are_not_read(reply):
    assert parse_qa_judgement(reply) is None


REPLIES = {  # the judge's answers, keyed by the model reply it is shown
    "Paris.": '{"analysis": "Same city as the reference.", "score": 10}',
    "five": '{"analysis": "Wrong number.", "score": 3}',
    "unsure": "I cannot tell.",
}


def _keyed_judge() -> FunctionJudge:
    def answer(request: JudgeRequest) -> str:
        reply = unfence(request.prompt)
        if reply == "boom":
            raise ConnectionError("judge down for this row")
        if reply == "navy":  # unreadable the first time, read on the second ask
            return "hmm" if request.attempt == 0 else '{"analysis": "Close shade.", "score": 6}'
        return REPLIES[reply]

    return FunctionJudge(answer, "keyed")


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "index": [1, 2, 3, 4, 5, 6, 7],
            "question": ["Capital of France?", "2+2?", "Colour?", "Letter?", "Name?", "X?", "Colour of sky?"],
            "answer": ["Paris", "4", None, ["a", "b"], "Bob", "x", "blue"],
            "prediction": ["Paris.", "five", "red", "unsure", None, "boom", "navy"],
        },
        dtype=object,
    )


def test_judged_scores_worked_out_by_hand():
    judge = _keyed_judge()
    result = score_qa_with_judge(_table(), judge)
    # rows with a reference: 1, 2, 4, 5, 6, 7 -> points 10, 3, unread, no prediction, judge error, 6
    assert result.scorer == "qa_judge" and result.primary == "judge_score"
    assert result.metrics["judge_score"] == pytest.approx((10 + 3 + 0 + 0 + 0 + 6) / (6 * 10) * 100)
    assert result.metrics["exact_match"] == pytest.approx(100 / 6)  # text_qa beside it: only "Paris." matches
    assert result.metrics["contains"] == pytest.approx(100 / 6)
    assert result.scale.kind == "percent"
    per = result.per_sample.set_index("index")
    assert per.loc[1, "points"] == 10.0 and per.loc[1, "score"] == 1.0 and per.loc[1, "method"] == "judge"
    assert per.loc[1, "analysis"] == "Same city as the reference."
    assert per.loc[2, "points"] == 3.0 and per.loc[2, "score"] == pytest.approx(0.3)
    assert per.loc[7, "points"] == 6.0 and per.loc[7, "judge"] == '{"analysis": "Close shade.", "score": 6}'
    # unread, failed and unasked rows get no score at all (never a guessed one)
    assert (per.loc[4, "method"], per.loc[4, "points"], per.loc[4, "score"]) == ("judge_unread", None, None)
    assert per.loc[4, "judge"] == "I cannot tell."
    assert (per.loc[6, "method"], per.loc[6, "points"], per.loc[6, "judge"]) == ("judge_error", None, None)
    assert (per.loc[5, "method"], per.loc[5, "judge"]) == ("inference_error", None)
    assert 3 not in per.index  # no reference: not scored, never sent to the judge
    assert per.loc[2, "exact_match"] == 0.0  # text_qa's per-row columns stay beside the judge's
    counts = result.counts
    assert (counts["by_judge"], counts["unread"], counts["judge_errors"], counts["by_rule"]) == (3, 1, 1, 0)
    assert (counts["scored"], counts["no_target"], counts["inference_errors"]) == (6, 1, 1)
    assert any("judge_unread" in n and "index 4" in n for n in result.notes)
    assert any("judge_error" in n and "index 6" in n for n in result.notes)
    # who was asked, how often, at which temperature
    asked = [(r.row, r.attempt, r.temperature) for r in judge.asked]
    by_row: dict[str, list[tuple[int, float]]] = {}
    for row, attempt, temperature in asked:
        by_row.setdefault(row, []).append((attempt, temperature))
    assert by_row == {  # requests name their row by its index key
        "1": [(0, 0.0)], "2": [(0, 0.0)], "4": list(enumerate(JUDGE_TEMPERATURES)), "6": [(0, 0.0)],
        "7": [(0, 0.0), (1, 0.5)],
    }
    assert result.table["judge_score"].tolist() == pytest.approx([result.metrics["judge_score"]])


def test_prompt_sent_holds_question_reference_and_reply():
    judge = _keyed_judge()
    score_qa_with_judge(_table().iloc[[1]], judge)
    prompt = judge.asked[0].prompt
    assert "[Question]\n2+2?\n" in prompt and "[Reference answer]\n4\n" in prompt and unfence(prompt) == "five"


def test_no_reference_anywhere_asks_nobody():
    judge = _keyed_judge()
    table = _table().iloc[[2]]
    result = score_qa_with_judge(table, judge)
    assert judge.asked == [] and math.isnan(result.metrics["judge_score"]) and result.counts["scored"] == 0


def test_judge_stopped_is_let_through():
    def down(request: JudgeRequest) -> str:
        raise AssertionError("not called")

    class Stopped(FunctionJudge):
        def ask(self, requests):
            raise JudgeStopped("judge unreachable")

    with pytest.raises(JudgeStopped):
        score_qa_with_judge(_table(), Stopped(down, "down"))


def test_context_of_openai_style_parts():
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:..."}},
                                             {"type": "text", "text": "What is this?"}]},
                {"role": "assistant", "content": "A dog."}, {"role": "user", "content": "Its colour?"}]
    assert context_turns(messages) == [("user", "[image]\nWhat is this?"), ("assistant", "A dog.")]
