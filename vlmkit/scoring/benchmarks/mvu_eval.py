"""MVU-Eval's scorer (VLMEvalKit `MVUEval.evaluate` and `check_model_output`, vlmeval/dataset/mvu_eval.py at
e8e78f05).

The letter (`check_model_output`): the reply upper-cased; the first of its patterns that finds a letter A-Z wins
(`\\BOXED{X`, `ANSWER: X`, the whole reply one letter, `X.` at its start, `THE ... ANSWER IS X`, `ANSWER IS X`,
`THE ... ORDER IS X`); when that pattern finds two different letters, or none finds any, the reply's first
character is the answer (whatever it is). A row is right when that letter is the ground truth. No judge.
`Overall` is right over all rows (VLMEvalKit's only figure, printed to 4 decimals); vlmkit adds one figure per task.

VLMEvalKit's figure (`EvalResult.vlmevalkit`): its reading of the reply its xlsx gives back, a failed call included
(its "Failed to obtain answer via API." reads as F, its first character; an empty reply reads back as NaN, the
text `NAN`, so N); vlmkit counts a failed call as a miss and reads an empty reply as no answer.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_texts
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, UNPARSED, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["mvu_letter", "score_mvu_eval"]

# check_model_output's patterns, in its order of priority
_PATTERNS = tuple(re.compile(p) for p in (
    r"\\BOXED{([A-Z])", r"ANSWER:\s*([A-Z])", r"^([A-Z])$", r"^([A-Z])\.", r"\bTHE\s+.*?ANSWER\s+IS\s+([A-Z])",
    r"\bANSWER\s+IS\s+([A-Z])", r"\bTHE\s+.*?ORDER\s+IS\s+([A-Z])",
))  # fmt: skip


def mvu_letter(prediction: str) -> str | None:
    """VLMEvalKit's `check_model_output` reading: a letter, the reply's first character where no single letter is
    found, or None for an empty reply."""
    text = str(prediction).strip().upper()
    for pattern in _PATTERNS:
        found = set(pattern.findall(text))
        if found:
            if len(found) == 1:
                return found.pop()
            break
    return text[0] if text else None


def score_mvu_eval(df: pd.DataFrame) -> EvalResult:
    """MVU-Eval predictions -> EvalResult (module docstring). Columns: index, prediction, answer (a letter), task."""
    records, _ = keyed_records(df, ("index", "prediction", "answer", "task"), "MVU-Eval")
    n = len(records)
    methods = [INFERENCE_ERROR] * n
    letters: list[str | None] = [None] * n
    for i, row in enumerate(records):
        if not is_missing(row["prediction"]):
            letters[i] = mvu_letter(str(row["prediction"]))
            methods[i] = RULE if letters[i] is not None else UNPARSED
    answers = [str(r["answer"]).strip().upper() for r in records]
    hits = np.array([letters[i] is not None and letters[i] == answers[i] for i in range(n)], dtype=bool)
    failed = [m == INFERENCE_ERROR for m in methods]
    texts = vlmevalkit_texts([VLMEVALKIT_FAIL_MARKER + "." if f else r["prediction"] for r, f in zip(records, failed)])
    theirs = [mvu_letter(t) for t in texts]
    their_hits = np.array([theirs[i] is not None and theirs[i] == answers[i] for i in range(n)], dtype=bool)
    tasks = np.array([str(r["task"]) for r in records], dtype=object)
    metrics = {"Overall": float(hits.mean())}
    for task in sorted(set(tasks)):
        metrics[task] = float(hits[tasks == task].mean())
    figure = VlmevalkitFigure(
        metrics={"Overall": float(their_hits.mean())}, primary="Overall",
        differing=[
            ReadingDifference(records[i]["index"], letters[i], theirs[i], float(hits[i]), float(their_hits[i]))
            for i in range(n) if letters[i] != theirs[i] or hits[i] != their_hits[i]
        ],
        notes=["VLMEvalKit reads a failed call's 'Failed to obtain answer via API.' by its first character (F) and an "
               "empty reply as 'NAN' (N); vlmkit counts both as misses; VLMEvalKit gives Overall only"],
    )  # fmt: skip
    notes = ["a failed inference is a miss; a reply with no single letter is read by its first character, as "
             "VLMEvalKit does"]
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "extracted": pd.Series(letters, dtype=object), "hit": hits,
        "method": methods, "vlmevalkit": pd.Series(theirs, dtype=object), "vlmevalkit_hit": their_hits,
    })  # fmt: skip
    return EvalResult(
        scorer="mvu_eval", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=method_counts(methods, n),
        notes=notes, scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip
