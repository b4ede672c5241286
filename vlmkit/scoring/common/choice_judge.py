"""VLMEvalKit's LLM judge for multiple-choice and Yes/No answers the rules cannot read: its prompts, character for
character (facts sections 2 and 3), how a row's prompt is built, how a reply is read, and the rounds of asking.

MCQ (`extract_answer_from_item`): the BLINK prompt when the dataset asks for it (`judge_prompt="blink"`, a catalog
option: VLMEvalKit keys it on the name `BLINK`, and `BLINK_circular` gets the default), else the Chinese prompt when
the question holds a CJK character (U+4E00..U+9FFF), else the default one. The judge sees text only: the raw question
(the template appends `?`), the options block and the raw prediction; no image, no hint. Up to 3 asks at temperature
0, each reply read with VLMEvalKit's `can_infer` (`vlmevalkit_choice`); a `Z` reply is read: "no option" (a miss).
The model's reply is pasted into the judge prompt unfenced, exactly as VLMEvalKit pastes it: the prompt stays
verbatim so that scores stay comparable with VLMEvalKit's (vlmkit fences the reply only in the prompts it writes
itself: vlmkit.scoring.common.fence).

Y/N (`YOrN_auxeval`): one prompt; up to 5 asks at temperatures 0, 0.5, 1.0, 1.5, 2.0, each reply read with
VLMEvalKit's Y/N rule; still Unknown after the last one: unread.

Where vlmkit differs: after the last unreadable reply VLMEvalKit scores a random letter (unseeded); vlmkit scores a
miss (`judge_unread`) and counts it. A failed judge call is a `judge_error` for that row (a miss this run, counted,
asked again on the next run), never an answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vlmkit.core.cells import index_key
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.scoring.common.choice_reading import vlmevalkit_choice

JUDGE_PROMPTS = ("default", "blink")
MCQ_TEMPERATURES = (0.0, 0.0, 0.0)
YORN_TEMPERATURES = (0.0, 0.5, 1.0, 1.5, 2.0)
NO_OPTION = "Z"  # VLMEvalKit's letter for "none of the options"
_CJK_RE = re.compile("[\u4e00-\u9fff]")

MCQ_PROMPT = (
    "You are an AI assistant who will help me to match an answer with several options of a single-choice question. "
    "You are provided with a question, several options, and an answer, and you need to find which option is most "
    "similar to the answer. If the meaning of all options are significantly different from the answer, output Z. "
    "Your should output a single uppercase character in A, B, C, D (if they are valid options), and Z. \n"
    "Example 1: \n"
    "Question: What is the main object in image?\n"
    "Options: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: a cute teddy bear\n"
    "Your output: A\n"
    "Example 2: \n"
    "Question: What is the main object in image?\n"
    "Options: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: Spider\n"
    "Your output: Z\n"
    "Example 3: \n"
    "Question: {question}?\n"
    "Options: {options}\n"
    "Answer: {prediction}\n"
    "Your output: "
)

MCQ_PROMPT_CN = (
    "你是一个帮助我匹配答案与单选题中多个选项的 AI 助手。你会被提供：一个问题，多个选项，一个答案。"
    "你的任务是找到与答案意义最相近的选项。如果所有选项的意义都与答案显著不同，则输出 Z。"
    "你应该输出一个单个的大写字母，例如 A, B, C, D（如果它们是有效选项），或 Z。"
    "例 1:问题: 图中最主要的物体是什么?\n"
    "选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n"
    "答案: 一只可爱的泰迪熊\n"
    "输出: A\n"
    "例 2: \n"
    "问题: 图中最主要的物体是什么?\n"
    "选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n"
    "答案: 蜘蛛\n"
    "输出: Z\n"
    "例 3: \n"
    "问题: {question}?\n"
    "选项: {options}\n"
    "答案: {prediction}\n"
    "输出: "
)

MCQ_PROMPT_BLINK = (
    "You are an AI assistant who will help me to match an answer with several options of a single-choice question. "
    "You are provided with a question, several options, and an answer, and you need to find which option is most "
    "similar to the answer. If the answer says things like refuse to answer, I'm sorry cannot help, etc., output Z."
    "If the meaning of all options are significantly different from the answer, or the answer does not select any "
    "option, output Z. Your should output one of the choices, A, B, C, D (if they are valid options), or Z.\n"
    "Example 1: \n"
    "Question: Which point is closer to the camera?\n"
    "Select from the following choices.\n"
    "Options: A. Point A\n"
    "B. Point B\n"
    "(Z) Failed\n"
    "Answer: Point B, where the child is sitting, is closer to the camera.\n"
    "Your output: (B)\n"
    "Example 2: \n"
    "Question: Which point is closer to the camera?\n"
    "Select from the following choices.\n"
    "Options: (A) Point A\n"
    "(B) Point B\n"
    "(Z) Failed\n"
    "Answer: I'm sorry, but I can't assist with that request.\n"
    "Your output: (Z)\n"
    "Example 3: \n"
    "Question: Which point is corresponding to the reference point?\n"
    "Select from the following choices.\n"
    "Options: (A) Point A\n"
    "(B) Point B\n"
    "(Z) Failed\n"
    "Answer:The reference point (REF) on the first image is at the tip of the pot, which is the part used to Poke if "
    "the pots were used for that action. Looking at the second image, we need to find the part of the object that "
    "would correspond to poking.\n"
    "(A) Point A is at the tip of the spoon's handle, which is not used for poking.\n"
    "(B) Point B is at the bottom of the spoon, which is not used for poking.\n"
    "(C) Point C is on the side of the pspoonot, which is not used for poking.\n"
    "(D) Point D is at the tip of the spoon, which is not used for poking.\n"
    "\n"
    "Therefore, there is no correct answer in the choices\n"
    "Your output: (Z)\n"
    "Example 4: \n"
    "Question: {question}?\n"
    "Options: {options}\n"
    "(Z) Failed\n"
    "Answer: {prediction}\n"
    "Your output: "
)

YORN_PROMPT = (
    "You are an AI assistant who will help me to match an answer with two options of a question. The options are "
    "only Yes / No. You are provided with a question and an answer, and you need to find which option (Yes / No) is "
    "most similar to the answer. If the meaning of all options are significantly different from the answer, output "
    "Unknown. Your should output a single word among the following 3 choices: Yes, No, Unknown.\n"
    "Example 1: \n"
    "Question: Is the word in this image 'Hello'?\n"
    "Answer: The word in this image is 'Hello'.\n"
    "Your output: Yes\n"
    "Example 2: \n"
    "Question: Is the word in this image 'Hello'?\n"
    "Answer: The word in this image is not 'Hello'.\n"
    "Your output: No\n"
    "Example 3: \n"
    "Question: {question}?\n"
    "Answer: {prediction}\n"
    "Your output: "
)


def options_block(options: Mapping[str, str]) -> str:
    """VLMEvalKit's `build_option_str`: `There are several options: \\n` then `L. text\\n` per option."""
    return "There are several options: \n" + "".join(f"{letter}. {text}\n" for letter, text in options.items())


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def mcq_judge_prompt(question: str, options: Mapping[str, str], prediction: str, judge_prompt: str = "default") -> str:
    """The prompt VLMEvalKit sends its judge for one MCQ row (see the module docstring for the choice)."""
    if judge_prompt not in JUDGE_PROMPTS:
        raise ValueError(f"judge_prompt {judge_prompt!r}: choose one of {', '.join(JUDGE_PROMPTS)}")
    if judge_prompt == "blink":
        template = MCQ_PROMPT_BLINK
    else:
        template = MCQ_PROMPT_CN if has_cjk(question) else MCQ_PROMPT
    # str.replace, not format(): the question or prediction may hold braces
    slots = {"{question}": question, "{options}": options_block(options), "{prediction}": prediction}
    return re.sub(r"\{question\}|\{options\}|\{prediction\}", lambda m: slots[m.group(0)], template)


def yorn_judge_prompt(question: str, prediction: str) -> str:
    """The prompt VLMEvalKit sends its judge for one Y/N row."""
    slots = {"{question}": question, "{prediction}": prediction}
    return re.sub(r"\{question\}|\{prediction\}", lambda m: slots[m.group(0)], YORN_PROMPT)


def read_mcq_reply(reply: str, options: Mapping[str, str]) -> str | None:
    """A judge's MCQ reply read as VLMEvalKit reads it: a letter, `Z` (no option), or None (ask again)."""
    return vlmevalkit_choice(reply, options)


@dataclass
class Judged:
    """One row's verdict from the judge: `method` is judge / judge_unread / judge_error; `value` the letter (or Yes /
    No) read, None for `Z`, unread and errors; `reply` the last raw reply."""

    method: str
    value: str | None
    reply: str | None
    error: dict[str, Any] | None = None


def row_keys(indices: Sequence[Any]) -> list[str]:
    """A distinct key per row for the judge's rounds: the index key, suffixed by the position if it repeats."""
    keys, seen = [], set()
    for pos, idx in enumerate(indices):
        key = index_key(idx)
        if key in seen:
            key = f"{key}#{pos}"
        seen.add(key)
        keys.append(key)
    return keys


def ask_judge(
    judge: Judge,
    prompts: Mapping[str, str],
    read: Callable[[str, str], str | None],
    temperatures: Sequence[float],
    no_answer: str | None = None,
) -> dict[str, Judged]:
    """Ask the rounds (`judge_rounds`) and turn each row's outcome into a Judged. `read(key, reply)`: the value read
    from a reply or None; `no_answer`: a value that is a read reply meaning "none of these" (MCQ `Z`)."""
    if not prompts:
        return {}
    outcomes: dict[str, JudgeOutcome[str]] = judge_rounds(judge, prompts, read, temperatures=temperatures)
    out: dict[str, Judged] = {}
    for key, outcome in outcomes.items():
        if outcome.error is not None:
            out[key] = Judged("judge_error", None, outcome.last_reply, outcome.error)
        elif outcome.value is None:
            out[key] = Judged("judge_unread", None, outcome.last_reply)
        else:
            value = None if outcome.value == no_answer else outcome.value
            out[key] = Judged("judge", value, outcome.last_reply)
    return out


def judge_notes(methods: Sequence[str], judged_any: bool, rule_unread: int) -> list[str]:
    """results.json notes on how the judge (or its absence) decided rows."""
    notes = []
    if not judged_any:
        if rule_unread:
            notes.append(f"rules only (no --judge): {rule_unread} answers no rule could read count as misses")
        return notes
    unread = sum(m == "judge_unread" for m in methods)
    errors = sum(m == "judge_error" for m in methods)
    if unread:
        notes.append(
            f"{unread} answer(s) the judge's replies never named an option count as misses (VLMEvalKit scores a "
            "random letter there)"
        )
    if errors:
        notes.append(
            f"{errors} judge call(s) failed: those rows count as misses this run and are asked again on the next run"
        )
    return notes
