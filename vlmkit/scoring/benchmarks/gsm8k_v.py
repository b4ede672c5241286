"""GSM8K-V as VLMEvalKit scores it (vlmeval/dataset/gsm8k_v.py and utils/gsm8k_v.py `evaluate_gsm8k_v` at e8e78f05),
by rule.

Reading a reply (`read_number`, VLMEvalKit's `extract_numerical_answer`), in order, the first that gives a number:
the last match of the first of `FINAL_ANSWER_PATTERNS` that matches (FINAL ANSWER, \\boxed as VLMEvalKit writes it,
####, `the answer is`, 答案, Therefore/Thus/Hence; any case); a line among the last five that is a number alone
(`STANDALONE_PATTERNS`); the last match of the first of `CONTEXTUAL_PATTERNS` in the last paragraph; the last number
of one of the last three lines. A match counts when, `$` and commas removed, it is a plain number or fraction; it is
read as a float (a fraction divided out). A reply cell VLMEvalKit reads back as a number (an all-number column of
replies) is not text to it and reads nothing.
A row is right when the number is within 1e-3 of `answer` (or within a relative 1e-6).
Figures, fractions: `Overall` (right / rows), `Category_<c>` per non-blank `category`, `Subcategory_<s>` per
non-blank `subcategory`. A failed call is wrong on both sides. VLMEvalKit never counts a row whose answer is 0 as
right (it tests the answer's truth before reading it); vlmkit does, and its VLMEvalKit figure does not.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_cells_of
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

# VLMEvalKit's patterns, as written there (its \\boxed\\{ pattern wants a backslash before the brace)
FINAL_ANSWER_PATTERNS = (
    r"(?:FINAL\s+ANSWER|Final\s+Answer)\s*[:\-=]?\s*\$?\s*(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)",
    r"(?:FINAL\s+ANSWER|Final\s+Answer)\s*[:\-=]?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
    r"\\boxed\\{(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)\\}",  # noqa: W605
    r"\\boxed\\{(-?[0-9,]+(?:\.[0-9]+)?)\\}",  # noqa: W605
    r"####\s*(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)",
    r"####\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
    r"(?:The\s+)?(?:[Aa]nswer|result)\s+is\s*[:\-=]?\s*\$?\s*(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)",
    r"(?:The\s+)?(?:[Aa]nswer|result)\s+is\s*[:\-=]?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
    r"答案\s*[:\-=]?\s*\$?\s*(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)",
    r"答案\s*[:\-=]?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
    r"(?:Therefore|Thus|Hence)[^.]*?[:\-=]?\s*\$?\s*(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)",
    r"(?:Therefore|Thus|Hence)[^.]*?[:\-=]?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
)

STANDALONE_PATTERNS = (
    r'^(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)$',
    r'^(-?[0-9,]+(?:\.[0-9]+)?)$',
    r'^\$\s*(-?[0-9,]+(?:\.[0-9]+)?)$',
    r'^(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)\s*(?:dollars?|cents?)?$',
)

CONTEXTUAL_PATTERNS = (
    r"(?:answer|result|solution)\s*(?:is|=|:)?\s*\$?\s*(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)",
    r"(?:answer|result|solution)\s*(?:is|=|:)?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
    r"=\s*\$?\s*(-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?)",
    r"=\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
    r"makes?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)\s*(?:dollars?)?",
    r"total\s*(?:of|is)?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
    r"costs?\s*\$?\s*(-?[0-9,]+(?:\.[0-9]+)?)",
)


_NUMBER = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?$")


def _clean(text: str | None) -> str | None:
    if not text:
        return None
    cleaned = str(text).strip().lstrip("$").strip().replace(",", "")
    return cleaned if _NUMBER.match(cleaned) else None


def _to_float(text: str) -> float:
    if "/" in text:
        try:
            return float(Fraction(text))
        except (ValueError, ZeroDivisionError):
            pass
    return float(text)


def _first(candidates: list[str]) -> float | None:
    cleaned = _clean(candidates[-1]) if candidates else None
    if cleaned is None:
        return None
    try:
        return _to_float(cleaned)
    except (ValueError, ZeroDivisionError):
        return None


def _last_paragraph(text: str) -> str:
    return re.split(r"\n\s*\n", text.strip())[-1]


def read_number(reply: Any) -> float | None:
    """VLMEvalKit's `extract_numerical_answer` (module docstring); None for a cell that is not text."""
    if not isinstance(reply, str):
        return None
    text = reply.strip()
    for pattern in FINAL_ANSWER_PATTERNS:
        found = re.findall(pattern, text, re.IGNORECASE | re.MULTILINE)
        if found:
            value = _first(found)
            if value is not None:
                return value
    lines = text.split("\n")
    for i in range(min(5, len(lines))):
        line = lines[-(i + 1)].strip()
        if not line:
            continue
        for pattern in STANDALONE_PATTERNS:
            found = re.match(pattern, line, re.IGNORECASE)
            if found:
                value = _first([found.group(1)])
                if value is not None:
                    return value
    paragraph = _last_paragraph(text)
    for pattern in CONTEXTUAL_PATTERNS:
        found = re.findall(pattern, paragraph, re.IGNORECASE)
        if found:
            value = _first(found)
            if value is not None:
                return value
    for i in range(min(3, len(lines))):
        line = lines[-(i + 1)].strip()
        for pattern in (r"-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?", r"-?[0-9,]+(?:\.[0-9]+)?"):
            value = _first(re.findall(pattern, line))
            if value is not None:
                return value
    return None


def is_right(number: float | None, answer: float) -> bool:
    if number is None:
        return False
    return abs(number - answer) <= 1e-3 or abs(number - answer) / max(abs(answer), 1e-10) < 1e-6


def _answer(value: Any, index: Any) -> float:
    try:
        return float(str(value).strip())
    except ValueError:
        raise ValueError(f"GSM8K-V scoring: row index {index}, field answer: {value!r} is not a number") from None


def figures(rows: list[dict[str, Any]], hits: list[bool]) -> dict[str, float]:
    out = {"Overall": sum(hits) / len(hits)}
    for column, prefix in (("category", "Category_"), ("subcategory", "Subcategory_")):
        if rows and column in rows[0]:
            values = [r[column] for r in rows]
            for value in dict.fromkeys(v for v in values if not is_blank(v)):
                picked = [h for v, h in zip(values, hits) if v == value]
                out[f"{prefix}{value}"] = sum(picked) / len(picked)
    return out


def score_gsm8k_v(df: pd.DataFrame) -> EvalResult:
    """Score GSM8K-V replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`; optional
    `category`, `subcategory`."""
    require_columns(df, ("index", "prediction", "answer"), "GSM8K-V scoring")
    if len(df) == 0:
        raise ValueError("GSM8K-V scoring: the predictions table has no rows")
    rows: list[dict[str, Any]] = df.to_dict("records")
    answers = [_answer(r["answer"], r["index"]) for r in rows]
    replies = df["prediction"].tolist()
    mine, theirs, read, differing, errors = [], [], [], [], []
    for row, pred, cell, answer in zip(rows, replies, vlmevalkit_cells_of(replies), answers):
        if failed_call(pred):
            errors.append(row["index"])
            mine.append(False), theirs.append(False), read.append(None)
            continue
        number, their_number = read_number(str(pred)), read_number(cell)
        # VLMEvalKit's `float(x) if x and ...`: an answer read back as the number 0 is falsy, so no reply is right
        mine.append(is_right(number, answer)), read.append(number)
        theirs.append(answer != 0 and is_right(their_number, answer))
        if mine[-1] != theirs[-1]:
            differing.append(ReadingDifference(row["index"], number, their_number, float(mine[-1]),
                                               float(theirs[-1])))  # fmt: skip
    metrics = figures(rows, mine)
    notes = [f"{len(errors)} failed call(s) are wrong: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "hits": sum(mine), "inference_errors": len(errors),
              "unread": sum(n is None for n, p in zip(read, replies) if not failed_call(p)),
              "by_rule": len(df) - len(errors), "by_judge": 0, "judge_errors": 0}  # fmt: skip
    return EvalResult(
        scorer="gsm8k_v", metrics=metrics, primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(read, dtype=object),
                                 "hit": mine}),
        table=pd.DataFrame([{"Metric": k, "Accuracy": v} for k, v in metrics.items()]), table_suffix="score",
        counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(figures(rows, theirs), "Overall", differing),
    )  # fmt: skip
