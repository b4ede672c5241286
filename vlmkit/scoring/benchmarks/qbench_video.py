"""QBench_Video_MCQ's scorer (VLMEvalKit `QBench_Video_MCQ.evaluate`, utils/qbench_video.py at e8e78f05).

The answer is `L. text`: its choice L (before the first `.`) and its text (up to the next `.`). A reply is right
(VLMEvalKit's `check_ans_mcq`) when it is the choice exactly, holds `L.` anywhere, is the answer text exactly, or has
a line that is the choice exactly (the reply as it is, not stripped). No judge (VLMEvalKit asks none). Figures are
fractions: `Overall` (right / all rows) and one per question type, the first comma-separated part of the row's
first `dimensions` entry (VLMEvalKit's `get_dimension_rating`, which returns [sum of scores, count] per type and no
overall). A failed inference is a miss.

VLMEvalKit's figure (`EvalResult.vlmevalkit`): per type its sum of scores over its count, where a failed call scores
-1 (its fail message), and `Overall` the same over all rows (VLMEvalKit prints no overall); a reply its xlsx gives back
as NaN (an empty reply, `N/A`, ...) stops VLMEvalKit's evaluate with a TypeError there: such rows are read as misses
in the figure and named in its notes.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["qbench_answer", "qbench_hit", "question_type", "score_qbench_video"]


def qbench_answer(answer: str, where: str) -> tuple[str, str]:
    """(choice, text) of an answer `L. text` as VLMEvalKit splits it; ValueError naming `where` without a `.`."""
    parts = str(answer).split(".")
    if len(parts) < 2:
        raise ValueError(f"{where}, field `answer`: {answer!r} is not `L. text`")
    return parts[0].strip(), parts[1].strip()


def qbench_hit(prediction: str, choice: str, text: str) -> bool:
    """VLMEvalKit's `check_ans_mcq` (module docstring)."""
    if choice == prediction or f"{choice}." in prediction or text == prediction:
        return True
    return choice in prediction.split("\n")


def question_type(dimensions: Any, where: str) -> str:
    """The first comma-separated part of the first entry of a row's `dimensions` (a list, or its literal)."""
    value = dimensions
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise ValueError(f"{where}, field `dimensions`: not a list literal: {dimensions!r}") from None
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where}, field `dimensions`: not a non-empty list: {dimensions!r}")
    return str(value[0]).split(",")[0]


def _figures(scores: np.ndarray, types: list[str]) -> dict[str, float]:
    kinds = np.array(types, dtype=object)
    metrics = {"Overall": float(scores.mean())}
    for kind in dict.fromkeys(types):
        metrics[kind] = float(scores[kinds == kind].mean())
    return metrics


def score_qbench_video(df: pd.DataFrame) -> EvalResult:
    """QBench_Video_MCQ predictions -> EvalResult (module docstring). Columns: index, prediction, answer, dimensions."""
    what = "QBench_Video_MCQ"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "dimensions"), what)
    n = len(records)
    answers = [qbench_answer(r["answer"], f"{what}: row index {r['index']}") for r in records]
    types = [question_type(r["dimensions"], f"{what}: row index {r['index']}") for r in records]
    methods = [INFERENCE_ERROR if is_missing(r["prediction"]) else RULE for r in records]
    hits = np.array([m == RULE and qbench_hit(str(r["prediction"]), *a) for r, m, a in zip(records, methods, answers)])
    back = vlmevalkit_cells([None if m == INFERENCE_ERROR else r["prediction"] for r, m in zip(records, methods)])
    their_scores = np.zeros(n)
    nan_rows = []
    for i, (cell, method, answer) in enumerate(zip(back, methods, answers)):
        if method == INFERENCE_ERROR:
            their_scores[i] = -1.0
        elif is_nan_cell(cell):
            nan_rows.append(records[i]["index"])
        else:
            their_scores[i] = float(qbench_hit(str(cell), *answer))
    notes = []
    if nan_rows:
        shown = ", ".join(str(x) for x in nan_rows[:5]) + (" ..." if len(nan_rows) > 5 else "")
        notes.append(f"VLMEvalKit's evaluate stops with a TypeError on a reply its xlsx gives back as NaN (rows "
                     f"{shown}); they are misses in this figure")
    figure = VlmevalkitFigure(
        metrics=_figures(their_scores, types), primary="Overall",
        differing=[ReadingDifference(r["index"], None, None, float(h), float(t))
                   for r, h, t, m in zip(records, hits, their_scores, methods)
                   if m != INFERENCE_ERROR and h != (t == 1)],
        notes=["VLMEvalKit prints per type [sum of scores, count] and no overall; a failed call scores -1 there",
               *notes],
    )  # fmt: skip
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "hit": hits, "method": methods,
                               "question_type": types, "vlmevalkit_score": their_scores})
    metrics = _figures(hits.astype(float), types)
    counts = method_counts(methods, n)
    return EvalResult(
        scorer="qbench_video", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=counts,
        notes=["a failed inference is a miss (VLMEvalKit scores it -1)"], scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip
