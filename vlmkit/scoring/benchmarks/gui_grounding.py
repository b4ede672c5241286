"""GUI grounding (ScreenSpot, ScreenSpot_v2, ScreenSpot_Pro, OSWorld_G) as VLMEvalKit scores it
(vlmeval/dataset/GUI/screenspot.py, screenspot_pro.py, osworld_g.py `evaluate_point`): a row is right when the
click point lies inside the target box (edges included), both in 0-1 of the screenshot.

The target box (`bbox`, pixels of the original screenshot; a -1 coordinate counts as 0), by layout (`LAYOUTS`):
- `screenspot` (ScreenSpot, ScreenSpot_v2): `[x, y, w, h]` -> `(x, y, x + w - 1, y + h - 1)`;
- `screenspot_pro` (ScreenSpot_Pro): `[x1, y1, x2, y2]`;
- `osworld_g` (OSWorld_G): `[x, y, w, h]` -> `(x, y, x + w, y + h)`;
- `venusbench` (VenusBench-GD): `[x1, y1, x2, y2]`, no range check, no Text/Icon figures. VBGD is ScreenSpot_Pro's
  class under another name (vbgd.py differs from screenspot_pro.py in its URL only): layout `screenspot_pro`.
A box outside the screenshot stops VLMEvalKit (ScreenSpot, Pro); vlmkit scores that row as a miss
(`invalid_target`) and names it.

Figures, in percent, VLMEvalKit's names: `Overall_Accuracy`, `Format_Err_Rate`, `Text_Accuracy`, `Icon_Accuracy`, and
`<category>_Accuracy` per `category` where the table has one. Rows are grouped by key, `data_type` (ScreenSpot;
`category:data_type` with a `category` column) or `category:ui_type` (Pro, OSWorld_G); Text/Icon take the keys ending
in `text`/`icon` (ScreenSpot) or whose type is `text`/`icon` (Pro, OSWorld_G); a group with no rows has no figure
(VLMEvalKit prints NaN). VLMEvalKit's own Text, Icon and category figures weigh each key by its row count
(`summary(weighted=True)`, its figure); vlmkit's are plain row means. vlmkit adds `application:<a>` (Pro, OSWorld_G)
or `source:<s>` (ScreenSpot's `data_source`) accuracies.

The click point is read by vlmkit.scoring.benchmarks.gui_points in the convention given (`coords`). Where vlmkit
differs: a reply with no readable point is a miss counted in `Format_Err_Rate` (VLMEvalKit reads it as the point
(0, 0), which hits a box touching the top-left corner, and its Format_Err_Rate counts only numbers `float()`
refuses); a failed call is a miss (`inference_errors`). VLMEvalKit's figure (`EvalResult.vlmevalkit`) applies its
own reading (`x=<digits and dots>, y=<...>` on the text its xlsx round trip leaves, else (0, 0)) and its rule for
the numbers, and lists the rows it scores otherwise.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.benchmarks.gui_points import Click, Convention, read_click
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_cells_of
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

Box = tuple[float, float, float, float]
_VLMEVALKIT_XY = re.compile(r"x=([\d.]+), y=([\d.]+)")


@dataclass(frozen=True)
class GuiLayout:
    """What differs between VLMEvalKit's GUI classes (module docstring)."""

    box: str  # xywh_inclusive, xyxy, xywh
    type_column: str  # data_type or ui_type
    category_in_key: str  # "if_present" (ScreenSpot) or "always"
    checks_range: bool  # a box outside the screenshot stops VLMEvalKit
    vlmevalkit_rule: str  # gui_points.VLMEVALKIT_RULES
    extra: str  # the column of vlmkit's extra breakdown
    extra_label: str
    type_figures: bool = True  # Text_Accuracy and Icon_Accuracy are reported
    vlmevalkit_stops: str = ""  # where VLMEvalKit's evaluate raises before it reports (its figure: what it had)


LAYOUTS = {
    "screenspot": GuiLayout("xywh_inclusive", "data_type", "if_present", True, "pixels_over_1", "data_source", "source"),
    "screenspot_pro": GuiLayout("xyxy", "ui_type", "always", True, "pixels_over_1", "application", "application"),
    "osworld_g": GuiLayout("xywh", "ui_type", "always", False, "norm1000", "application", "application"),
    "venusbench": GuiLayout(
        "xyxy", "ui_type", "always", False, "pixels_over_1", "application", "application", type_figures=False,
        vlmevalkit_stops="VLMEvalKit's VenusBench_GD.evaluate raises a TypeError at the per-category accuracy "
        "(`x[0] > 0` on a list) and writes no score; its figure here holds the two figures it computes before that"),
}


def layout_columns(layout: str) -> tuple[str, ...]:
    """The columns scoring needs for a layout (besides index, prediction and the image size)."""
    spec = LAYOUTS[layout]
    return ("bbox", spec.type_column, *(("category",) if spec.category_in_key == "always" else ()))


def target_box(cell: Any, width: int, height: int, layout: GuiLayout) -> Box | None:
    """The target box in 0-1 of the screenshot, as VLMEvalKit computes it; None when the cell is not four numbers
    or (ScreenSpot, Pro) the box leaves the screenshot."""
    try:
        values = cell if isinstance(cell, (list, tuple)) else ast.literal_eval(str(cell).strip())
        x, y, c, d = (float(v) for v in values)
    except (ValueError, SyntaxError, TypeError):
        return None
    if layout.box == "xywh_inclusive":
        corners = (x, y, x + c - 1, y + d - 1)
    elif layout.box == "xywh":
        corners = (x, y, x + c, y + d)
    else:
        corners = (x, y, c, d)
    safe = [0.0 if v == -1 else v for v in corners]
    box = (safe[0] / width, safe[1] / height, safe[2] / width, safe[3] / height)
    if layout.checks_range and any(v < 0 or v > 1 for v in box):
        return None
    return box


def inside(point: tuple[float, float], box: Box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def row_keys(df: pd.DataFrame, layout: GuiLayout) -> list[str]:
    types = [str(v) for v in df[layout.type_column]]
    if layout.category_in_key == "always" or "category" in df.columns:
        return [f"{c}:{t}" for c, t in zip(df["category"].astype(str), types, strict=True)]
    return types


def summary(keys: Sequence[str], stats: Sequence[int], layout: GuiLayout, categories: Sequence[str] | None,
            weighted: bool = False) -> tuple[dict[str, float], dict[str, int]]:  # fmt: skip
    """VLMEvalKit's figures from per-row stats (1 right, 0 wrong, -1 format error) and keys; groups without rows
    are left out. Returns (figures in percent, rows per key). `weighted`: VLMEvalKit's own arithmetic for Text, Icon
    and the categories, which repeats each key's list of stats once per row of that key (`[v for k, v in
    stats.items() if ... for x in v]`, then chained), so a key of n rows weighs n times its rows."""

    def pct(values: list[int]) -> float | None:
        return 100 * sum(v > 0 for v in values) / len(values) if values else None

    def grouped(picked: list[tuple[str, int]]) -> list[int]:
        if not weighted:
            return [s for _, s in picked]
        by_key: dict[str, list[int]] = {}
        for key, stat in picked:
            by_key.setdefault(key, []).append(stat)
        return [s for v in by_key.values() for _ in v for s in v]

    if layout.category_in_key == "always":
        def is_type(key: str, kind: str) -> bool:
            return key.split(":")[1] == kind
    else:
        def is_type(key: str, kind: str) -> bool:
            return key.endswith(kind)

    figures: dict[str, float | None] = {
        "Overall_Accuracy": pct(list(stats)),
        "Format_Err_Rate": 100 * sum(v < 0 for v in stats) / len(stats) if stats else None,
    }
    if layout.type_figures:
        figures["Text_Accuracy"] = pct(grouped([(k, s) for k, s in zip(keys, stats) if is_type(k, "text")]))
        figures["Icon_Accuracy"] = pct(grouped([(k, s) for k, s in zip(keys, stats) if is_type(k, "icon")]))
    for category in sorted(set(categories or ())):
        figures[f"{category}_Accuracy"] = pct(grouped([(k, s) for k, s in zip(keys, stats)
                                                       if k.split(":")[0] == category]))  # fmt: skip
    return {k: v for k, v in figures.items() if v is not None}, dict(Counter(keys))


def score_gui_grounding(df: pd.DataFrame, layout: str, convention: Convention | None = None) -> EvalResult:
    """Score click replies. Columns: `index`, `prediction` (None/NaN = a failed call), `bbox`, the layout's type
    column (and `category`), `image_width` and `image_height` (the screenshot's pixels); optional `min_pixels`,
    `max_pixels` per row (the `abs` convention's resize)."""
    if layout not in LAYOUTS:
        raise ValueError(f"GUI grounding scoring: layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
    spec = LAYOUTS[layout]
    convention = convention or Convention(vlmevalkit_rule=spec.vlmevalkit_rule)
    what = "GUI grounding scoring"
    require_columns(df, ("index", "prediction", "image_width", "image_height", *layout_columns(layout)), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    keys = row_keys(df, spec)
    sizes = list(zip(df["image_width"].astype(int), df["image_height"].astype(int), strict=True))
    limits = [(_pixels(row.get("min_pixels")), _pixels(row.get("max_pixels"))) for row in df.to_dict("records")]
    boxes = [target_box(cell, w, h, spec) for cell, (w, h) in zip(df["bbox"], sizes, strict=True)]
    stats: list[int] = []
    reads: list[str] = []
    points: list[tuple[float, float] | None] = []
    for pred, box, (w, h), (lo, hi) in zip(df["prediction"].tolist(), boxes, sizes, limits, strict=True):
        if failed_call(pred):
            reads.append("inference_error")
            click = None
        else:
            click = read_click(str(pred))
            reads.append(click.how if click else "unread")
        point = convention.to_unit(click, w, h, lo, hi) if click else None
        points.append(point)
        if click is None and reads[-1] == "unread":
            stats.append(-1)
        else:
            stats.append(int(point is not None and box is not None and inside(point, box)))
    categories = df["category"].astype(str).tolist() if "category" in df.columns else None
    metrics, per_key = summary(keys, stats, spec, categories)
    extra = spec.extra
    if extra in df.columns:
        for value in sorted(set(df[extra].astype(str))):
            picked = [s for v, s in zip(df[extra].astype(str), stats) if v == value]
            metrics[f"{spec.extra_label}:{value}"] = 100 * sum(s > 0 for s in picked) / len(picked)
    tally = Counter(reads)
    invalid = [i for i, box in zip(df["index"].tolist(), boxes) if box is None]
    counts = {"total": len(df), "scored": len(df), "hits": sum(s > 0 for s in stats), "unread": tally["unread"],
              "inference_errors": tally["inference_error"], "invalid_target": len(invalid),
              "by_rule": len(df) - tally["inference_error"], "by_judge": 0, "judge_errors": 0,
              **{f"{key}:cnt": n for key, n in per_key.items()}}  # fmt: skip
    notes = [convention.describe(),
             "Format_Err_Rate counts replies with no readable click point (VLMEvalKit reads them as (0, 0))"]
    if invalid:
        notes.append(f"{len(invalid)} row(s) have a target box that is not four numbers inside the screenshot "
                     f"(misses; VLMEvalKit stops on them): index {listed(invalid)}")
    per_sample = pd.DataFrame({
        "index": df["index"].tolist(), "key": keys, "read": reads,
        # how the row was read, in the words the report's sample filters use (unparsed, inference_error)
        "method": ["unparsed" if r == "unread" else r if r == "inference_error" else "click" for r in reads],
        "x": [p[0] if p else None for p in points], "y": [p[1] if p else None for p in points],
        "box": [list(b) if b else None for b in boxes], "hit": [s > 0 for s in stats],
    })  # fmt: skip
    return EvalResult(
        scorer="gui_grounding", metrics=metrics, primary="Overall_Accuracy", per_sample=per_sample,
        table=pd.DataFrame([metrics]), table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT),
        vlmevalkit=_vlmevalkit_figure(df, spec, keys, boxes, sizes, stats, points, categories),
    )  # fmt: skip


def _pixels(value: Any) -> int | None:
    if is_missing(value):
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def vlmevalkit_point(cell: Any, size: tuple[int, int], rule: str) -> tuple[float, float] | None:
    """The point VLMEvalKit reads from a reply cell, in 0-1 (its `x=<n>, y=<n>`, else (0, 0), then its rule for
    the numbers); None where float() refuses the numbers (its format error)."""
    found = _VLMEVALKIT_XY.search(str(cell))
    try:
        x, y = (float(found.group(1)), float(found.group(2))) if found else (0.0, 0.0)
    except ValueError:
        return None
    return Convention(vlmevalkit_rule=rule).to_unit(Click(x, y, "xy"), *size)


def _shown(point: tuple[float, float] | None) -> str:
    return "no point" if point is None else f"({point[0]:.4g}, {point[1]:.4g})"


def _vlmevalkit_figure(df: pd.DataFrame, spec: GuiLayout, keys: list[str], boxes: list[Box | None],
                       sizes: list[tuple[int, int]], mine: list[int], points: list[tuple[float, float] | None],
                       categories: list[str] | None) -> VlmevalkitFigure:  # fmt: skip
    cells = vlmevalkit_cells_of(df["prediction"].tolist())
    theirs: list[int] = []
    differing: list[ReadingDifference] = []
    rows = zip(df["index"].tolist(), cells, boxes, sizes, mine, points, strict=True)
    for index, cell, box, size, my_stat, my_point in rows:
        if cell is None:  # a failed call: a miss on both sides
            theirs.append(0)
            continue
        point = vlmevalkit_point(cell, size, spec.vlmevalkit_rule)
        stat = -1 if point is None else int(box is not None and inside(point, box))
        theirs.append(stat)
        if (stat > 0) != (my_stat > 0):
            differing.append(ReadingDifference(index, _shown(my_point), _shown(point), float(my_stat > 0),
                                               float(stat > 0)))
    metrics, _ = summary(keys, theirs, spec, categories, weighted=True)
    notes = ["VLMEvalKit reads `x=<n>, y=<n>` only (else the point (0, 0)) and its own rule for the numbers",
             "VLMEvalKit's Text, Icon and per-category accuracies weigh each category:type group by its row count "
             "(its lists are repeated once per row)"]
    if spec.vlmevalkit_stops:
        metrics = {k: metrics[k] for k in ("Overall_Accuracy", "Format_Err_Rate")}
        notes.append(spec.vlmevalkit_stops)
    if any(box is None for box in boxes) and spec.checks_range:
        notes.append("VLMEvalKit stops on a target box outside the screenshot; the figure counts such rows as misses")
    return VlmevalkitFigure(metrics, "Overall_Accuracy", differing, notes)
