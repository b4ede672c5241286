"""MLVU_MCQ's scorer (VLMEvalKit `MLVU_MCQ.evaluate` and utils/mlvu.py `check_ans_with_model`, `get_dimension_rating`
at e8e78f05).

A reply is right when the character before its first `)` (the whole reply when it has none) is the answer's letter
(the answer's position among the candidates); otherwise VLMEvalKit's `can_infer` reads a letter from the whole reply
against the candidates, and with a judge a reply that names nothing goes to the judge (VLMEvalKit's MCQ extraction
prompt; without one it is a miss, as its `exact_matching`). vlmkit reads replies exactly so; the differences are
in what counts:
- a failed inference is a miss here; VLMEvalKit scores it -1 and its rating adds that to the task's sum;
- a reply VLMEvalKit's xlsx gives back as NaN (an empty reply, "N/A", "None", ...) stops its scorer with a TypeError
  (`FAIL_MSG in pred`); vlmkit reads the reply itself, and VLMEvalKit's figure counts it as a miss (a note says so).
Figures are percent: `M-Avg` (correct over all rows: VLMEvalKit's MLVU sums the tasks' right answers and rows) and
one per task (VLMEvalKit's MLVU_MCQ rating is {task: [sum of scores, rows]}; its MLVU table gives
round(sum / rows * 100, 1)). VLMEvalKit's figure (`EvalResult.vlmevalkit`) rounds to 1 decimal and counts -1 for a
failed call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.choice_judge import NO_OPTION, judge_notes
from vlmkit.scoring.common.choice_reading import vlmevalkit_read
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.kinds.video_mcq import (
    INFERENCE_ERROR,
    RULE,
    UNPARSED,
    ask_unread,
    candidate_list,
    method_counts,
    mvbench_target,
)
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["MLVU_TASKS", "mlvu_letter", "score_mlvu_mcq"]

# --- MLVU_MCQ --------------------------------------------------------------------------------------------------
MLVU_TASKS = ("plotQA", "needle", "ego", "count", "order", "anomaly_reco", "topic_reasoning")
NOTE_MLVU_FAILED = (
    "a failed inference is a miss here; VLMEvalKit scores it -1, which its MLVU rating adds to the task's sum "
    "(a failed row takes one right answer away); so does its figure"
)


def mlvu_letter(prediction: str) -> str:
    """What VLMEvalKit's MLVU `check_ans_with_model` compares with the answer's letter: the character before the
    reply's first `)` when it has one (empty when `)` comes first), else the whole reply."""
    if ")" in prediction:
        at = prediction.index(")")
        return prediction[at - 1:at]
    return prediction


def score_mlvu_mcq(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """MLVU_MCQ predictions -> EvalResult. VLMEvalKit's `MLVU_MCQ.evaluate` (utils/mlvu.py at e8e78f05): a reply is
    right when `mlvu_letter` gives the answer's letter (its position among the candidates); otherwise can_infer
    reads a letter from the whole reply against the candidates, and with a judge a reply that names nothing goes to
    the judge (without one it is a miss, VLMEvalKit's `exact_matching`). Figures are percent: `M-Avg` (correct over
    all rows, as VLMEvalKit's MLVU sums its tasks) and one per task. VLMEvalKit's figure rounds them to 1 decimal,
    as its MLVU table does, and counts a failed inference as -1. Columns: index, prediction, answer (the answer's
    text), question, candidates (a list of texts), task_type."""
    what = "MLVU_MCQ"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "candidates", "task_type"), what)
    n = len(records)
    methods = [INFERENCE_ERROR] * n
    letters: list[str | None] = [None] * n
    replies: list[str | None] = [None] * n
    targets: list[str] = []
    options: list[dict[str, str]] = []
    for i, row in enumerate(records):
        candidates = candidate_list(row["candidates"], f"{what}: row index {row['index']}, field `candidates`")
        try:
            letter, _ = mvbench_target(candidates, str(row["answer"]))
        except ValueError as exc:
            raise ValueError(f"{what}: row index {row['index']}, field `answer`: {exc}") from None
        targets.append(letter)
        options.append({chr(ord("A") + p): c for p, c in enumerate(candidates)})
        if not is_missing(row["prediction"]):
            methods[i], letters[i] = _mlvu_read(str(row["prediction"]), letter, options[i])
    ask = [i for i in range(n) if methods[i] == UNPARSED]
    if judge is not None and ask:
        for i, verdict in ask_unread(judge, records, options, ask).items():
            methods[i], letters[i], replies[i] = verdict.method, verdict.value, verdict.reply
    hits = np.array([letters[i] is not None and letters[i] == targets[i] for i in range(n)], dtype=bool)
    task_of = np.array([str(row["task_type"]) for row in records], dtype=object)
    present = list(dict.fromkeys(task_of))
    tasks = [t for t in MLVU_TASKS if t in present] + [t for t in present if t not in MLVU_TASKS]
    scores = hits.astype(float)
    metrics = _mlvu_metrics(scores, tasks, task_of)
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    theirs: list[str | None] = []
    their_scores = np.zeros(n)
    nan_rows: list[Any] = []
    for i, cell in enumerate(back):
        letter = None
        if failed[i]:
            their_scores[i] = -1.0
        elif is_nan_cell(cell):
            nan_rows.append(records[i]["index"])
        else:
            method, letter = _mlvu_read(str(cell), targets[i], options[i])
            if method == UNPARSED:  # the same judge asks as vlmkit's (or none)
                letter = letters[i]
            their_scores[i] = float(letter is not None and letter == targets[i])
        theirs.append(letter)
    figure_notes = ["VLMEvalKit prints MLVU's figures in percent with 1 decimal; so does this figure", NOTE_MLVU_FAILED]
    notes = [NOTE_MLVU_FAILED]
    counts = method_counts(methods, n)
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        text = (f"{len(nan_rows)} reply(ies) (index {', '.join(str(r) for r in nan_rows[:5])}) read back from "
                "VLMEvalKit's xlsx as NaN, where its MLVU scorer stops with a TypeError; counted as misses in its "
                "figure")
        figure_notes.append(text)
        notes.append(text)
    figure = VlmevalkitFigure(
        metrics={k: round(v, 1) for k, v in _mlvu_metrics(their_scores, tasks, task_of).items()}, primary="M-Avg",
        differing=[
            ReadingDifference(row["index"], ours, their, float(hit), max(0.0, float(score)))
            for row, ours, their, hit, score, fail in zip(records, letters, theirs, hits, their_scores, failed)
            if not fail and (ours != their or float(hit) != score)
        ],
        notes=figure_notes,
    )  # fmt: skip
    per_sample = pd.DataFrame({
        "index": [row["index"] for row in records], "extracted": letters, "hit": hits, "method": methods,
        "judge": replies, "vlmevalkit": pd.Series(theirs, dtype=object), "vlmevalkit_score": their_scores,
    })  # fmt: skip
    notes += judge_notes(methods, judge is not None and bool(ask), methods.count(UNPARSED))
    return EvalResult(
        scorer="mlvu_mcq", metrics=metrics, primary="M-Avg", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=counts, notes=notes,
        scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip


def _mlvu_read(prediction: str, target: str, options: dict[str, str]) -> tuple[str, str | None]:
    """(method, letter) of one reply by MLVU's rule: the letter before `)`, then can_infer (UNPARSED: neither)."""
    if mlvu_letter(prediction) == target:
        return RULE, target
    read = vlmevalkit_read(prediction, options)
    if read is None:
        return UNPARSED, None
    return RULE, None if read == NO_OPTION else read


def _mlvu_metrics(scores: np.ndarray, tasks: list[str], task_of: np.ndarray) -> dict[str, float]:
    metrics = {"M-Avg": 100.0 * float(scores.sum()) / len(scores)}
    for task in tasks:
        metrics[task] = 100.0 * float(scores[task_of == task].sum()) / int((task_of == task).sum())
    return metrics
