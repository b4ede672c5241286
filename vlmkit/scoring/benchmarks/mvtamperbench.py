"""MVTamperBench's scorer (VLMEvalKit `MVTamperBench.evaluate`, utils/tamperbench.py at e8e78f05).

A reply is read as MVBench's is (`vlmkit.scoring.kinds.video_mcq.score_mvbench`): right when its first word is part
of the target's `(l)` or holds it (`check_ans_with_model`), else the letter VLMEvalKit's `can_infer` reads against
the candidates, else (with a judge) the judge's letter. Figures are percent, VLMEvalKit's `get_dimension_rating`
(right / total) over all rows (`Overall`), per task type (`Action Count`, ...), per tamper type (`tamper_type:
masking`, ...) and per task and tamper type (`task_tamper_type: Action Count_masking`, ...), the rating VLMEvalKit's
evaluate returns.

Tamper detection (VLMEvalKit's `process_results`, written to its `_score_f1` file), where every answer is Yes or No:
each row's Yes/No prediction is its answer when right, the other one when not; for each tamper type other than
`original`, its rows with all `original` rows give accuracy, precision, recall and F1 (Yes = positive, 0 where
undefined), and `detection F1` is their mean (VLMEvalKit's `overall` row); fractions 0..1 (`detection F1: masking`).

VLMEvalKit's figure (`EvalResult.vlmevalkit`): its reading of every reply as its xlsx gives it back (MVBench's
figure: a reply read back as NaN is never scored and its NaN score counts as right in the rating, but as a miss in
the detection figures), percent with 2 decimals as its rating prints them.
"""

from __future__ import annotations

from dataclasses import replace
import numpy as np
import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.kinds.video_mcq import score_mvbench
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

__all__ = ["GROUPS", "detection_metrics", "score_mvtamperbench", "tamper_metrics"]

GROUPS = ("tamper_type", "task_tamper_type")
ORIGINAL = "original"


def tamper_metrics(tasks: list[str], tampers: list[str], hits: np.ndarray) -> dict[str, float]:
    """Percent right over all rows, per task type, per tamper type and per task and tamper type (first-seen order)."""
    task_of = np.array(tasks, dtype=object)
    tamper_of = np.array(tampers, dtype=object)
    both = np.array([f"{t}_{p}" for t, p in zip(tasks, tampers)], dtype=object)
    metrics = {"Overall": 100.0 * float(hits.mean())}
    for value in dict.fromkeys(tasks):
        metrics[value] = 100.0 * float(hits[task_of == value].mean())
    for group, values in (("tamper_type", tamper_of), ("task_tamper_type", both)):
        for value in dict.fromkeys(values.tolist()):
            metrics[f"{group}: {value}"] = 100.0 * float(hits[values == value].mean())
    return metrics


def detection_metrics(answers: list[str], tampers: list[str], hits: np.ndarray) -> dict[str, float]:
    """VLMEvalKit's tamper-detection figures (module docstring); empty unless every answer is Yes or No and there
    are `original` rows and tampered rows."""
    if any(a not in ("Yes", "No") for a in answers):
        return {}
    truth = np.array([a == "Yes" for a in answers])
    predicted = np.where(hits, truth, ~truth)
    tamper_of = np.array(tampers, dtype=object)
    original = tamper_of == ORIGINAL
    kinds = sorted(set(tampers) - {ORIGINAL})
    if not original.any() or not kinds:
        return {}
    per_kind: dict[str, dict[str, float]] = {}
    for kind in kinds:
        rows = original | (tamper_of == kind)
        t, p = truth[rows], predicted[rows]
        tp, fp, fn = int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum())
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        per_kind[kind] = {
            "accuracy": float((t == p).mean()), "precision": precision, "recall": recall,
            "F1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        }  # fmt: skip
    metrics = {f"detection {name}": float(np.mean([m[name] for m in per_kind.values()]))
               for name in ("accuracy", "precision", "recall", "F1")}
    metrics.update({f"detection F1: {kind}": m["F1"] for kind, m in per_kind.items()})
    return metrics


def score_mvtamperbench(df: pd.DataFrame, *, judge: Judge | None = None, name: str = "MVTamperBench") -> EvalResult:
    """MVTamperBench predictions -> EvalResult (module docstring). Columns: index, prediction, answer (the answer
    text), question, candidates (a list of texts), task_type, tamper_type."""
    if "tamper_type" not in df.columns:
        raise ValueError(f"the predictions: missing column `tamper_type`, needed to evaluate {name}")
    read = score_mvbench(df, judge=judge, name=name)
    tamper_of = dict(zip(df["index"].map(str), df["tamper_type"].map(str)))
    task_of = dict(zip(df["index"].map(str), df["task_type"].map(str)))
    answer_of = dict(zip(df["index"].map(str), df["answer"].map(str)))
    keys = [str(i) for i in read.per_sample["index"]]
    tasks, tampers, answers = [task_of[k] for k in keys], [tamper_of[k] for k in keys], [answer_of[k] for k in keys]
    hits = read.per_sample["hit"].to_numpy(dtype=bool)
    their_hits = read.per_sample["vlmevalkit_hit"].to_numpy(dtype=bool)
    # a reply read back as NaN: right in VLMEvalKit's rating, a miss in its detection figures (score != 1)
    their_scored = np.array([bool(h) and r is not None for h, r in zip(their_hits, read.per_sample["vlmevalkit"])])
    metrics = tamper_metrics(tasks, tampers, hits)
    detection = detection_metrics(answers, tampers, hits)
    theirs = {k: round(v, 2) for k, v in tamper_metrics(tasks, tampers, their_hits).items()}
    theirs.update(detection_metrics(answers, tampers, their_scored))
    figure = replace(read.vlmevalkit, metrics=theirs, notes=[
        *read.vlmevalkit.notes, "VLMEvalKit's detection figures (its _score_f1 file) count a NaN reply as a miss"])
    notes = [n.replace("MVBench", "MVTamperBench (MVBench's)") for n in read.notes]
    return replace(
        read, scorer="mvtamperbench", metrics={**metrics, **detection},
        table=pd.DataFrame([{"split": "none", **metrics, **detection}]), notes=notes, vlmevalkit=figure,
        metric_scales={k: Scale(FRACTION) for k in detection}, interval=None,
    )  # fmt: skip

