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

from vlmkit.scoring.benchmarks.spbench import numeric_score, option_score, score_typed_rows
from vlmkit.scoring.common.mean_relative_accuracy import mean_relative_accuracy
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

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
    return score_typed_rows(df, scorer="sparbench", what="SPAR-Bench scoring", type_column="task",
                            kind_of=task_type, row_score=row_score, figures=figures, scale=Scale(FRACTION),
                            unread_kinds=("MCQ", "NA"))
