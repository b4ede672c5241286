"""Video_Holmes's scorer (VLMEvalKit `Video_Holmes.evaluate`, utils/videoholmes.py at e8e78f05).

The letter is `extract_option`: the text of the reply's last `<answer>...</answer>` block; the first of A-F followed
by a space or `:` or preceded by `[`, else the first of A-F anywhere in it; no block or no letter: no answer. A row
is right when that letter is the answer. No judge (VLMEvalKit never asks one here). Figures are fractions: `Overall`
(right over all rows) and one per question type, VLMEvalKit's `get_dimension_rating` (`acc_by_type`, `total`).
vlmkit reads replies exactly so, and a failed inference or a reply VLMEvalKit's xlsx gives back as NaN reads as no
answer in both, so VLMEvalKit's figure (`EvalResult.vlmevalkit`) is the same figure.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, UNPARSED, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["holmes_letter", "score_video_holmes"]

_ANSWER = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.DOTALL)
_LETTERS = "ABCDEF"


def holmes_letter(prediction: str) -> str | None:
    """VLMEvalKit's Video-Holmes `extract_option`: a letter A-F, or None where it says WRONG."""
    matches = _ANSWER.findall(prediction)
    if not matches:
        return None
    choice = matches[-1].strip()
    for letter in _LETTERS:
        if f"{letter} " in choice or f"{letter}:" in choice or f"[{letter}" in choice:
            return letter
    for letter in _LETTERS:
        if letter in choice:
            return letter
    return None


def score_video_holmes(df: pd.DataFrame) -> EvalResult:
    """Video_Holmes predictions -> EvalResult (module docstring). Columns: index, prediction, answer (a letter),
    question_type."""
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question_type"), "Video_Holmes")
    n = len(records)
    methods = [INFERENCE_ERROR] * n
    letters: list[str | None] = [None] * n
    for i, row in enumerate(records):
        if not is_missing(row["prediction"]):
            letters[i] = holmes_letter(str(row["prediction"]))
            methods[i] = RULE if letters[i] is not None else UNPARSED
    hits = np.array([letters[i] is not None and letters[i] == str(r["answer"]).strip() for i, r in enumerate(records)])
    types = np.array([str(r["question_type"]) for r in records], dtype=object)
    metrics = {"Overall": float(hits.mean())}
    for qtype in sorted(set(types)):  # VLMEvalKit's groupby order
        metrics[qtype] = float(hits[types == qtype].mean())
    notes = []
    if methods.count(UNPARSED):
        notes.append(f"{methods.count(UNPARSED)} replies without an <answer> block naming A-F count as misses")
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "extracted": pd.Series(letters, dtype=object),
                               "hit": hits, "method": methods})
    figure = VlmevalkitFigure(metrics=dict(metrics), primary="Overall", differing=[],
                              notes=["VLMEvalKit reads the replies as vlmkit does: the same figure"])
    return EvalResult(
        scorer="video_holmes", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=method_counts(methods, n),
        notes=notes, scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip
