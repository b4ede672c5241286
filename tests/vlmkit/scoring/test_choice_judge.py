"""VLMEvalKit's judge for MCQ and Y/N answers no rule can read: its prompts character for character, and which rows
are sent, how the replies are read and counted, on small hand-worked tables with a judge answering from a key."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd
import pytest

from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.kinds.yorn import ImageYORNDataset
from vlmkit.judging import FunctionJudge, JudgeReply, JudgeRequest, JudgeStopped
from vlmkit.scoring.common.choice_judge import (
    MCQ_PROMPT,
    MCQ_PROMPT_BLINK,
    MCQ_PROMPT_CN,
    YORN_PROMPT,
    mcq_judge_prompt,
    options_block,
    yorn_judge_prompt,
)
from vlmkit.scoring.kinds.mcq import score_mcq
from vlmkit.scoring.kinds.yorn import score_yorn

from tests.support.tsvs import b64, image_bytes, write_tsv

# JSON-escaped copies from the facts file (vlmevalkit-judge-facts.md, sections 2 and 3), pasted verbatim; the BLINK
# prompt has no JSON copy there, so its text block is given as JSON here (it ends with a single space).
OPTIONS_JSON = (
    r'"There are several options: \nA. <<A>>\nB. <<B>>\nC. <<C>>\n"'
)
DEFAULT_JSON = (
    r'"You are an AI assistant who will help me to match an answer with several options of a single-choice'
    r' question. You are provided with a question, several options, and an answer, and you need to find wh'
    r'ich option is most similar to the answer. If the meaning of all options are significantly different '
    r'from the answer, output Z. Your should output a single uppercase character in A, B, C, D (if they ar'
    r'e valid options), and Z. \nExample 1: \nQuestion: What is the main object in image?\nOptions: A. ted'
    r'dy bear B. rabbit C. cat D. dog\nAnswer: a cute teddy bear\nYour output: A\nExample 2: \nQuestion: W'
    r'hat is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\nAnswer: Spider\nYo'
    r'ur output: Z\nExample 3: \nQuestion: <<QUESTION>>?\nOptions: <<OPTIONS>>\nAnswer: <<PREDICTION>>\nYo'
    r'ur output: "'
)
DEFAULT_RENDERED_JSON = (
    r'"You are an AI assistant who will help me to match an answer with several options of a single-choice'
    r' question. You are provided with a question, several options, and an answer, and you need to find wh'
    r'ich option is most similar to the answer. If the meaning of all options are significantly different '
    r'from the answer, output Z. Your should output a single uppercase character in A, B, C, D (if they ar'
    r'e valid options), and Z. \nExample 1: \nQuestion: What is the main object in image?\nOptions: A. ted'
    r'dy bear B. rabbit C. cat D. dog\nAnswer: a cute teddy bear\nYour output: A\nExample 2: \nQuestion: W'
    r'hat is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\nAnswer: Spider\nYo'
    r'ur output: Z\nExample 3: \nQuestion: What is in the image??\nOptions: There are several options: \nA'
    r'. a cat\nB. a dog\n\nAnswer: I think it is a kitten.\nYour output: "'
)
CHINESE_JSON = (
    r'"你是一个帮助我匹配答案与单选题中多个选项的 AI 助手。你会被提供：一个问题，多个选项，一个答案。你的'
    r'任务是找到与答案意义最相近的选项。如果所有选项的意义都与答案显著不同，则输出 Z。你应该输出一个单个的'
    r'大写字母，例如 A, B, C, D（如果它们是有效选项），或 Z。例 1:问题: 图中最主要的物体是什么?\n选项: A. '
    r'泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 一只可爱的泰迪熊\n输出: A\n例 2: \n问题: 图中最主要的物体是什么?\n'
    r'选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 蜘蛛\n输出: Z\n例 3: \n问题: <<QUESTION>>?\n选项: <<OPTIO'
    r'NS>>\n答案: <<PREDICTION>>\n输出: "'
)
YORN_JSON = (
    r'"You are an AI assistant who will help me to match an answer with two options of a question. The opt'
    r'ions are only Yes / No. You are provided with a question and an answer, and you need to find which o'
    r'ption (Yes / No) is most similar to the answer. If the meaning of all options are significantly diff'
    r'erent from the answer, output Unknown. Your should output a single word among the following 3 choice'
    r"""s: Yes, No, Unknown.\nExample 1: \nQuestion: Is the word in this image 'Hello'?\nAnswer: The word in"""
    r""" this image is 'Hello'.\nYour output: Yes\nExample 2: \nQuestion: Is the word in this image 'Hello'?"""
    r"""\nAnswer: The word in this image is not 'Hello'.\nYour output: No\nExample 3: \nQuestion: <<QUESTION"""
    r'>>?\nAnswer: <<PREDICTION>>\nYour output: "'
)
BLINK_TEXT_JSON = (
    r'"You are an AI assistant who will help me to match an answer with several options of a single-choice'
    r' question. You are provided with a question, several options, and an answer, and you need to find wh'
    r"""ich option is most similar to the answer. If the answer says things like refuse to answer, I'm sorry"""
    r' cannot help, etc., output Z.If the meaning of all options are significantly different from the answ'
    r'er, or the answer does not select any option, output Z. Your should output one of the choices, A, B,'
    r' C, D (if they are valid options), or Z.\nExample 1: \nQuestion: Which point is closer to the camera'
    r'?\nSelect from the following choices.\nOptions: A. Point A\nB. Point B\n(Z) Failed\nAnswer: Point B,'
    r' where the child is sitting, is closer to the camera.\nYour output: (B)\nExample 2: \nQuestion: Whic'
    r'h point is closer to the camera?\nSelect from the following choices.\nOptions: (A) Point A\n(B) Poin'
    r"""t B\n(Z) Failed\nAnswer: I'm sorry, but I can't assist with that request.\nYour output: (Z)\nExample"""
    r' 3: \nQuestion: Which point is corresponding to the reference point?\nSelect from the following choi'
    r'ces.\nOptions: (A) Point A\n(B) Point B\n(Z) Failed\nAnswer:The reference point (REF) on the first i'
    r'mage is at the tip of the pot, which is the part used to Poke if the pots were used for that action.'
    r' Looking at the second image, we need to find the part of the object that would correspond to poking'
    r""".\n(A) Point A is at the tip of the spoon's handle, which is not used for poking.\n(B) Point B is at"""
    r' the bottom of the spoon, which is not used for poking.\n(C) Point C is on the side of the pspoonot,'
    r' which is not used for poking.\n(D) Point D is at the tip of the spoon, which is not used for poking'
    r'.\n\nTherefore, there is no correct answer in the choices\nYour output: (Z)\nExample 4: \nQuestion: '
    r'<<QUESTION>>?\nOptions: <<OPTIONS>>\n(Z) Failed\nAnswer: <<PREDICTION>>\nYour output: "'
)

SLOTS = {"{question}": "<<QUESTION>>", "{options}": "<<OPTIONS>>", "{prediction}": "<<PREDICTION>>"}


def _slotted(template: str) -> str:
    for ours, theirs in SLOTS.items():
        template = template.replace(ours, theirs)
    return template


def test_prompt_templates_equal_the_facts() -> None:
    assert _slotted(MCQ_PROMPT) == json.loads(DEFAULT_JSON)
    assert _slotted(MCQ_PROMPT_CN) == json.loads(CHINESE_JSON)
    assert _slotted(MCQ_PROMPT_BLINK) == json.loads(BLINK_TEXT_JSON)
    assert _slotted(YORN_PROMPT) == json.loads(YORN_JSON)
    assert options_block({"A": "<<A>>", "B": "<<B>>", "C": "<<C>>"}) == json.loads(OPTIONS_JSON)


def test_rendered_prompts_equal_the_facts_example() -> None:
    options = {"A": "a cat", "B": "a dog"}
    got = mcq_judge_prompt("What is in the image?", options, "I think it is a kitten.")
    assert got == json.loads(DEFAULT_RENDERED_JSON)
    # the same slots in the other templates: every other character is the template's
    block = options_block(options)
    filled = {
        "<<QUESTION>>": "What is in the image?", "<<OPTIONS>>": block, "<<PREDICTION>>": "I think it is a kitten."
    }

    def fill(text: str) -> str:
        for slot, value in filled.items():
            text = text.replace(slot, value)
        return text

    assert mcq_judge_prompt("What is in the image?", options, "I think it is a kitten.", "blink") == fill(
        json.loads(BLINK_TEXT_JSON)
    )
    cn = mcq_judge_prompt("图中是什么?", options, "一只猫 {not a slot}")
    assert cn == json.loads(CHINESE_JSON).replace("<<QUESTION>>", "图中是什么?").replace("<<OPTIONS>>", block).replace(
        "<<PREDICTION>>", "一只猫 {not a slot}"
    )
    yn = yorn_judge_prompt("Is there a dog", "There is a {dog}.")
    assert yn == json.loads(YORN_JSON).replace("<<QUESTION>>", "Is there a dog").replace(
        "<<PREDICTION>>", "There is a {dog}."
    )


def test_prompt_choice() -> None:
    options = {"A": "cat", "B": "dog"}
    assert mcq_judge_prompt("What is it?", options, "x").startswith("You are an AI assistant")
    assert "例 3" in mcq_judge_prompt("这是什么动物", options, "x")  # a CJK character in the question
    assert "例 3" not in mcq_judge_prompt("What is it? ー", options, "x")  # outside U+4E00..U+9FFF
    assert "(Z) Failed\nAnswer: x" in mcq_judge_prompt("这是什么动物", options, "x", "blink")  # BLINK wins over CJK
    with pytest.raises(ValueError, match="judge_prompt 'BLINK'"):
        mcq_judge_prompt("q", options, "x", "BLINK")


# --- MCQ ---------------------------------------------------------------------------------------------------------

ANIMALS = {"A": "cat", "B": "dog", "C": "bird", "D": "fish"}


def _keyed(replies: dict[str, str | Exception]) -> FunctionJudge:
    """A judge answering from a key: the row's index key -> the reply (an exception: the call fails)."""

    def answer(request: JudgeRequest) -> str:
        reply = replies[request.row or ""]
        if isinstance(reply, Exception):
            raise reply
        return reply

    return FunctionJudge(answer, name="keyed")


def _mcq_row(index, prediction, answer, options=ANIMALS, question="What animal is this?"):
    return {"index": index, "question": question, "prediction": prediction, "answer": answer, **options}


def _asked(judge: FunctionJudge) -> list[tuple[str | None, int, float]]:
    return [(r.row, r.attempt, r.temperature) for r in judge.asked]


def test_mcq_judge_reads_only_the_rows_no_rule_reads() -> None:
    df = pd.DataFrame(
        [
            _mcq_row(1, "B", "B"),  # exact: hit
            _mcq_row(2, "The answer is C.", "D"),  # marker: miss, not judged
            _mcq_row(3, "It has fur and barks, a loyal pet.", "B"),  # judge: B, hit
            _mcq_row(4, "Something with scales.", "D"),  # judge: `The answer is D` read as D, hit
            _mcq_row(5, "No idea at all", "A"),  # judge: Z, a miss
            _mcq_row(6, "Hmm", "A"),  # three unreadable replies: judge_unread, a miss
            _mcq_row(7, "Whatever", "C"),  # the call fails: judge_error, a miss
            _mcq_row(8, None, "A"),  # inference error: never judged
            _mcq_row(9, "Something", "E"),  # invalid target: a miss whatever is read, not judged
            _mcq_row(10, "<think>B, surely</think>", "B"),  # no answer after the reasoning: nothing to judge
        ]
    )
    judge = _keyed({"3": "B", "4": "The answer is D", "5": "Z", "6": "I cannot tell", "7": RuntimeError("boom")})
    res = score_mcq(df, circular=False, judge=judge)
    assert res.metrics["Overall"] == pytest.approx(3 / 10)
    ps = res.per_sample.set_index("index")
    assert ps["hit"].tolist() == [True, False, True, True, False, False, False, False, False, False]
    assert ps["method"].tolist() == [
        "exact", "marker", "judge", "judge", "judge", "judge_unread", "judge_error", "inference_error", "unparsed",
        "unparsed",
    ]  # fmt: skip
    assert ps["extracted"].tolist()[:7] == ["B", "C", "B", "D", None, None, None]
    assert ps["judge"].tolist() == [None, None, "B", "The answer is D", "Z", "I cannot tell", None, None, None, None]
    c = res.counts
    assert (c["by_rule"], c["by_judge"], c["unread"], c["judge_errors"], c["judge_asked"]) == (2, 3, 3, 1, 5)
    assert (c["unparsed"], c["inference_errors"], c["invalid_target"]) == (7, 1, 1)
    # asked for vlmkit: rows 3, 4, 5, 7 once; row 6 three times at temperature 0. For VLMEvalKit's figure, whose
    # rule (can_infer) reads rows 1 and 2 only: the same prompts are not asked again, but rows 9 (`Something`) and
    # 10 (the whole reply, reasoning included, is its answer) are asked once each (no key: the call fails)
    assert sorted(_asked(judge)) == sorted(
        [("3", 0, 0.0), ("4", 0, 0.0), ("5", 0, 0.0), ("7", 0, 0.0), ("6", 0, 0.0), ("6", 1, 0.0), ("6", 2, 0.0),
         ("9", 0, 0.0), ("10", 0, 0.0)]
    )
    fig = res.vlmevalkit
    assert fig.metrics["Overall"] == pytest.approx(3 / 10) and fig.differing == []
    assert ps["vlmevalkit"].tolist() == ["B", "C", "B", "D", "Z", None, None, None, None, None]
    sent = {r.row: r.prompt for r in judge.asked}
    assert sent["3"] == mcq_judge_prompt("What animal is this?", ANIMALS, "It has fur and barks, a loyal pet.")
    assert any("judge's replies never named an option" in n for n in res.notes)
    assert any("1 judge call(s) failed" in n for n in res.notes)
    assert not any(n.startswith("rules only") for n in res.notes)


def test_mcq_judge_sees_the_answer_not_the_reasoning_and_the_chinese_prompt() -> None:
    df = pd.DataFrame(
        [
            _mcq_row(1, "<think>Is it A? B?</think>\n\nIt barks.", "B"),
            _mcq_row(2, "它会叫。", "B", question="这是什么动物"),
        ]
    )
    judge = _keyed({"1": "B", "2": "B"})
    res = score_mcq(df, circular=False, judge=judge)
    assert res.metrics["Overall"] == pytest.approx(1.0)
    sent = {r.row: r.prompt for r in judge.asked if "<think>" not in r.prompt}
    assert sent["1"] == mcq_judge_prompt("What animal is this?", ANIMALS, "It barks.")
    # VLMEvalKit's figure: its judge sees the whole reply, as VLMEvalKit keeps it (no SPLIT_THINK)
    theirs = [r.prompt for r in judge.asked if "<think>" in r.prompt]
    assert theirs == [mcq_judge_prompt("What animal is this?", ANIMALS, "<think>Is it A? B?</think>\n\nIt barks.")]
    assert res.vlmevalkit.metrics["Overall"] == pytest.approx(1.0)
    assert sent["2"] == mcq_judge_prompt("这是什么动物", ANIMALS, "它会叫。") and "例 3" in sent["2"]


def test_mcq_without_a_judge_is_rules_only_and_says_so() -> None:
    df = pd.DataFrame([_mcq_row(1, "B", "B"), _mcq_row(2, "Hmm", "A"), _mcq_row(3, "No clue", "A")])
    res = score_mcq(df, circular=False)
    assert list(res.per_sample.columns) == ["index", "extracted", "method", "hit", "vlmevalkit", "vlmevalkit_hit"]
    assert res.per_sample["method"].tolist() == ["exact", "unparsed", "unparsed"]
    assert (res.counts["by_judge"], res.counts["unread"], res.counts["judge_asked"]) == (0, 2, 0)
    assert "rules only (no --judge): 2 answers no rule could read count as misses" in res.notes


def test_mcq_judge_needs_the_question() -> None:
    df = pd.DataFrame([_mcq_row(1, "Hmm", "A")]).drop(columns="question")
    with pytest.raises(ValueError, match="`question`"):
        score_mcq(df, circular=False, judge=_keyed({"1": "A"}))
    # nothing to judge: no question needed
    assert score_mcq(df.assign(prediction="A"), circular=False, judge=_keyed({})).metrics["Overall"] == 1.0


class _Unreachable:
    name = "unreachable"

    def ask(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        raise JudgeStopped("judge: cannot reach http://127.0.0.1:9/v1")


def test_a_judge_that_cannot_work_stops_scoring() -> None:
    df = pd.DataFrame([_mcq_row(1, "Hmm", "A")])
    with pytest.raises(JudgeStopped, match="cannot reach"):
        score_mcq(df, circular=False, judge=_Unreachable())
    with pytest.raises(JudgeStopped):
        score_yorn(pd.DataFrame([{"index": 1, "question": "Q", "prediction": "Hmm", "answer": "Yes"}]),
                   judge=_Unreachable())


def _circular_rows() -> list[dict]:
    """Six questions (cat is right), two rotations each: index g (A=cat, B=dog) and g + 1e6 (A=dog, B=cat)."""
    unread = "No clue."
    plans = {
        1: ("A", "B"),  # both right by rule: hit, never judged
        2: ("B", unread),  # a wrong rule letter: miss, its unread rotation is not judged
        3: ("A", unread),  # the rotation judged right: hit
        4: (unread, "B"),  # the main row judged wrong: miss
        5: (unread, "B"),  # the judge call fails: miss
        6: (unread, None),  # a failed inference: miss, not judged
    }
    rows = []
    for g, preds in plans.items():
        for k, pred in enumerate(preds):
            options = {"A": "cat", "B": "dog"} if k == 0 else {"A": "dog", "B": "cat"}
            rows.append(_mcq_row(g + k * 1_000_000, pred, "A" if k == 0 else "B", options=options,
                                 question=f"Q{g}"))
    return rows


def test_circular_groups_with_a_wrong_rule_letter_are_never_judged() -> None:
    judge = _keyed({"1000003": "B", "4": "B", "5": RuntimeError("timeout")})
    res = score_mcq(pd.DataFrame(_circular_rows()), circular=True, judge=judge)
    assert sorted(r for r, _, _ in _asked(judge)) == ["1000003", "4", "5"]
    assert res.metrics["Overall"] == pytest.approx(2 / 6)
    ps = res.per_sample.set_index("index")
    assert ps.loc[1_000_002, "method"] == "unparsed" and ps.loc[1_000_002, "judge"] is None
    assert ps.loc[1_000_003, "method"] == "judge" and ps.loc[3, "group_hit"]
    assert ps.loc[4, "extracted"] == "B" and not ps.loc[4, "group_hit"]
    assert ps.loc[5, "method"] == "judge_error" and ps.loc[5, "extracted"] is None
    assert ps.loc[6, "method"] == "unparsed" and ps.loc[1_000_006, "method"] == "inference_error"
    c = res.counts
    assert (c["groups"], c["by_rule"], c["by_judge"], c["unread"], c["judge_errors"]) == (6, 6, 2, 2, 1)
    # without a judge the same table: rules only, the judged group 3 is a miss too
    rules = score_mcq(pd.DataFrame(_circular_rows()), circular=True)
    assert rules.metrics["Overall"] == pytest.approx(1 / 6)
    assert "rules only (no --judge): 5 answers no rule could read count as misses" in rules.notes


# --- Y/N ---------------------------------------------------------------------------------------------------------


def _mme_table() -> pd.DataFrame:
    rows = [
        ("existence", "img1", "Yes", "Yes"),  # rule
        ("existence", "img1", "Hmm, hard to say.", "No"),  # judge: No, hit
        ("existence", "img2", "It's there.", "Yes"),  # judge says Unknown five times: judge_unread, a miss
        ("existence", "img2", "No", "No"),  # rule
        ("count", "img3", "Yes", "Yes"),  # rule
        ("count", "img3", "I see three of them.", "No"),  # judge call fails: judge_error, a miss
    ]
    return pd.DataFrame(
        [{"index": i, "category": c, "image_path": p, "question": f"Q{i}", "prediction": pred, "answer": a}
         for i, (c, p, pred, a) in enumerate(rows)]
    )


def test_yorn_mme_with_a_judge() -> None:
    judge = _keyed({"1": "No", "2": "Unknown", "5": RuntimeError("HTTP 500")})
    res = score_yorn(_mme_table(), "mme", judge=judge)
    # existence: acc 3/4, acc+ 1/2 (img1 both right) -> 75 + 50; count: acc 1/2, acc+ 0 -> 50
    assert res.metrics["existence"] == pytest.approx(125.0)
    assert res.metrics["count"] == pytest.approx(50.0)
    assert res.metrics["Overall"] == pytest.approx(175.0)
    assert sorted(_asked(judge)) == sorted(
        [("1", 0, 0.0), ("5", 0, 0.0), ("2", 0, 0.0), ("2", 1, 0.5), ("2", 2, 1.0), ("2", 3, 1.5), ("2", 4, 2.0)]
    )
    assert {r.row: r.prompt for r in judge.asked}["1"] == yorn_judge_prompt("Q1", "Hmm, hard to say.")
    ps = res.per_sample.set_index("index")
    assert ps["method"].tolist() == ["parsed", "judge", "judge_unread", "parsed", "parsed", "judge_error"]
    assert ps["extracted"].tolist() == ["Yes", "No", "Unknown", "No", "Yes", "Unknown"]
    assert ps["judge"].tolist() == [None, "No", "Unknown", None, None, None]
    c = res.counts
    assert (c["by_rule"], c["by_judge"], c["unread"], c["judge_errors"], c["judge_asked"]) == (3, 1, 1, 1, 3)
    assert c["unparsed"] == 3


def test_yorn_pope_with_a_judge() -> None:
    rows = [
        ("Yes", "Yes"),  # TP by rule
        ("Possibly, the object is there.", "Yes"),  # judge: Yes -> TP
        ("It is absent.", "No"),  # judge: `No.` -> TN
        ("Can't say.", "Yes"),  # judge never says yes or no: Unknown counts as No -> FN
        ("Yes", "No"),  # FP by rule
    ]
    df = pd.DataFrame([{"index": i, "question": f"Q{i}", "prediction": p, "answer": a, "category": "adversarial"}
                       for i, (p, a) in enumerate(rows)])
    judge = _keyed({"1": "Yes", "2": "No.", "3": "I cannot decide"})
    res = score_yorn(df, "pope", judge=judge)
    # precision 2/3, recall 2/3, F1 2/3; accuracy 3/5
    assert res.metrics["Overall"] == pytest.approx(200 / 3)
    assert res.metrics["acc"] == pytest.approx(60.0)
    assert res.metrics["adversarial/precision"] == pytest.approx(200 / 3)
    assert len(judge.asked) == 1 + 1 + 5
    rules = score_yorn(df, "pope")
    assert "judge" not in rules.per_sample.columns
    assert "rules only (no --judge): 3 answers no rule could read count as misses" in rules.notes
    assert rules.metrics["acc"] == pytest.approx(20.0)


# --- datasets pass the judge and their prompt choice ----------------------------------------------------------------


def test_datasets_pass_the_judge_and_the_blink_prompt(lmu_root) -> None:
    jpeg = b64(image_bytes())
    rows = [{"index": i, "image": jpeg, "question": "Which point is closer", "A": "Point A", "B": "Point B",
             "answer": "B"} for i in range(2)]
    write_tsv(lmu_root / "BL.tsv", rows)
    blink = ImageMCQDataset("BL", root=lmu_root, progress=False, judge_prompt="blink")
    assert blink.info()["scorer"] == {"scorer": "mcq", "circular": False, "judge_prompt": "blink"}
    judge = _keyed({"1": "(B)"})
    res = blink.evaluate(blink.data.assign(prediction=["B", "The second one."]), judge=judge)
    assert res.metrics["Overall"] == pytest.approx(1.0)
    assert [r.prompt for r in judge.asked] == [
        mcq_judge_prompt("Which point is closer", {"A": "Point A", "B": "Point B"}, "The second one.", "blink")
    ]
    plain = ImageMCQDataset("BL", root=lmu_root, progress=False)
    judge = _keyed({"1": "B"})
    plain.evaluate(plain.data.assign(prediction=["B", "The second one."]), judge=judge)
    assert "(Z) Failed" not in judge.asked[0].prompt
    with pytest.raises(ValueError, match="judge_prompt 'BLINK'"):
        ImageMCQDataset("BL", root=lmu_root, progress=False, judge_prompt="BLINK")

    yn_rows = [{"index": i, "image": jpeg, "question": "Is it red", "answer": "Yes"} for i in range(2)]
    write_tsv(lmu_root / "YN.tsv", yn_rows)
    yorn = ImageYORNDataset("YN", root=lmu_root, progress=False)
    judge = _keyed({"1": "Yes"})
    res = yorn.evaluate(yorn.data.assign(prediction=["Yes", "It is crimson."]), judge=judge)
    assert res.metrics["Overall"] == pytest.approx(100.0) and res.counts["by_judge"] == 1
