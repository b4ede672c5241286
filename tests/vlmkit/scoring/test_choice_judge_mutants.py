"""choice_judge's pieces one at a time (mutation round 4): the prompt choice and its slots, the CJK range, the row
keys, the rounds' verdicts and the notes. Expectations are written out by hand from VLMEvalKit's rules (facts
sections 2 and 3), not computed with the module."""

from __future__ import annotations

import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common import choice_judge as cj

OPTIONS = {"A": "a cat", "B": "a dog"}


def test_constants_are_vlmevalkits() -> None:
    assert cj.JUDGE_PROMPTS == ("default", "blink")
    assert cj.MCQ_TEMPERATURES == (0.0, 0.0, 0.0)
    assert cj.YORN_TEMPERATURES == (0.0, 0.5, 1.0, 1.5, 2.0)
    assert cj.NO_OPTION == "Z"


def test_options_block_written_out() -> None:
    assert cj.options_block(OPTIONS) == "There are several options: \nA. a cat\nB. a dog\n"
    assert cj.options_block({}) == "There are several options: \n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("\u4e00", True), ("\u9fff", True), ("abc \u6c34 d", True), ("\u4dff", False), ("\ua000", False),
     ("plain", False), ("", False)],
)
def test_cjk_range_ends(text: str, expected: bool) -> None:
    assert cj.has_cjk(text) is expected


def test_prompt_choice_each_way() -> None:
    english = cj.mcq_judge_prompt("Which", OPTIONS, "cat")
    assert english.startswith("You are an AI assistant who will help me to match")
    assert "If the answer says things like refuse" not in english
    assert english.endswith("Question: Which?\nOptions: There are several options: \nA. a cat\nB. a dog\n\n"
                            "Answer: cat\nYour output: ")
    chinese = cj.mcq_judge_prompt("\u732b\u5728\u54ea", OPTIONS, "cat")
    assert chinese.startswith("\u4f60\u662f\u4e00\u4e2a")
    assert chinese.endswith("\u7b54\u6848: cat\n\u8f93\u51fa: ")
    # blink wins over the Chinese prompt
    blink = cj.mcq_judge_prompt("\u732b\u5728\u54ea", OPTIONS, "cat", judge_prompt="blink")
    assert "If the answer says things like refuse" in blink
    assert blink.endswith("Options: There are several options: \nA. a cat\nB. a dog\n\n(Z) Failed\nAnswer: cat\n"
                          "Your output: ")
    assert cj.mcq_judge_prompt("Which", OPTIONS, "cat", judge_prompt="default") == english


def test_unknown_judge_prompt_is_named() -> None:
    with pytest.raises(ValueError, match=r"judge_prompt 'mmbench': choose one of default, blink"):
        cj.mcq_judge_prompt("q", OPTIONS, "p", judge_prompt="mmbench")


def test_slots_are_filled_once_and_braces_kept() -> None:
    # a prediction that holds another slot's name stays literal (one pass, no recursion, no format())
    out = cj.mcq_judge_prompt("{x} {prediction}", OPTIONS, "{question} {options} {0}")
    assert out.endswith("Question: {x} {prediction}?\nOptions: There are several options: \nA. a cat\nB. a dog\n\n"
                        "Answer: {question} {options} {0}\nYour output: ")
    yorn = cj.yorn_judge_prompt("Is it {red}", "{question} yes")
    assert yorn.endswith("Example 3: \nQuestion: Is it {red}?\nAnswer: {question} yes\nYour output: ")
    assert yorn.startswith("You are an AI assistant who will help me to match an answer with two options")


def test_row_keys_suffix_repeats_by_position() -> None:
    assert cj.row_keys([3, 4, 3, 3]) == ["3", "4", "3#2", "3#3"]
    assert cj.row_keys([]) == []


def test_judged_defaults_to_no_error() -> None:
    assert cj.Judged("judge", "A", "A").error is None


def _scripted(replies: dict[str, list[str]]) -> FunctionJudge:
    """A judge replying from a script per prompt; a reply `!` fails the call."""
    def answer(request: JudgeRequest) -> str:
        text = replies[request.prompt][request.attempt]
        if text == "!":
            raise RuntimeError("down")
        return text
    return FunctionJudge(answer)


def test_ask_judge_verdicts() -> None:
    judge = _scripted({"p1": ["B"], "p2": ["huh", "Z"], "p3": ["huh", "what", "no"], "p4": ["!"],
                       "p5": ["huh", "A"]})
    prompts = {"r1": "p1", "r2": "p2", "r3": "p3", "r4": "p4", "r5": "p5"}
    out = cj.ask_judge(judge, prompts, lambda key, reply: cj.read_mcq_reply(reply, OPTIONS), cj.MCQ_TEMPERATURES,
                       no_answer=cj.NO_OPTION)
    assert out["r1"] == cj.Judged("judge", "B", "B")
    assert out["r2"] == cj.Judged("judge", None, "Z")  # Z: read, no option
    assert out["r3"] == cj.Judged("judge_unread", None, "no")
    assert out["r4"].method == "judge_error" and out["r4"].value is None and out["r4"].reply is None
    assert out["r4"].error is not None and "down" in out["r4"].error["message"]
    assert out["r5"] == cj.Judged("judge", "A", "A")
    # three rounds at temperature 0: r3 asked three times, r1 once
    asked = [r.prompt for r in judge.asked]
    assert asked.count("p3") == 3 and asked.count("p1") == 1 and asked.count("p5") == 2
    assert {r.temperature for r in judge.asked} == {0.0}


def test_ask_judge_without_no_answer_keeps_z() -> None:
    judge = _scripted({"p": ["Z"]})
    out = cj.ask_judge(judge, {"r": "p"}, lambda key, reply: cj.read_mcq_reply(reply, OPTIONS), (0.0,))
    assert out["r"] == cj.Judged("judge", "Z", "Z")


def test_ask_judge_with_no_prompts_asks_nothing() -> None:
    judge = _scripted({})
    assert cj.ask_judge(judge, {}, lambda key, reply: reply, (0.0,)) == {}
    assert judge.asked == []


def test_notes_written_out() -> None:
    assert cj.judge_notes([], False, 0) == []
    assert cj.judge_notes([], False, 2) == [
        "rules only (no --judge): 2 answers no rule could read count as misses"]
    assert cj.judge_notes(["judge", "rule"], True, 5) == []
    assert cj.judge_notes(["judge_unread", "judge", "judge_unread", "judge_error"], True, 0) == [
        "2 answer(s) the judge's replies never named an option count as misses (VLMEvalKit scores a random letter "
        "there)",
        "1 judge call(s) failed: those rows count as misses this run and are asked again on the next run",
    ]
    assert cj.judge_notes(["judge_error", "judge_error"], True, 1) == [
        "2 judge call(s) failed: those rows count as misses this run and are asked again on the next run"]


def test_a_call_failing_after_an_unread_reply_keeps_that_reply() -> None:
    judge = _scripted({"p": ["huh", "!"]})
    out = cj.ask_judge(judge, {"r": "p"}, lambda key, reply: cj.read_mcq_reply(reply, OPTIONS), (0.0, 0.0))
    assert out["r"].method == "judge_error" and out["r"].reply == "huh" and out["r"].value is None
