"""CRPE (CRPE_EXIST, CRPE_RELATION) as VLMEvalKit scores it (vlmeval/dataset/image_vqa.py CRPE.evaluate with
utils/crpe.is_correct): one row at a time, accuracy per `category` (exist, subject, predicate, object) and `total`, as
fractions (0..1).

A reply is right (`crpe_hit`) when: it is one character and equals the answer's first character (`letter`); or it
starts with A-D and that letter equals the answer's first character (`leading_letter`); otherwise when the answer
without its first four characters (the `(A) ` of `(A) text`), lower-cased, is part of the lower-cased reply
(`option_text`). Kept as VLMEvalKit has it so figures compare: an answer of four characters or fewer leaves nothing
to look for in the last case, so every reply that does not start with A-D counts as right there; such rows are
counted (`empty_text_target`) and named in a note.

Where vlmkit differs: a failed call (no prediction) is a miss (`inference_errors`; VLMEvalKit scores the text
`None`); an empty reply is a miss (VLMEvalKit fails on it). A category other than the four is reported under its own
name (VLMEvalKit fails on it).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text

INFERENCE_ERROR = "inference_error"
CATEGORIES = ("exist", "subject", "predicate", "object")


def crpe_hit(prediction: str, answer: str) -> tuple[bool, str]:
    """(right, how it was decided) for one reply and its answer, by VLMEvalKit's is_correct."""
    if not prediction:
        return False, "empty"
    if len(prediction) == 1:
        return bool(answer) and prediction[0] == answer[0], "letter"
    if prediction[0] in "ABCD":
        return bool(answer) and prediction[0] == answer[0], "leading_letter"
    return answer[4:].lower() in prediction.lower(), "option_text"


def score_crpe(df: pd.DataFrame) -> EvalResult:
    """Score CRPE predictions. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `category`."""
    what = "CRPE scoring"
    require_columns(df, ("index", "prediction", "answer", "category"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    hits: list[bool] = []
    methods: list[str] = []
    empty_text: list[Any] = []
    for index, pred, answer in zip(df["index"].tolist(), df["prediction"].tolist(), df["answer"].tolist()):
        target = cell_text(answer) or ""
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            hit, method = False, INFERENCE_ERROR
        else:
            hit, method = crpe_hit(str(pred), target)
            if method == "option_text" and not target[4:]:
                empty_text.append(index)
        hits.append(hit)
        methods.append(method)
    categories = df["category"].map(lambda v: cell_text(v) or "").to_numpy()
    by_category = pd.Series(hits, dtype=float).groupby(categories).mean()
    order = [c for c in CATEGORIES if c in by_category.index] + sorted(c for c in by_category.index
                                                                         if c not in CATEGORIES)
    metrics = {c: float(by_category[c]) for c in order}
    metrics["total"] = float(sum(hits) / len(hits))
    tally = Counter(methods)
    counts = {"total": len(df), "scored": len(df), "hits": int(sum(hits))}
    counts.update({m: tally[m] for m in ("letter", "leading_letter", "option_text", "empty")})
    counts.update({"inference_errors": tally[INFERENCE_ERROR], "empty_text_target": len(empty_text),
                   "by_rule": len(df) - tally[INFERENCE_ERROR], "by_judge": 0, "unread": 0, "judge_errors": 0})
    notes = []
    if empty_text:
        notes.append(
            f"{len(empty_text)} row(s) have an answer of 4 characters or fewer and a reply not starting with A-D: "
            f"VLMEvalKit's rule (answer[4:] in reply) counts them right, and so does vlmkit: index {listed(empty_text)}"
        )
    unknown = [c for c in order if c not in CATEGORIES]
    if unknown:
        notes.append(f"categories outside exist/subject/predicate/object reported as they are: {', '.join(unknown)}")
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "method": methods, "hit": hits})
    return EvalResult(
        scorer="crpe", metrics=metrics, primary="total", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
    )  # fmt: skip
