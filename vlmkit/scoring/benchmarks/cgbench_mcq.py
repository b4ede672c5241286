"""CG-Bench MCQ-with-grounding's scorer (VLMEvalKit `CGBench_MCQ_Grounding(_Mini).evaluate`, utils/cgbench.py
`post_process` and `get_dimention_rating_mcq_grouding` at e8e78f05). Every question is asked three times: `long_acc`
(the whole video), `clue_acc` (its clue intervals) and `miou` (where are the clues?).

A reply's score (`cgbench_score`): the `result` of its first ```json block (a bare word after ": " quoted first), for
the MCQ modes 1 when it is the answer letter, else 0; for miou its intervals ([s, e], or a list of them; all within 0..1
are fractions of the video's duration), scored by the IoU of the two merged interval sets. A reply without a readable
block falls back: MCQ modes, 1 when any standalone capital A-H in it is the answer (so "A or B" is right when either
is), 0 when some other is, unscored when there is none; miou, the numbers in it paired in order (an odd last one
dropped; no scaling by duration), unscored with fewer than two. A miou block whose result is not a list is unscored
(no fall back).

Figures are fractions: for each mode its mean (`long_acc`, `clue_acc`, `miou`) and its means per duration (minutes,
`0 ~ 10` .. `60+`), domain and sub-category (`long_acc: duration 10 ~ 20`, ...); `CRR` = min(long_acc, clue_acc) /
clue_acc; `acc@iou` = the mean over IoU thresholds 0.1 .. 0.5 of the questions right in long_acc whose miou score is
above the threshold, over the questions asked in both; `rec@iou` = the mean over the thresholds of the miou rows above
it. The headline is long_acc.

VLMEvalKit leaves an unscored row, and a failed call, out of every figure; vlmkit scores it 0 (a miss, IoU 0), so a
reply that cannot be read never raises a score. VLMEvalKit's figure (`EvalResult.vlmevalkit`) leaves them out, rounds
to 4 decimals and lists its group figures only for groups that have rows (VLMEvalKit also lists the empty ones, as 0).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.core.video import merge_intervals
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, UNPARSED, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["MODES", "cgbench_score", "duration_range", "interval_iou", "score_cgbench_mcq"]

MODES = ("long_acc", "clue_acc", "miou")
UNSCORED = -1.0
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)
DURATION_EDGES = (10, 20, 30, 40, 50, 60)
_BARE_WORD = re.compile(r"(?<=:\s)([A-Za-z_]\w*)")
_LETTERS = re.compile(r"\b[A-H]\b")
_NUMBERS = re.compile(r"-?\d+\.?\d*")
GROUPS = ("duration", "domain", "sub_category")


def duration_range(seconds: float) -> str:
    """The duration bin VLMEvalKit's pd.cut gives (minutes, right edge included)."""
    minutes = seconds / 60
    low = 0
    for edge in DURATION_EDGES:
        if minutes <= edge:
            return f"{low} ~ {edge}"
        low = edge
    return "60+"


def interval_iou(first: list[list[float]], second: list[list[float]]) -> float:
    """IoU of two sets of intervals, each merged first (`calculate_intervals_iou`)."""
    a, b = merge_intervals(first), merge_intervals(second)
    inter = sum(max(0.0, min(x[1], y[1]) - max(x[0], y[0])) for x in a for y in b)
    union = sum(e - s for s, e in a) + sum(e - s for s, e in b) - inter
    return inter / union if union > 0 else 0.0


def _json_block(reply: str) -> str:
    start = reply.find("```json")
    end = reply.find("```", start + len("```json"))
    return reply[start + len("```json"):end].strip() if start != -1 and end != -1 else ""


def _intervals(value: Any) -> list[list[float]]:
    parsed = ast.literal_eval(value) if isinstance(value, str) else value
    return [[float(a), float(b)] for a, b in parsed]


def cgbench_score(reply: str, answer: str, mode: str, duration: float) -> float:
    """VLMEvalKit's `post_process` for one row (module docstring): 1/0 for the MCQ modes, an IoU for miou, UNSCORED
    where it reads nothing."""
    if not reply:
        return UNSCORED
    block = _json_block(reply)
    if block:
        if mode != "miou":
            block = _BARE_WORD.sub(r'"\1"', block)
        try:
            result = json.loads(block)["result"]
            if mode != "miou":
                return 1.0 if answer == result else 0.0
            if not isinstance(result, list):
                return UNSCORED
            if not isinstance(result[0], list):
                result = [result]
            if all(r[0] <= 1 and r[1] <= 1 for r in result):
                result = [[r[0] * duration, r[1] * duration] for r in result]
            return interval_iou(_intervals(answer), result)
        except Exception:  # noqa: BLE001 - VLMEvalKit falls back on any failure to read the block
            pass
    if mode != "miou":
        letters = _LETTERS.findall(reply)
        return (1.0 if answer in letters else 0.0) if letters else UNSCORED
    numbers = _NUMBERS.findall(reply)
    if len(numbers) < 2:
        return UNSCORED
    numbers = numbers[: len(numbers) // 2 * 2]
    pairs = [[float(numbers[i]), float(numbers[i + 1])] for i in range(0, len(numbers), 2)]
    return interval_iou(_intervals(answer), pairs)


def _crr(frame: pd.DataFrame) -> float:
    long = frame.loc[frame["task_mode"] == "long_acc", "score"].mean()
    clue = frame.loc[frame["task_mode"] == "clue_acc", "score"].mean()
    return float(min(long, clue) / clue) if clue and not np.isnan(clue) else 0.0


def _acc_at_iou(frame: pd.DataFrame) -> float:
    miou = frame[frame["task_mode"] == "miou"]
    long = frame[frame["task_mode"] == "long_acc"]
    valid = set(miou["qid"]) & set(long["qid"])
    values = []
    for th in THRESHOLDS:
        above = set(miou.loc[miou["score"] > th, "qid"])
        right = long[long["qid"].isin(above) & (long["score"] == 1)]
        values.append(len(right) / len(valid) if valid else 0.0)
    return float(np.mean(values))


def _rec_at_iou(frame: pd.DataFrame) -> float:
    miou = frame.loc[frame["task_mode"] == "miou", "score"]
    return float(np.mean([(miou > th).sum() / len(miou) if len(miou) else 0.0 for th in THRESHOLDS]))


def _rating(frame: pd.DataFrame) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for mode in MODES:
        rows = frame[frame["task_mode"] == mode]
        if len(rows):
            metrics[mode] = float(rows["score"].mean())
    metrics.update({"CRR": _crr(frame), "acc@iou": _acc_at_iou(frame), "rec@iou": _rec_at_iou(frame)})
    for mode in MODES:
        rows = frame[frame["task_mode"] == mode]
        for group in GROUPS:
            for value, scores in rows.groupby(group, sort=True)["score"]:
                metrics[f"{mode}: {group} {value}"] = float(scores.mean())
    return metrics


def score_cgbench_mcq(df: pd.DataFrame, *, name: str = "CG-Bench_MCQ_Grounding") -> EvalResult:
    """CG-Bench MCQ-grounding predictions -> EvalResult (module docstring). Columns: index, prediction, answer,
    task_mode, duration (seconds), qid, domain, sub_category."""
    columns = ("index", "prediction", "answer", "task_mode", "duration", "qid", "domain", "sub_category")
    records, _ = keyed_records(df, columns, name)
    scores, methods = [], []
    for row in records:
        if row["task_mode"] not in MODES:
            raise ValueError(f"{name}: row index {row['index']}, field `task_mode`: {row['task_mode']!r} is none of "
                             f"{', '.join(MODES)}")
        if is_missing(row["prediction"]):
            scores.append(UNSCORED)
            methods.append(INFERENCE_ERROR)
            continue
        score = cgbench_score(str(row["prediction"]), str(row["answer"]), row["task_mode"], float(row["duration"]))
        scores.append(score)
        methods.append(RULE if score != UNSCORED else UNPARSED)
    frame = pd.DataFrame({
        "index": [r["index"] for r in records], "qid": [str(r["qid"]) for r in records],
        "task_mode": [r["task_mode"] for r in records], "domain": [str(r["domain"]) for r in records],
        "sub_category": [str(r["sub_category"]) for r in records],
        "duration": [duration_range(float(r["duration"])) for r in records], "vlmevalkit_score": scores,
    })  # fmt: skip
    frame["score"] = [max(s, 0.0) for s in scores]
    metrics = _rating(frame)
    theirs = frame[frame["vlmevalkit_score"] != UNSCORED].assign(score=lambda f: f["vlmevalkit_score"])
    figure = VlmevalkitFigure(
        metrics={k: round(v, 4) for k, v in _rating(theirs).items()}, primary="long_acc",
        differing=[ReadingDifference(i, "scored 0", "left out", 0.0, None) for i, s in zip(frame["index"], scores)
                   if s == UNSCORED],
        notes=["VLMEvalKit leaves unscored rows (no answer read, a failed call) out of every figure"],
    )  # fmt: skip
    per_sample = frame[["index", "task_mode", "score", "vlmevalkit_score"]].assign(
        hit=lambda f: f["score"] == 1.0, method=methods)
    return EvalResult(
        scorer="cgbench_mcq", metrics=metrics, primary="long_acc", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="score",
        counts=method_counts(methods, len(records)),
        notes=["a reply no rule reads, and a failed inference, score 0 (VLMEvalKit leaves them out)"],
        scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip
