"""SPAR-Bench (SparBench, SparBench_tiny) as VLMEvalKit scores it (vlmeval/dataset/sparbench.py at e8e78f05, with the
rule path of utils/spatial_bench/cal_scores.py: VLMEvalKit gives its VQA type no judge by default).

A row's `task` says how it is scored (TASKS; any other task is refused in one line, as VLMEvalKit refuses it):
- multiple choice: the option letter read from the reply and from the `answer` cell by VLMEvalKit's
  `can_match_option`; right when both read the same (vlmkit.scoring.benchmarks.spbench.option_score);
- numeric: Mean Relative Accuracy of the number `can_match_na` reads (spbench.numeric_score);
- `view_change_infer`: the reply and the answer are read as `action:value` pairs separated by commas (items without
  `:` or whose value is no number are skipped; a later action wins); for each axis (move right/left, up/down,
  forward/backward, rotate right/left, rotate up/down) the signed value positive minus negative (0 when absent) is
  scored by MRA against the answer's; the row scores the mean of the five (`vci_metric`).
Figures (fractions, as VLMEvalKit reports them): per task `<task>_accuracy`, `<task>_MRA:.5:.95:.05` or
`<task>_vci_metric` (the mean over its rows); `overall` the mean of the task figures; `Low`, `Middle`, `High` the
mean of the task figures of each level's tasks present (0 when none is).

Where vlmkit differs: a failed call scores 0 (VLMEvalKit reads its failure text: for `view_change_infer` that is no
action at all, which scores MRA 1 on every axis the answer leaves at 0). A reply and an answer cell that both read as
no letter are a hit in VLMEvalKit's figure only (as spbench says).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.benchmarks.spbench import numeric_score, option_score
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.mean_relative_accuracy import mean_relative_accuracy
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

MCQ_TASKS = (
    "obj_spatial_relation_oo", "obj_spatial_relation_oc_mv", "obj_spatial_relation_oo_mv", "spatial_imagination_oc",
    "spatial_imagination_oo", "spatial_imagination_oc_mv", "spatial_imagination_oo_mv", "position_matching",
    "camera_motion_infer", "distance_infer_center_oo", "distance_infer_center_oo_mv",
)  # fmt: skip
NA_TASKS = (
    "depth_prediction_oc", "depth_prediction_oo", "distance_prediction_oc", "distance_prediction_oo",
    "depth_prediction_oc_mv", "depth_prediction_oo_mv", "distance_prediction_oo_mv", "distance_prediction_oc_mv",
)  # fmt: skip
SPECIAL_TASKS = ("view_change_infer",)
LEVELS = {
    "Low": ("depth_prediction_oc", "depth_prediction_oc_mv", "depth_prediction_oo", "depth_prediction_oo_mv",
            "distance_prediction_oc", "distance_prediction_oc_mv", "distance_prediction_oo",
            "distance_prediction_oo_mv"),
    "Middle": ("position_matching", "camera_motion_infer", "view_change_infer"),
    "High": ("distance_infer_center_oo", "distance_infer_center_oo_mv", "obj_spatial_relation_oc_mv",
             "obj_spatial_relation_oo", "obj_spatial_relation_oo_mv", "spatial_imagination_oc",
             "spatial_imagination_oc_mv", "spatial_imagination_oo", "spatial_imagination_oo_mv"),
}  # fmt: skip
SUFFIX = {"MCQ": "accuracy", "NA": "MRA:.5:.95:.05", "SPECIAL": "vci_metric"}
AXES = (("move_right", "move_left"), ("move_up", "move_down"), ("move_forward", "move_backward"),
        ("rotate_right", "rotate_left"), ("rotate_up", "rotate_down"))  # fmt: skip


def task_type(task: str, where: str) -> str:
    """`MCQ`, `NA` or `SPECIAL` for a task; a ValueError naming `where` for any other."""
    for kind, tasks in (("MCQ", MCQ_TASKS), ("NA", NA_TASKS), ("SPECIAL", SPECIAL_TASKS)):
        if task in tasks:
            return kind
    raise ValueError(f"{where}: unknown SPAR-Bench task {task!r}")


def instructions(text: Any) -> dict[str, float]:
    """`move_right:0.3,rotate_left:10` -> {action: value} (module docstring)."""
    out: dict[str, float] = {}
    for item in str(text).split(","):
        item = item.strip()
        if ":" not in item:
            continue
        key, value = item.split(":", 1)
        try:
            out[key.strip()] = float(value.strip())
        except ValueError:
            pass
    return out


def view_change_score(reply: str | None, answer: Any) -> float:
    """The mean MRA over the five axes of a `view_change_infer` row; `reply` None for a failed call (0)."""
    if reply is None:
        return 0.0
    mine, gold = instructions(reply), instructions(answer)
    scores = [mean_relative_accuracy(mine.get(pos, 0.0) - mine.get(neg, 0.0), gold.get(pos, 0.0) - gold.get(neg, 0.0))
              for pos, neg in AXES]  # fmt: skip
    return sum(scores) / len(scores)


def row_score(reply: str | None, answer: Any, kind: str, *, vlmevalkit: bool = False) -> tuple[float, Any]:
    if kind == "MCQ":
        return option_score(reply, answer, vlmevalkit=vlmevalkit)
    if kind == "NA":
        return numeric_score(reply, answer)
    return view_change_score(reply, answer), None


def figures(tasks: Sequence[str], kinds: Sequence[str], scores: Sequence[float]) -> dict[str, float]:
    """SparBench._aggregate: `overall`, `Low`, `Middle`, `High`, then the task figures by level."""
    by_task: dict[str, list[float]] = {}
    for task, score in zip(tasks, scores, strict=True):
        by_task.setdefault(task, []).append(score)
    kind_of = dict(zip(tasks, kinds, strict=True))
    per_task = {task: sum(v) / len(v) for task, v in by_task.items()}
    out = {"overall": sum(per_task.values()) / len(per_task)}
    for level, members in LEVELS.items():
        present = [per_task[t] for t in members if t in per_task]
        out[level] = sum(present) / len(present) if present else 0.0
    for members in LEVELS.values():
        out.update({f"{t}_{SUFFIX[kind_of[t]]}": per_task[t] for t in members if t in per_task})
    return out


def score_sparbench(df: pd.DataFrame) -> EvalResult:
    """Score SPAR-Bench replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `task`."""
    what = "SPAR-Bench scoring"
    require_columns(df, ("index", "prediction", "answer", "task"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    tasks = [str(t) for t in df["task"]]
    kinds = [task_type(t, f"{what}: row index {i}, field task") for i, t in zip(df["index"], tasks)]
    scores, readings, errors = [], [], []
    for index, pred, answer, kind in zip(df["index"], df["prediction"], df["answer"], kinds, strict=True):
        reply = None if failed_call(pred) else str(pred)
        if reply is None:
            errors.append(index)
        score, reading = row_score(reply, answer, kind)
        scores.append(score)
        readings.append(reading)
    metrics = figures(tasks, kinds, scores)
    notes = [f"{len(errors)} failed call(s) score 0: index {listed(errors)}"] if errors else []
    unread = sum(1 for r, k, p in zip(readings, kinds, df["prediction"])
                 if k != "SPECIAL" and r is None and not failed_call(p))  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors),
              "by_rule": len(df) - len(errors) - unread, "by_judge": 0, "unread": unread,
              "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "task": tasks, "task_type": kinds,
                               "read": pd.Series(readings, dtype=object), "score": scores})  # fmt: skip
    return EvalResult(
        scorer="sparbench", metrics=metrics, primary="overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=_vlmevalkit_figure(df, tasks, kinds, scores, readings),
    )  # fmt: skip


def _vlmevalkit_figure(df: pd.DataFrame, tasks: list[str], kinds: list[str], mine: list[float],
                       my_readings: list[Any]) -> VlmevalkitFigure:  # fmt: skip
    """VLMEvalKit's reading: the replies its xlsx round trip leaves, two unread letters a hit."""
    theirs, differing = [], []
    replies = vlmevalkit_replies(df["prediction"].tolist())
    for index, reply, answer, kind, my_score, my_reading in zip(
        df["index"], replies, df["answer"], kinds, mine, my_readings, strict=True
    ):
        score, reading = row_score(reply, answer, kind, vlmevalkit=True)
        theirs.append(score)
        if reply is not None and score != my_score:
            differing.append(ReadingDifference(index, my_reading, reading, my_score, score))
    return VlmevalkitFigure(figures(tasks, kinds, theirs), "overall", differing)
