"""GroundingME as VLMEvalKit scores it (vlmeval/dataset/groundingme.py `parse_bbox`, `compute_iou`, `normalize_bbox`,
`GroundingME.evaluate` at e8e78f05).

Reading a reply (`read_box`): the JSON object from its first `{` to its last `}` when it names "bbox_2d" (null is
the empty box [0, 0, 0, 0], a list of four numbers the box); else the last run of four numbers; else the empty box.
The answer is the `answer` cell's box (a Python literal), the empty box for `subtask_l1` Rejection. The IoU is taken
twice, for the box as given and for it scaled to the image (`width`, `height`: as fractions when every coordinate is
at most 1, else as 0-999 coordinates), and the larger counts. Against the empty box, IoU is 1 for an empty reply box,
else 0. Figures, fractions: `IoU` (mean), `ACC@0.5`, `ACC@0.75`, `ACC@0.9` (IoU at least that), the three per
`subtask_l1` (`<l1>_ACC@t`) and `ACC@0.5` per `subtask_l1`, `subtask_l2` pair (`<l1>_<l2>_ACC@0.5`, rows with an l2).

Where vlmkit differs: a failed call is a miss (VLMEvalKit reads its failure message: no box, the empty box, which is
right for a Rejection row); a non-Rejection answer that is not a box is an error naming the row (VLMEvalKit scores it
against the empty box).
"""

from __future__ import annotations

import json
import re
from ast import literal_eval
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.vlmevalkit_replies import (
    VLMEVALKIT_FAILURE_REPLY, failed_call, vlmevalkit_replies,
)  # fmt: skip
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

EMPTY = [0.0, 0.0, 0.0, 0.0]
THRESHOLDS = (("ACC@0.5", 0.5), ("ACC@0.75", 0.75), ("ACC@0.9", 0.9))
_OBJECT = re.compile(r'\{.*"bbox_2d".*\}', re.DOTALL)
_FOUR = re.compile(r"(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)")


def read_box(reply: str) -> list[float]:
    found = _OBJECT.search(reply)
    if found:
        try:
            box = json.loads(found.group(0))["bbox_2d"]
            if box is None:
                return list(EMPTY)
            if isinstance(box, list) and len(box) == 4:
                return [float(v) for v in box]
        except (ValueError, TypeError, KeyError):
            pass
    runs = _FOUR.findall(reply)
    return [float(v) for v in runs[-1]] if runs else list(EMPTY)


def iou(gold: list[float], box: list[float]) -> float:
    if gold == EMPTY:
        return 1.0 if box == EMPTY else 0.0
    width = max(0.0, min(gold[2], box[2]) - max(gold[0], box[0]))
    height = max(0.0, min(gold[3], box[3]) - max(gold[1], box[1]))
    inter = width * height
    union = (gold[2] - gold[0]) * (gold[3] - gold[1]) + (box[2] - box[0]) * (box[3] - box[1]) - inter
    return inter / union if union > 0 else 0.0


def scaled(box: list[float], width: float, height: float) -> list[float]:
    if all(v <= 1 for v in box):
        return [box[0] * width, box[1] * height, box[2] * width, box[3] * height]
    return [box[0] / 999 * width, box[1] / 999 * height, box[2] / 999 * width, box[3] / 999 * height]


def best_iou(gold: list[float], box: list[float], width: float, height: float) -> float:
    return max(iou(gold, box), iou(gold, scaled(box, width, height)))


def gold_box(row: dict[str, Any]) -> list[float]:
    if str(row["subtask_l1"]) == "Rejection":
        return list(EMPTY)
    try:
        value = literal_eval(str(row["answer"]))
        return [float(v) for v in value] if isinstance(value, list) and len(value) == 4 else _bad(row)
    except (ValueError, SyntaxError, TypeError):
        return _bad(row)


def _bad(row: dict[str, Any]) -> list[float]:
    raise ValueError(f"GroundingME scoring: row index {row['index']}, field answer: {row['answer']!r} is not a box "
                     "[x1, y1, x2, y2]")  # fmt: skip


def figures(rows: list[dict[str, Any]], ious: list[float]) -> dict[str, float]:
    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    out = {"IoU": mean(ious), **{name: mean([float(v >= t) for v in ious]) for name, t in THRESHOLDS}}
    l1 = [str(r["subtask_l1"]) for r in rows]
    for cat in sorted(set(l1)):
        picked = [v for c, v in zip(l1, ious) if c == cat]
        out.update({f"{cat}_{name}": mean([float(v >= t) for v in picked]) for name, t in THRESHOLDS})
    pairs = [(c, str(r["subtask_l2"])) if not is_blank(r.get("subtask_l2")) else None for c, r in zip(l1, rows)]
    for pair in sorted({p for p in pairs if p is not None}):
        picked = [v for p, v in zip(pairs, ious) if p == pair]
        out[f"{pair[0]}_{pair[1]}_ACC@0.5"] = mean([float(v >= 0.5) for v in picked])
    return out


def score_groundingme(df: pd.DataFrame) -> EvalResult:
    """Score GroundingME replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `width`,
    `height`, `subtask_l1`, and `subtask_l2` where present."""
    require_columns(df, ("index", "prediction", "answer", "width", "height", "subtask_l1"), "GroundingME scoring")
    if len(df) == 0:
        raise ValueError("GroundingME scoring: the predictions table has no rows")
    rows = df.to_dict("records")
    mine, theirs, boxes, differing, errors = [], [], [], [], []
    for r, their in zip(rows, vlmevalkit_replies(df["prediction"].tolist())):
        gold, width, height = gold_box(r), float(int(r["width"])), float(int(r["height"]))
        their_box = read_box(VLMEVALKIT_FAILURE_REPLY if their is None else their)
        theirs.append(best_iou(gold, their_box, width, height))
        if failed_call(r["prediction"]):
            errors.append(r["index"])
            mine.append(0.0), boxes.append(None)
            continue
        box = read_box(str(r["prediction"]))
        mine.append(best_iou(gold, box, width, height)), boxes.append(box)
        if theirs[-1] != mine[-1]:
            differing.append(ReadingDifference(r["index"], box, their_box, mine[-1], theirs[-1]))
    metrics = figures(rows, mine)
    notes = [f"{len(errors)} failed call(s) are misses: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors), "by_rule": len(df) - len(errors),
              "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    their_notes = ["VLMEvalKit reads a failed call's message as the empty box (right for a Rejection row)"] \
        if errors else []  # fmt: skip
    return EvalResult(
        scorer="groundingme", metrics=metrics, primary="ACC@0.5",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "box": pd.Series(boxes, dtype=object), "iou": mine}),
        table=pd.DataFrame([metrics]), table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(figures(rows, theirs), "ACC@0.5", differing, their_notes),
    )  # fmt: skip
