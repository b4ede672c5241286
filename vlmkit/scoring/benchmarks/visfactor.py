"""VisFactor as VLMEvalKit scores it (vlmeval/dataset/visfactor.py VisFactor.evaluate at e8e78f05).

Each reply's answer is the value of its last `{"answer": ...}` (quotes around the value removed; "" when there is
none), read by the row's test (`category_id`):
- true/false tests (CF1, CF2, MV1-3, P3, RL2, S1, S2, SS2, VZ1, VZ2, and VZ3 when `additional` is not a whole
  number): t/y/1/true/yes -> `T`, f/n/0/false/no -> `F` (any case), else nothing; right when equal to the answer;
- CS1-CS3: right when the value, lower-cased, is one of the answer's comma-separated items (lower-cased);
- CF3, I3, MA1, SS3, VZ3: the whole reply when the value is empty; VZ3 its last capital letter, CF3 its last two
  numbers as `(a, b)`, the others its last number; right when equal to the answer.
An item (`category_id`, `eval_index`) is right when all its rows are; a test scores the share of its items right;
`ALL` is the mean of the tests. Fractions.

Where vlmkit differs: a row of a test outside these lists is a miss (VLMEvalKit leaves its verdict empty, which
`all()` takes as right), named in a note; a failed call is a miss. VLMEvalKit's figure (`EvalResult.vlmevalkit`)
reads the reply its xlsx round trip leaves and counts such rows as right.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_texts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

TRUE_FALSE = ("CF1", "CF2", "MV1", "MV2", "MV3", "P3", "RL2", "S1", "S2", "SS2", "VZ1", "VZ2")
ONE_OF = ("CS1", "CS2", "CS3")
NUMBERS = ("CF3", "I3", "MA1", "SS3", "VZ3")
_ANSWER = re.compile(r'\{\s*"answer"\s*:\s*(.+?)\s*\}')


def json_answer(reply: str) -> str:
    found = list(_ANSWER.finditer(reply))
    if not found:
        return ""
    value = found[-1].group(1).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value


def read(reply: str, test: str, additional: str) -> str | None:
    """What VLMEvalKit reads from a reply for a test; None for a test it has no rule for."""
    value = json_answer(reply)
    if test in TRUE_FALSE or (test == "VZ3" and not additional.isdigit()):
        low = value.lower()
        return "T" if low in ("t", "y", "1", "true", "yes") else "F" if low in ("f", "n", "0", "false", "no") else ""
    if test in ONE_OF:
        return value
    if test in NUMBERS:
        text = value or reply
        if test == "VZ3":
            return next((c for c in reversed(text) if c.isupper()), "")
        numbers = re.findall(r"\d+", text)
        if test == "CF3":
            return f"({numbers[-2]}, {numbers[-1]})" if len(numbers) >= 2 else ""
        return numbers[-1] if numbers else ""
    return None


def right(reading: str | None, test: str, answer: str) -> bool | None:
    if reading is None:
        return None
    if test in ONE_OF:
        return reading.lower() in [a.lower() for a in answer.split(",")]
    return reading == answer


def figures(tests: Sequence[str], items: Sequence[str], hits: Sequence[bool]) -> dict[str, float]:
    grouped: dict[str, dict[str, list[bool]]] = {}
    for test, item, hit in zip(tests, items, hits, strict=True):
        grouped.setdefault(test, {}).setdefault(item, []).append(hit)
    out = {test: sum(all(v) for v in by_item.values()) / len(by_item) for test, by_item in sorted(grouped.items())}
    out["ALL"] = sum(out.values()) / len(out)
    return out


def _text(value: Any) -> str:
    """A cell as the TSV wrote it (a whole number read as a float, 3.0, is `3`); `nan` for an empty one."""
    if is_missing(value):
        return "nan"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def score_visfactor(df: pd.DataFrame) -> EvalResult:
    """Score VisFactor replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`,
    `category_id`, `eval_index`, `additional`."""
    what = "VisFactor scoring"
    require_columns(df, ("index", "prediction", "answer", "category_id", "eval_index", "additional"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    tests = [_text(v) for v in df["category_id"]]
    items = [_text(v) for v in df["eval_index"]]
    answers = [_text(v) for v in df["answer"]]
    additional = [_text(v) for v in df["additional"]]
    readings, hits, errors, no_rule = [], [], [], []
    for index, pred, test, answer, extra in zip(df["index"], df["prediction"], tests, answers, additional):
        if failed_call(pred):
            errors.append(index)
            readings.append(None)
            hits.append(False)
            continue
        reading = read(str(pred), test, extra)
        verdict = right(reading, test, answer)
        if verdict is None:
            no_rule.append(index)
        readings.append(reading)
        hits.append(bool(verdict))
    metrics = figures(tests, items, hits)
    notes = []
    if no_rule:
        notes.append(f"{len(no_rule)} row(s) belong to a test VLMEvalKit has no rule for (misses here, right in "
                     f"VLMEvalKit): index {listed(no_rule)}")
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "no_rule": len(no_rule), "by_rule": len(df) - len(errors), "by_judge": 0, "unread": 0,
              "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "test": tests, "item": items, "read": readings,
                               "hit": hits})  # fmt: skip
    return EvalResult(
        scorer="visfactor", metrics=metrics, primary="ALL", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=_vlmevalkit_figure(df, tests, items, hits, readings),
    )  # fmt: skip


def _vlmevalkit_figure(df: pd.DataFrame, tests: list[str], items: list[str], mine: list[bool],
                       my_readings: list[str | None]) -> VlmevalkitFigure:  # fmt: skip
    replies = vlmevalkit_replies(df["prediction"].tolist())
    answers = vlmevalkit_texts(df["answer"].tolist())
    additional = vlmevalkit_texts(df["additional"].tolist())
    theirs, differing = [], []
    for index, reply, test, answer, extra, hit, my_reading in zip(
        df["index"], replies, tests, answers, additional, mine, my_readings, strict=True
    ):
        if reply is None:  # a failed call: a miss on both sides
            theirs.append(False)
            continue
        reading = read(reply, test, extra)
        verdict = right(reading, test, answer)
        hit_theirs = True if verdict is None else verdict  # an empty verdict is right to all()
        theirs.append(hit_theirs)
        if hit_theirs != hit:
            differing.append(ReadingDifference(index, my_reading, reading, float(hit), float(hit_theirs)))
    return VlmevalkitFigure(figures(tests, items, theirs), "ALL", differing)
