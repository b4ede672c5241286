"""vlmkit.scoring.kinds.qa_judge, the cases mutation testing found unguarded (issue 31): a turn's content as text,
the context before the question, the score read from odd replies (nested objects, other separators, words that end
in `score`), the prompt's role names, and the scorer's per-split table, notes and requests. Each expectation is worked
by hand from the module's docstring."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.fence import unfence
from vlmkit.scoring.kinds.qa_judge import (
    QAJudgement,
    context_turns,
    parse_qa_judgement,
    qa_judge_prompt,
    score_qa_with_judge,
)


# -- a turn's content and the context ------------------------------------------------------------------------------
def test_context_turn_contents_of_every_shape() -> None:
    messages = [
        {"role": "system", "content": None},  # missing content: empty text
        {"role": "user", "content": 42},  # a number: its text
        "not a turn",  # not a dict: dropped
        {"role": "assistant", "content": ["plain", {"type": "text"}, {"type": "video"}, {"kind": "?"},
                                          {"type": "audio_url", "audio_url": {}}, {"type": "text", "text": "t"}]},
        {"role": "user", "content": "the question"},
    ]
    assert context_turns(messages) == [
        ("system", ""), ("user", "42"), ("assistant", "plain\n\n[video]\n[media]\n[audio]\nt"),
    ]


def test_context_with_no_user_turn_is_every_turn_and_an_empty_conversation_falls_back_to_the_system() -> None:
    turns = [{"role": "system", "content": "S"}, {"role": "assistant", "content": "A"}]
    assert context_turns(turns) == [("system", "S"), ("assistant", "A")]
    # the last user turn is the question, even when earlier user turns come first
    turns = [{"role": "user", "content": "u1"}, {"role": "assistant", "content": "a1"},
             {"role": "user", "content": "u2"}, {"role": "assistant", "content": "a2"}]
    assert context_turns(turns) == [("user", "u1"), ("assistant", "a1")]
    assert context_turns([], "Be brief.") == [("system", "Be brief.")]
    assert context_turns((), "  ") == []
    assert context_turns(None, None) == []
    assert context_turns("text, not turns", "Sys") == [("system", "Sys")]
    assert context_turns([{"content": "no role"}, {"role": "user", "content": "q"}]) == [("None", "no role")]


def test_prompt_names_roles_and_lists_context_lines() -> None:
    prompt = qa_judge_prompt("Q?", ["R"], "reply", [("system", "s"), ("tool", "t out"), ("assistant", "a"),
                                                    ("user", "u")])
    assert ("\n\n[Conversation before the question]\nSystem: s\nTool: t out\nAssistant: a\nUser: u\n\n[Question]\nQ?\n"
            in prompt)
    assert "\n[Reference answer]\nR\n" in prompt
    # a single reference is written bare; two get the list title
    two = qa_judge_prompt("Q?", ("x", "y"), "reply")
    assert "[Reference answers (any one of them is correct)]\n- x\n- y\n" in two and "[Reference answer]" not in two
    assert two.startswith("You are a strict and fair grader.") and "\n\n[Question]\nQ?\n" in two
    with pytest.raises(ValueError) as err:
        qa_judge_prompt("Q?", (), "reply")
    assert str(err.value) == "QA judge: a row without a reference answer cannot be judged"


# -- reading the judge's reply -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply, expected",
    [
        # the outer object's score, never a nested object's
        ('{"score": 4, "analysis": "ok", "detail": {"score": 9}}', QAJudgement(4.0, "ok")),
        ('{"detail": {"score": 9}, "score": 2, "analysis": "x"}', QAJudgement(2.0, "x")),
        # an unreadable brace before the object is skipped
        ('{oops} and {not json either {"score": 5, "analysis": "five"}', QAJudgement(5.0, "five")),
        ('{"SCORE": 3, "ANALYSIS": "upper"}', QAJudgement(3.0, "upper")),
        ('{"score": 6}', QAJudgement(6.0, "")),  # no analysis
        ('{"score": 6, "analysis": "  padded  "}', QAJudgement(6.0, "padded")),
        ('{"score": 6, "analysis": 17}', QAJudgement(6.0, "17")),
        ('{"score": 6, "analysis": null}', QAJudgement(6.0, "")),
        ('{"score": " 8 "}', QAJudgement(8.0, "")),  # a number written as text, padded
        ('{"score": 10}', QAJudgement(10.0, "")),  # both ends of the scale are in it
        ('{"score": 0.0}', QAJudgement(0.0, "")),
        ('{"score": "9.5"}', QAJudgement(9.5, "")),
        # the score line when no object holds a score: separators, quotes, the last one
        ("'score' = 7", QAJudgement(7.0, "'score' = 7")),
        ("Score：8", QAJudgement(8.0, "Score：8")),
        ('"Score": "6" and more', QAJudgement(6.0, '"Score": "6" and more')),
        ("score: 2\n...on reflection, score: 7\n", QAJudgement(7.0, "score: 2\n...on reflection, score: 7")),
        ("SCORE   :   4.5 out of 10", QAJudgement(4.5, "SCORE   :   4.5 out of 10")),
        ('{"grade": 3} score = 1', QAJudgement(1.0, '{"grade": 3} score = 1')),
    ],
)
def test_more_replies_that_are_read(reply: str, expected: QAJudgement) -> None:
    got = parse_qa_judgement(reply)
    assert got == expected
    assert type(got.points) is float


@pytest.mark.parametrize(
    "reply",
    [
        "subscore: 5",  # a word ending in score is not a score line
        "score: 11",
        "score: -2",
        "score: 10.5",
        '{"score": -0.5}',
        '{"score": 10.01}',
        '{"score": "1e1"}',
        '{"score": NaN}',
        '{"score": Infinity}',
        '{"score": [7]}',
        '{"score": "7 points"}',
        '{"score": false}',
        '{"score": null}',
        '{"score": 3} {"score": 12}',  # the last object wins, and it is off the scale
    ],
)
def test_more_replies_that_are_not_read(reply: str) -> None:
    assert parse_qa_judgement(reply) is None


def test_a_missing_reply_text_is_not_read() -> None:
    assert parse_qa_judgement(None) is None  # type: ignore[arg-type]


# -- the scorer ----------------------------------------------------------------------------------------------------
def _judge(points_by_reply: dict[str, object]) -> FunctionJudge:
    def answer(request: JudgeRequest) -> str:
        value = points_by_reply[unfence(request.prompt)]
        if isinstance(value, Exception):
            raise value
        return str(value)

    return FunctionJudge(answer, "grader-x")


def test_per_split_table_notes_and_requests_by_hand() -> None:
    table = pd.DataFrame({
        "index": [10, 11, 12, 13, 14, 15],
        "split": ["val", "dev", "val", None, "dev", "val"],
        "question": ["q0", 5.0, None, "q3", "q4", "q5"],
        "answer": ["a", "b", "c", "d", "e", "f"],
        "prediction": ["r0", "r1", "r2", "r3", "Failed to obtain answer via API. (timeout)", "r5"],
    }, dtype=object)  # fmt: skip
    judge = _judge({"r0": '{"score": 10, "analysis": "right"}', "r1": '{"score": 4}', "r2": "no idea",
                    "r3": '{"score": 7}', "r5": ConnectionError("down")})
    result = score_qa_with_judge(table, judge, ("em",), max_tokens=77)
    # points: 10 (val), 4 (dev), unread (val), 7 (none), failed inference (dev), judge error (val)
    assert result.metrics == pytest.approx({"judge_score": (10 + 4 + 7) / 60 * 100, "exact_match": 0.0})
    assert list(result.metrics) == ["judge_score", "exact_match"]
    assert (result.primary, result.scorer, result.table_suffix) == ("judge_score", "qa_judge", "score")
    rows = result.table.to_dict("records")
    assert [r["split"] for r in rows] == ["dev", "none", "val"]
    assert [r["judge_score"] for r in rows] == pytest.approx([20.0, 70.0, 100 / 3])
    assert [r["exact_match"] for r in rows] == pytest.approx([0.0, 0.0, 0.0])
    per = result.per_sample.set_index("index")
    assert per["method"].to_dict() == {10: "judge", 11: "judge", 12: "judge_unread", 13: "judge", 14: "inference_error",
                                       15: "judge_error"}
    assert per.loc[10, "analysis"] == "right" and per.loc[11, "analysis"] == ""
    assert per.loc[13, "score"] == pytest.approx(0.7) and per.loc[12, "judge"] == "no idea"
    assert per["points"].dtype == object and per.loc[12, "points"] is None
    counts = result.counts
    assert (counts["by_rule"], counts["by_judge"], counts["unread"], counts["judge_errors"]) == (0, 3, 1, 1)
    assert result.notes[0] == (
        "judged by grader-x against the reference with vlmkit's prompt (VLMEvalKit has none for custom QA): a score "
        "0-10 per reply; judge_score = mean score / 10 x 100, unread and failed judgements and missing predictions "
        "counting 0")
    assert ("1 row(s) count 0 because the judge's reply held no readable score after every attempt (judge_unread): "
            "index 12") in result.notes
    assert "1 row(s) count 0 because the judge call failed; asked again on the next run (judge_error): index 15" \
        in result.notes
    asked = {r.row: r for r in judge.asked}
    assert sorted(asked) == ["10", "11", "12", "13", "15"]  # the failed inference is never sent
    assert {r.max_tokens for r in judge.asked} == {77}
    assert "[Question]\n5\n" in asked["11"].prompt  # an integral float question prints without .0
    assert "[Question]\n\n" in asked["12"].prompt  # a missing question is empty text
    assert sum(r.row == "12" for r in judge.asked) == 3  # unread: asked at each of the three temperatures


def test_context_reaches_the_judge_from_messages_and_system() -> None:
    table = pd.DataFrame({
        "index": [1, 2],
        "question": ["q1", "q2"],
        "answer": ["x", "y"],
        "prediction": ["p1", "p2"],
        "system": ["Be exact.", None],
        "messages": [None, [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "ok"},
                            {"role": "user", "content": "q2"}]],
    }, dtype=object)  # fmt: skip
    judge = _judge({"p1": '{"score": 1}', "p2": '{"score": 2}'})
    score_qa_with_judge(table, judge, ("em",))
    prompts = {r.row: r.prompt for r in judge.asked}
    assert "[Conversation before the question]\nSystem: Be exact.\n" in prompts["1"]
    assert "[Conversation before the question]\nUser: earlier\nAssistant: ok\n" in prompts["2"]


def test_nothing_judged_gives_a_nan_headline_and_no_notes_of_misses() -> None:
    table = pd.DataFrame({"index": [1], "question": ["q"], "answer": [None], "prediction": ["p"]}, dtype=object)
    judge = _judge({})
    result = score_qa_with_judge(table, judge, ("em", "contains"))
    assert math.isnan(result.metrics["judge_score"]) and list(result.metrics)[0] == "judge_score"
    assert "contains" in result.metrics and result.table is None and result.table_suffix == "score"
    assert result.scorer == "qa_judge" and result.scale.kind == "percent"
    assert not any("row(s) count 0" in n for n in result.notes)
    assert judge.asked == []


def test_all_rows_failed_inference_asks_nobody_and_scores_zero() -> None:
    table = pd.DataFrame({"index": [1, 2], "question": ["q", "r"], "answer": ["a", "b"], "prediction": [None, None]},
                         dtype=object)
    judge = _judge({})
    result = score_qa_with_judge(table, judge, ("em",))
    assert judge.asked == [] and result.metrics["judge_score"] == 0.0
    assert result.per_sample["method"].tolist() == ["inference_error", "inference_error"]
    assert result.counts["by_judge"] == 0 and result.counts["unread"] == 0


@pytest.mark.parametrize(
    "reply, expected",
    [
        # a valid object between two unreadable braces: found by moving one brace on, not by jumping to the last
        ('{bad} {"score": 5, "analysis": "A"} {oops', QAJudgement(5.0, "A")),
        ('{{"score": 5, "analysis": "A"}', QAJudgement(5.0, "A")),  # the object starts one character after the fail
        # after an object, the search goes on from its end: the middle object is not skipped
        ('{"score": 1, "analysis": "a"} {"score": 2, "analysis": "b"} {junk', QAJudgement(2.0, "b")),
    ],
)
def test_objects_found_between_unreadable_braces(reply: str, expected: QAJudgement) -> None:
    assert parse_qa_judgement(reply) == expected


def test_missing_columns_segmenter_and_per_sample_columns() -> None:
    table = pd.DataFrame({"index": [1, 2], "question": ["q", "r"], "answer": ["a b", "c"], "prediction": ["a b", "d"]},
                         dtype=object)
    with pytest.raises(ValueError) as err:
        score_qa_with_judge(table.drop(columns="question"), _judge({}))
    assert str(err.value) == ("QA judge scoring: the predictions table has no `question` column (columns: index, "
                              "answer, prediction)")
    with pytest.raises(ValueError, match="unknown segmenter 'bogus'"):
        score_qa_with_judge(table, _judge({}), ("bleu",), segmenter="bogus")
    judge = _judge({"a b": '{"score": 9}', "d": '{"score": 0}'})
    result = score_qa_with_judge(table, judge, ("em", "bleu"))  # the default segmenter reads BLEU's tokens
    assert result.metrics["judge_score"] == pytest.approx(45.0)
    assert result.metrics["bleu-1"] == pytest.approx(50.0) and result.per_sample["index"].tolist() == [1, 2]
    assert list(result.per_sample.columns)[-5:] == ["points", "score", "analysis", "method", "judge"]
    assert "level_0" not in result.per_sample.columns and list(result.per_sample.columns)[0] == "index"


def test_nothing_judged_keeps_its_headline_name_and_rows_frame() -> None:
    table = pd.DataFrame({"index": [1], "question": ["q"], "answer": [None], "prediction": ["p"]}, dtype=object)
    result = score_qa_with_judge(table, _judge({}), ("em",))
    assert result.primary == "judge_score" and isinstance(result.per_sample, pd.DataFrame)
    assert len(result.per_sample) == 0 and result.counts["no_target"] == 1


def test_text_indices_stay_text_in_the_rows() -> None:
    table = pd.DataFrame({"index": ["q-1", "q-2"], "question": ["q", "r"], "answer": ["a", "b"],
                          "prediction": ["a", "c"]}, dtype=object)
    result = score_qa_with_judge(table, _judge({"a": '{"score": 10}', "c": '{"score": 2}'}), ("em",))
    assert result.per_sample["index"].tolist() == ["q-1", "q-2"]
    assert result.per_sample["points"].tolist() == [10.0, 2.0]
    assert result.metrics["judge_score"] == pytest.approx(60.0)
