"""CMMMU (CMMMU_VAL) as VLMEvalKit scores it (vlmeval/dataset/cmmmu.py CMMMU.evaluate at e8e78f05), by the row's
`type`:
- 选择 (multiple choice): VLMEvalKit's get_multi_choice_prediction over A-D and the options `option1`..`option4`:
  the reply stripped of , . ! ? ; : ' at its ends; every `(X)` counted, else every bare letter X (anywhere), else every
  occurrence of an option's text; the most counted letters joined in A-D order; right when equal to the answer.
- 判断 (true/false): the reply's key phrases (get_TF_prediction: per sentence, the shortest tail after 是, 为, 所以,
  判断, 陈述, 说法, 表达, 答案 or 结果), those holding an ambiguous phrase dropped; each counts as positive when it
  holds 正确/对/准确/肯定, else negative when it holds 不对/错误/不正确/不准确/不合适/否定/错的/错; the larger count
  decides 对 or 错.
- anything else (填空, fill in the blank): the key phrases (get_fill_blank_prediction: also after 等于, 方案, 选择,
  正确答案, 因此, 最后, and `=` in the last sentence) and the numbers in them, normalised (a number rounded to 2
  places; a text much longer than the answer dropped); right when a phrase contains the answer's text, or a number
  equals the answer's number.
Figures (fractions): `总准确率` (VLMEvalKit's overall accuracy) and the accuracy of each category present.

Where VLMEvalKit picks at random: a multiple-choice reply in which nothing is found is given a random letter, and a
true/false reply with as many positive as negative phrases a random verdict (Python's unseeded random.choice), so
its figure changes from run to run. vlmkit scores such a row by the chance the pick is right (1/4 when the answer is
one of A-D, 1/2 when it is 对 or 错, else 0): the expected value of VLMEvalKit's figure, and says how many rows it
took. Where vlmkit differs: a fill-in row counts at most once (VLMEvalKit adds one for every matching phrase, so a row
can count twice; its figure, `EvalResult.vlmevalkit`, does); a failed call is a miss; a category outside CMMMU's six
is refused in one line (VLMEvalKit stops on it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_texts
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

CATEGORIES = ("技术与工程", "科学", "健康与医学", "商业", "艺术与设计", "人文社会科学")
OVERALL = "总准确率"
CHOICE, TRUE_FALSE = "选择", "判断"
LETTERS = ("A", "B", "C", "D")
POSITIVE = ("正确", "对", "准确", "肯定", "对的")
NEGATIVE = ("不对", "错误", "不正确", "不准确", "不合适", "否定", "错的", "错")
AMBIGUOUS = ("对错", "是否正确", "否正确", "或者", "是否", "正确性", "对不")
TF_KEYS = ("是", "为", "所以", "判断", "陈述", "说法", "表达", "答案", "结果")
FILL_KEYS = ("是", "为", "所以", "等于", "方案", "选择", "正确答案", "因此", "最后", "答案", "结果")
TRIVIAL = (":", ",", ".", "!", "?", ";", ":", "'")
_COMMA_NUMBER = re.compile(r"-?\d{1,3}(?:，\d{3})+")
_SCIENTIFIC = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")
_SIMPLE = re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+)(?![eE][+-]?\d+)(?!，\d)")
RANDOM = None  # a reading left to VLMEvalKit's random pick


def choice_reading(reply: str, options: dict[str, str]) -> str | None:
    """The letters VLMEvalKit's get_multi_choice_prediction reads; RANDOM (None) where it picks at random."""
    for char in (",", ".", "!", "?", ";", ":", "'"):
        reply = reply.strip(char)
    reply = " " + reply + " "
    found: list[str] = []
    for letter in LETTERS:
        found += [letter] * reply.count(f"({letter})")
    if not found:
        for letter in LETTERS:
            found += [letter] * reply.count(letter)
    if not found and reply.split():
        for letter, text in options.items():
            found += [letter] * reply.count(text)
    if not found:
        return RANDOM
    counts = Counter(found)
    most = max(counts.values())
    return "".join(c for c in LETTERS if counts.get(c, 0) == most)


def key_phrases(reply: str, keys: Sequence[str], *, equation_last: bool) -> list[str]:
    """Per sentence (split at 。 and line breaks), the shortest stripped tail after a key word; the reply itself when
    no sentence has one. `equation_last`: `=` is a key word of the last sentence too (fill in the blank)."""
    reply = reply.strip("。").strip()
    sentences = re.split(r"。|\n", reply)
    out = []
    for i, sentence in enumerate(sentences):
        words = (*keys, "=") if equation_last and i == len(sentences) - 1 else keys
        shortest = None
        for word in words:
            if word in sentence:
                tail = sentence.split(word)[-1].strip()
                if not shortest or len(tail) < len(shortest):
                    shortest = tail
        if shortest and shortest.strip() not in TRIVIAL:
            out.append(shortest)
    return out or [reply]


def true_false_reading(reply: str) -> str | None:
    """对 or 错 as VLMEvalKit reads a true/false reply; RANDOM (None) on a tie."""
    phrases = [p for p in set(key_phrases(reply, TF_KEYS, equation_last=False))
               if not any(a in p for a in AMBIGUOUS)]  # fmt: skip
    positive = negative = 0
    for phrase in phrases:
        if any(w in phrase for w in POSITIVE):
            positive += 1
        elif any(w in phrase for w in NEGATIVE):
            negative += 1
    return "对" if positive > negative else "错" if negative > positive else RANDOM


def extract_numbers(text: str) -> list[str]:
    return _COMMA_NUMBER.findall(text) + _SCIENTIFIC.findall(text) + _SIMPLE.findall(text)


def _letters(text: str) -> int:
    return sum((c.isalpha() and "a" <= c <= "z") or "A" <= c <= "Z" for c in text)


def normalize(text: str, answer: str) -> list[Any]:
    """VLMEvalKit's normalize_str: a number rounded to 2 places; a text much longer than the answer dropped."""
    text = text.strip()
    try:
        return [round(float(text.replace(",", "")), 2)]
    except ValueError:
        pass
    if len(text) > len(answer) + 20 or _letters(text) > _letters(answer) + 2:
        return []
    return [text]


def fill_matches(reply: str, answer: str) -> int:
    """How many times VLMEvalKit counts a fill-in row right: each (phrase, answer) pair where the answer's text is in
    the phrase, or the number equals the answer's."""
    phrases = key_phrases(reply, FILL_KEYS, equation_last=True)
    candidates = list(phrases)
    for phrase in phrases:
        candidates += extract_numbers(phrase)
    normalised = set()
    for candidate in candidates:
        normalised.update(normalize(candidate, answer))
    gold = normalize(answer, answer)
    hits = 0
    for candidate in normalised:
        if isinstance(candidate, str):
            hits += sum(1 for g in gold if isinstance(g, str) and g in candidate)
        elif candidate in gold:
            hits += 1
    return hits


def row_credit(reply: str, row: dict[str, Any]) -> tuple[float, int, str | None]:
    """(vlmkit's credit in [0, 1], VLMEvalKit's count, the reading) of one reply; the credit of a random pick is
    its chance to be right."""
    answer, kind = str(row["answer"]), str(row["type"])
    if kind == CHOICE:
        options = {letter: str(row[f"option{k}"]) for k, letter in enumerate(LETTERS, 1)}
        reading = choice_reading(reply, options)
        if reading is RANDOM:
            return (0.25 if answer in LETTERS else 0.0), 0, None
        return float(reading == answer), int(reading == answer), reading
    if kind == TRUE_FALSE:
        reading = true_false_reading(reply)
        if reading is RANDOM:
            return (0.5 if answer in ("对", "错") else 0.0), 0, None
        return float(reading == answer), int(reading == answer), reading
    hits = fill_matches(reply, answer)
    return float(hits > 0), hits, None


def figures(categories: Sequence[str], credits: Sequence[float]) -> dict[str, float]:
    out = {OVERALL: sum(credits) / len(credits)}
    for category in CATEGORIES:
        mine = [c for cat, c in zip(categories, credits) if cat == category]
        if mine:
            out[category] = sum(mine) / len(mine)
    return out


def score_cmmmu(df: pd.DataFrame) -> EvalResult:
    """Score CMMMU replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `type`, `category`,
    `option1`..`option4`."""
    what = "CMMMU scoring"
    require_columns(df, ("index", "prediction", "answer", "type", "category", "option1", "option2", "option3",
                         "option4"), what)  # fmt: skip
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    records = df.to_dict("records")
    for row in records:
        if row["category"] not in CATEGORIES:
            raise ValueError(f"{what}: row index {row['index']}, field category: {row['category']!r} is not one of "
                             f"CMMMU's ({', '.join(CATEGORIES)})")  # fmt: skip
    categories = [str(r["category"]) for r in records]
    credits, readings, chance, errors = [], [], [], []
    for row in records:
        if failed_call(row["prediction"]):
            errors.append(row["index"])
            credits.append(0.0)
            readings.append(None)
            continue
        credit, _, reading = row_credit(str(row["prediction"]), row)
        if credit not in (0.0, 1.0):
            chance.append(row["index"])
        credits.append(credit)
        readings.append(reading)
    metrics = figures(categories, credits)
    notes = []
    if chance:
        notes.append(f"{len(chance)} row(s) VLMEvalKit decides by an unseeded random pick score the chance that pick "
                     f"is right (its figure varies by run; this is its expected value): index {listed(chance)}")
    if errors:
        notes.append(f"{len(errors)} failed call(s) score 0: index {listed(errors)}")
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors), "by_chance": len(chance),
              "by_rule": len(df) - len(errors), "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "type": df["type"].tolist(),
                               "read": pd.Series(readings, dtype=object), "score": credits})  # fmt: skip
    return EvalResult(
        scorer="cmmmu", metrics=metrics, primary=OVERALL, per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=_vlmevalkit_figure(df, records, categories, credits),
    )  # fmt: skip


def _vlmevalkit_figure(df: pd.DataFrame, records: list[dict[str, Any]], categories: list[str],
                       mine: list[float]) -> VlmevalkitFigure:  # fmt: skip
    """VLMEvalKit's count (a fill-in row once per matching phrase; a random pick at its chance) on the replies and
    answers its xlsx round trip leaves."""
    replies = vlmevalkit_replies(df["prediction"].tolist())
    answers = vlmevalkit_texts(df["answer"].tolist())
    theirs, differing = [], []
    for row, reply, answer, my_credit in zip(records, replies, answers, mine, strict=True):
        if reply is None:
            theirs.append(0.0)
            continue
        credit, count, _ = row_credit(reply, {**row, "answer": answer})
        value = float(count) if count > 1 or credit in (0.0, 1.0) else credit
        theirs.append(value)
        if value != my_credit:
            differing.append(ReadingDifference(row["index"], str(row["prediction"]), reply, my_credit, value))
    return VlmevalkitFigure(figures(categories, theirs), OVERALL, differing)
