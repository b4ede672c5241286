"""Spatial457 as VLMEvalKit scores it (vlmeval/dataset/spatial457.py `Spatial457.evaluate` and
utils/spatial457.py `Spatial457_utils.is_correct` at e8e78f05).

Reading a reply (`read_answer`): the text of `Answer': '...'`, else of `Answer": "..."`, else the digit of
`Answer': N`; else the whole reply (a format error; VLMEvalKit's ROBUST setting). A reading is right
(`is_correct`) when, after `none` becomes `no`: it equals the answer ignoring case; or it is `0` and the answer `No`;
or it is a number word (zero..ten, any case) of the answer's digits; or the answer is `yes` (any case) and the reading
a digit 1-9; or the first words of the two (lower-cased) are shapes of the same kind (car, bus, motorbike,
aeroplane, bicycle, by SuperCLEVR's sub-shapes).
Figures, fractions: `score` (right / rows) and `<level>_score` for the seven levels of `category` (0 for a level
without rows); `format_error` is counted.

Where vlmkit differs: a failed call is a miss (VLMEvalKit reads its failure message as the answer, which is wrong);
a `category` outside the seven levels is an error naming the row (VLMEvalKit stops with a KeyError).
"""

from __future__ import annotations

import re

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

LEVELS = ("L1_single", "L2_objects", "L3_2d_spatial", "L4_occ", "L4_pose", "L5_6d_spatial", "L5_collision")
SUB_SHAPES = {
    "car": ("suv", "wagon", "minivan", "sedan", "truck", "addi", "car"),
    "bus": ("articulated", "regular", "double", "school", "bus"),
    "motorbike": ("chopper", "dirtbike", "scooter", "cruiser", "motorbike"),
    "aeroplane": ("jet", "fighter", "biplane", "airliner", "aeroplane"),
    "bicycle": ("road", "utility", "mountain", "tandem", "bicycle"),
}
SHAPE_KIND = {shape: kind for kind, shapes in SUB_SHAPES.items() for shape in shapes}
NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"))}  # fmt: skip
_READERS = (re.compile(r"Answer': '(.*?)'"), re.compile(r'Answer": "(.*?)"'), re.compile(r"Answer': (\d)"))


def read_answer(reply: str) -> tuple[str, bool]:
    """(the answer read, whether the reply followed the format)."""
    for pattern in _READERS:
        found = pattern.search(reply)
        if found:
            return found.group(1), True
    return reply, False


def same_kind(pred: str, answer: str) -> bool:
    a, b = pred.lower().split(" ")[0], answer.lower().split(" ")[0]
    return a in SHAPE_KIND and b in SHAPE_KIND and SHAPE_KIND[a] == SHAPE_KIND[b]


def is_correct(answer: str, pred: str) -> bool:
    if pred.lower() == "none":
        pred = "no"
    return (pred.lower() == answer.lower() or (pred == "0" and answer == "No")
            or NUMBER_WORDS.get(pred.lower()) == answer
            or (answer.lower() == "yes" and pred in tuple("123456789")) or same_kind(pred, answer))  # fmt: skip


def figures(levels: list[str], hits: list[bool]) -> dict[str, float]:
    out = {"score": sum(hits) / len(hits)}
    for level in LEVELS:
        picked = [h for lv, h in zip(levels, hits) if lv == level]
        out[f"{level}_score"] = sum(picked) / len(picked) if picked else 0.0
    return out


def score_spatial457(df: pd.DataFrame) -> EvalResult:
    """Score Spatial457 replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `category`."""
    require_columns(df, ("index", "prediction", "answer", "category"), "Spatial457 scoring")
    if len(df) == 0:
        raise ValueError("Spatial457 scoring: the predictions table has no rows")
    levels = [str(c) for c in df["category"]]
    for index, level in zip(df["index"], levels):
        if level not in LEVELS:
            raise ValueError(f"Spatial457 scoring: row index {index}, field category: {level!r} is not one of "
                             f"{', '.join(LEVELS)}")  # fmt: skip
    answers = [str(a) for a in df["answer"]]
    mine, theirs, read, differing, errors, format_errors = [], [], [], [], [], 0
    for index, pred, their, answer in zip(df["index"], df["prediction"], vlmevalkit_replies(df["prediction"].tolist()),
                                          answers):  # fmt: skip
        if failed_call(pred):
            errors.append(index)
            mine.append(False), theirs.append(False), read.append(None)
            continue
        value, followed = read_answer(str(pred))
        format_errors += not followed
        mine.append(is_correct(answer, value))
        read.append(value)
        their_value = read_answer(their)[0] if their is not None else value
        theirs.append(is_correct(answer, their_value))
        if theirs[-1] != mine[-1]:
            differing.append(ReadingDifference(index, value, their_value, float(mine[-1]), float(theirs[-1])))
    metrics = figures(levels, mine)
    notes = [f"{len(errors)} failed call(s) are misses: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "hits": sum(mine), "inference_errors": len(errors),
              "format_error": format_errors, "by_rule": len(df) - len(errors), "by_judge": 0, "unread": 0,
              "judge_errors": 0}  # fmt: skip
    return EvalResult(
        scorer="spatial457", metrics=metrics, primary="score",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(read, dtype=object),
                                 "hit": mine}),
        table=pd.DataFrame([metrics]), table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(figures(levels, theirs), "score", differing),
    )  # fmt: skip
