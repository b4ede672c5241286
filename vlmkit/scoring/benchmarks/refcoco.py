"""RefCOCO as VLMEvalKit scores it (vlmeval/dataset/refcoco.py `RefCOCODataset` at e8e78f05): box IoU.

Reading a box (`read_box`): the first `[a, b, c, d]` of four numbers (comma or space separated) in the text, else
the first four numbers anywhere in it; fewer than four reads no box. `to_absolute`: a box whose largest absolute
value is <= 1.5 is relative (times width and height), <= 1000 is on a 0-1000 grid (/1000 times width and height),
else pixels; then each coordinate is clipped into the image and each pair put in order.
The gold box (`gold_boxes`), as VLMEvalKit's `load_data` and `_extract_gt_bbox` find it: the `bbox_x1..bbox_y2`
columns; without them, the `answer` read as a box, taken as relative (times width, height) when the largest value in
the whole column is <= 1.5 and as pixels otherwise; a row still without a box tries the `x1..y2` columns, then
`answer` and `bbox` through `to_absolute`; none found scores 0. `width`/`height` missing, empty or <= 0 count as 1.
A row hits when the IoU of the reply's box (`to_absolute`) and the gold box is >= 0.5.
The split: `category` `RefCOCO+ testA` -> `RefCOCO+_testA` (`split_of`), else the `split` column, else the dataset.
Figures: per split `<split> Precision@1` (percent) and `<split> Average IoU` (fraction); `Precision@1` and
`Average IoU` are the mean over the eight standard splits present (RefCOCO/RefCOCO+ val, testA, testB, RefCOCOg val,
test), or over all rows when none of them is present. A failed call scores 0 on both sides (VLMEvalKit's failure
message holds no numbers).
Where vlmkit may differ: the column-wide relative-or-pixels test on `answer` looks at the scored rows only (VLMEvalKit
looks at the whole TSV); the two agree when every row is scored.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

IOU_THRESHOLD = 0.5
STANDARD_SPLITS = ("RefCOCO_val", "RefCOCO_testA", "RefCOCO_testB", "RefCOCO+_val", "RefCOCO+_testA",
                   "RefCOCO+_testB", "RefCOCOg_val", "RefCOCOg_test")  # fmt: skip
_NUMBER = r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?"
_SEP = r"(?:\s*,\s*|\s+)"
_BRACKETED = re.compile(rf"\[\s*({_NUMBER}){_SEP}({_NUMBER}){_SEP}({_NUMBER}){_SEP}({_NUMBER})\s*\]")
_SUFFIXES = {"val": "val", "test": "test", "testa": "testA", "testb": "testB"}
Box = list[float]


def read_box(text: str) -> Box | None:
    """The four numbers of the first bracketed box, else the first four numbers; None when there are fewer."""
    found = _BRACKETED.search(text)
    if found:
        return [float(found.group(i)) for i in range(1, 5)]
    numbers = re.findall(_NUMBER, text)
    return [float(x) for x in numbers[:4]] if len(numbers) >= 4 else None


def to_absolute(box: Box, width: float, height: float) -> Box | None:
    """Pixels of a relative, 0-1000 or pixel box, clipped into the image, each pair in order."""
    if any(math.isnan(v) for v in box) or width <= 0 or height <= 0:
        return None
    x1, y1, x2, y2 = box[:4]
    biggest = max(abs(v) for v in box[:4])
    if biggest <= 1.5:
        x1, x2, y1, y2 = x1 * width, x2 * width, y1 * height, y2 * height
    elif biggest <= 1000:
        x1, x2, y1, y2 = x1 / 1000 * width, x2 / 1000 * width, y1 / 1000 * height, y2 / 1000 * height
    x1, x2 = (min(max(v, 0.0), width) for v in (x1, x2))
    y1, y2 = (min(max(v, 0.0), height) for v in (y1, y2))
    return [min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)]


def iou(a: Box, b: Box) -> float:
    """VLMEvalKit's `_compute_iou`: 0 without a positive overlap; areas of reversed boxes count as 0."""
    left, top, right, bottom = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    if right <= left or bottom <= top:
        return 0.0
    inter = (right - left) * (bottom - top)
    union = (max(a[2] - a[0], 0) * max(a[3] - a[1], 0) + max(b[2] - b[0], 0) * max(b[3] - b[1], 0) - inter)
    return inter / union if union > 0 else 0.0


def split_of(category: Any) -> str | None:
    """`RefCOCO+ testA` -> `RefCOCO+_testA`, `RefCOCOg val` -> `RefCOCOg_val`, a lone word itself; None if blank."""
    if not isinstance(category, str) or not category.strip():
        return None
    label, _, rest = category.strip().partition(" ")
    rest = rest.strip()
    if not rest:
        return label
    suffix = _SUFFIXES.get(re.sub(r"[\s_-]+", "", rest.lower()), rest.replace(" ", "_").replace("-", "_"))
    return f"{label}_{suffix}"


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _size(value: Any) -> float:
    number = _number(value)
    return 1.0 if math.isnan(number) or number <= 0 else number


def gold_boxes(df: pd.DataFrame, widths: list[float], heights: list[float]) -> list[Box | None]:
    """Each row's gold box in pixels, found as VLMEvalKit finds it (module docstring)."""
    n, columns = len(df), ("bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2")
    if all(c in df.columns for c in columns):
        first = [[_number(v) for v in values] for values in zip(*(df[c] for c in columns))]
    elif "answer" in df.columns:
        read = [read_box(str(a)) or [math.nan] * 4 for a in df["answer"]]
        known = [abs(v) for box in read for v in box if not math.isnan(v)]
        relative = bool(known) and max(known) <= 1.5
        first = [[b[0] * w, b[1] * h, b[2] * w, b[3] * h] if relative else b
                 for b, w, h in zip(read, widths, heights)]  # fmt: skip
    else:
        first = [[math.nan] * 4] * n
    rows = df.to_dict("records")
    return [box if not any(math.isnan(v) for v in box) else _fallback_box(row, w, h)
            for box, row, w, h in zip(first, rows, widths, heights)]  # fmt: skip


def _fallback_box(row: dict[str, Any], width: float, height: float) -> Box | None:
    plain = [_number(row.get(c)) for c in ("x1", "y1", "x2", "y2")]
    if all(c in row for c in ("x1", "y1", "x2", "y2")) and not any(math.isnan(v) for v in plain):
        return plain
    for column in ("answer", "bbox"):
        if column in row and not is_blank(row[column]):
            box = read_box(str(row[column]))
            if box is not None:
                return to_absolute(box, width, height)
    return None


def splits_of(df: pd.DataFrame, dataset: str) -> list[str]:
    derived = [split_of(c) for c in df["category"]] if "category" in df.columns else [None] * len(df)
    given = [None if is_blank(s) else str(s) for s in df["split"]] if "split" in df.columns else [None] * len(df)
    return [g or d or dataset for g, d in zip(given, derived)]


def figures(splits: list[str], hits: list[bool], ious: list[float]) -> dict[str, float]:
    out: dict[str, float] = {}
    order = [s for s in STANDARD_SPLITS if s in splits] + sorted(set(splits) - set(STANDARD_SPLITS))
    for split in order:
        picked = [i for i, s in enumerate(splits) if s == split]
        out[f"{split} Precision@1"] = 100 * sum(hits[i] for i in picked) / len(picked)
        out[f"{split} Average IoU"] = sum(ious[i] for i in picked) / len(picked)
    standard = [s for s in order if s in STANDARD_SPLITS]
    if standard:
        out["Precision@1"] = sum(out[f"{s} Precision@1"] for s in standard) / len(standard)
        out["Average IoU"] = sum(out[f"{s} Average IoU"] for s in standard) / len(standard)
    else:
        out["Precision@1"] = 100 * sum(hits) / len(hits)
        out["Average IoU"] = sum(ious) / len(ious)
    return out


def _row_iou(reply: str | None, gold: Box | None, width: float, height: float) -> tuple[float, Box | None]:
    box = read_box(reply) if reply is not None else None
    pred = to_absolute(box, width, height) if box is not None else None
    return (0.0 if pred is None or gold is None else iou(pred, gold)), pred


def score_refcoco(df: pd.DataFrame, dataset: str = "RefCOCO") -> EvalResult:
    """Score RefCOCO replies. Columns: `index`, `prediction` (None/NaN = a failed call), a gold box (module
    docstring), optional `width`, `height`, `category`, `split`."""
    require_columns(df, ("index", "prediction"), "RefCOCO scoring")
    if len(df) == 0:
        raise ValueError("RefCOCO scoring: the predictions table has no rows")
    widths = [_size(v) for v in df["width"]] if "width" in df.columns else [1.0] * len(df)
    heights = [_size(v) for v in df["height"]] if "height" in df.columns else [1.0] * len(df)
    golds, splits = gold_boxes(df, widths, heights), splits_of(df, dataset)
    mine, theirs, hits, their_hits, boxes, differing, errors = [], [], [], [], [], [], []
    replies = df["prediction"].tolist()
    for index, pred, their, gold, w, h in zip(df["index"], replies, vlmevalkit_replies(replies), golds, widths,
                                              heights):  # fmt: skip
        if failed_call(pred):
            errors.append(index)
            mine.append(0.0), theirs.append(0.0), boxes.append(None)
            continue
        value, box = _row_iou(str(pred), gold, w, h)
        their_value = _row_iou(their, gold, w, h)[0] if their is not None else value
        mine.append(value), theirs.append(their_value), boxes.append(box)
        if value != their_value:
            differing.append(ReadingDifference(index, str(pred), their, value, their_value))
    hits, their_hits = [v >= IOU_THRESHOLD for v in mine], [v >= IOU_THRESHOLD for v in theirs]
    metrics = figures(splits, hits, mine)
    unread = sum(1 for b, p in zip(boxes, replies) if b is None and not failed_call(p))
    no_gold = [i for i, g in zip(df["index"], golds) if g is None]
    notes = [f"{len(errors)} failed call(s) score 0: index {listed(errors)}"] if errors else []
    if no_gold:
        notes.append(f"{len(no_gold)} row(s) have no gold box and score 0 (as in VLMEvalKit): index {listed(no_gold)}")
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "unread": unread, "by_rule": len(df) - len(errors), "by_judge": 0, "judge_errors": 0}  # fmt: skip
    return EvalResult(
        scorer="refcoco", metrics=metrics, primary="Precision@1",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "split": splits,
                                 "pred_bbox": pd.Series(boxes, dtype=object), "iou": mine, "hit": hits}),
        table=_table(metrics), table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT),
        metric_scales={k: Scale(FRACTION) for k in metrics if k.endswith("Average IoU")},
        vlmevalkit=VlmevalkitFigure(figures(splits, their_hits, theirs), "Precision@1", differing),
    )  # fmt: skip


def _table(metrics: dict[str, float]) -> pd.DataFrame:
    """VLMEvalKit's `_acc` table: one row per split, then `Average`."""
    splits = [k[: -len(" Precision@1")] for k in metrics if k.endswith(" Precision@1")]
    rows = [{"Split": s, "Precision@1": metrics[f"{s} Precision@1"], "Average IoU": metrics[f"{s} Average IoU"]}
            for s in splits]  # fmt: skip
    rows.append({"Split": "Average", "Precision@1": metrics["Precision@1"], "Average IoU": metrics["Average IoU"]})
    return pd.DataFrame(rows)
