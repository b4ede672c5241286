"""VLMEvalKit's own per-row rules for open-answer VQA (vlmeval/dataset/utils/vqa_eval.py and the OCRBench class of
vlmeval/dataset/image_vqa.py at VLMEVALKIT_COMMIT), kept to compute the figure VLMEvalKit would print beside vlmkit's.

What VLMEvalKit does that vlmkit does not (each a reason a row's score can differ):
- replies pass through its xlsx round trip (vlmkit.scoring.common.vlmevalkit_cells): an empty, failed or `None`/`N/A`
  reply is the text `nan` (`an` is in `nan`: an OCRBench hit);
- VQA score: with a single ground truth its leave-one-out formula gives 0 (vlmkit: exact match); its punctuation rule
  keeps a period after a digit (`5.`);
- relaxed accuracy (ChartQA): numbers are read by `float()`, so `inf` against `inf` gives a NaN relative change, a
  miss (vlmkit: an exact match, a hit);
- answers: `[...]` cells are evaluated as Python (vlmkit reads them with ast.literal_eval, the same lists).
ANLS is the official one in both (vlmkit.scoring.common.anls.anls, the one function both use).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import numpy as np

from vlmkit.scoring.common.anls import anls
from vlmkit.scoring.common.text_norm import process_digit_article, vlmevalkit_punctuation


def vlmevalkit_answers(text: str) -> list[str]:
    """The ground truths VLMEvalKit reads from an answer cell's text: a list literal's items, else the text."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        if isinstance(value, list):
            return [str(v) for v in value]
    return [text]


def process_answer(text: str) -> str:
    """VLMEvalKit's process_answer: tabs and newlines to spaces, strip, its punctuation rule, digits and articles."""
    text = text.replace("\n", " ").replace("\t", " ").strip()
    return process_digit_article(vlmevalkit_punctuation(text))


def vqa_score(prediction: str, answers: Sequence[str]) -> float:
    """Mean over the ground truths of min(1, matches among the *other* ground truths / 3): 0 for a single one."""
    gts = [process_answer(a) for a in answers]
    pred = process_answer(prediction)
    matches = []
    for pos in range(len(gts)):
        others = sum(1 for other, gt in enumerate(gts) if other != pos and gt == pred)
        matches.append(min(1.0, others / 3))
    return float(np.mean(matches)) if matches else 0.0


def _to_float(text: str) -> float | None:
    try:
        return float(text.rstrip("%")) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        return None


def relaxed(prediction: str, answers: Sequence[str], tolerance: float = 0.05) -> float:
    """relaxed_correctness, best over the answers: the prediction stripped, the target as it is."""
    pred = prediction.strip()
    pred_float = _to_float(pred)
    hits = []
    for target in answers:
        target_float = _to_float(target)
        if pred_float is not None and target_float:
            hits.append(abs(pred_float - target_float) / abs(target_float) <= tolerance)
        else:
            hits.append(pred.lower() == target.lower())
    return float(max(hits)) if hits else 0.0


def exact(prediction: str, answers: Sequence[str]) -> float:
    """The `accuracy` method: stripped, case-insensitive equality, best over the answers."""
    pred = prediction.strip().lower()
    return float(any(a.strip().lower() == pred for a in answers))


def ocrbench(prediction: str, answers: Sequence[str], *, space_insensitive: bool) -> bool:
    """OCRBench.evaluate's substring rule (the same as vlmkit's, on the text VLMEvalKit reads)."""
    if space_insensitive:
        pred = prediction.strip().replace("\n", " ").replace(" ", "")
        return any(a.strip().replace("\n", " ").replace(" ", "") in pred for a in answers)
    pred = prediction.lower().strip().replace("\n", " ")
    return any(a.lower().strip().replace("\n", " ") in pred for a in answers)


ROW_RULES = {"vqa_score": vqa_score, "anls": anls, "relaxed": relaxed, "exact": exact}


def row_score(metric: str, prediction: Any, answer: Any) -> float:
    """VLMEvalKit's score (0..1) of one row for a non-OCRBench metric, from the cells it reads back."""
    return ROW_RULES[metric](str(prediction), vlmevalkit_answers(str(answer)))
