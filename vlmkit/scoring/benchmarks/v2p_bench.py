"""V2P-Bench's scorer (VLMEvalKit `V2PBench.evaluate`, utils/v2pbench/cau_acc.py at e8e78f05).

The letter: `<think>...</think>` blocks removed, then Video-MME's `extract_characters_regex` (V2P-Bench's copy lists
every answer prefix with its comma, so `vlmkit.scoring.kinds.video_mcq.videomme_letter` is its rule exactly): the
first capital A-D. A row is right when that letter is the answer. No judge (VLMEvalKit never asks one here).
Figures are fractions, as `calu_acc_main` prints them (there to 3 decimals): `Overall` (right over all rows), one per
dimension named by its `dim_mapping` (dimensions 8, 11, 15 and 16 count in Overall and in the durations but are not
printed), and `Short` (duration < 240 s), `Medium` (< 1800 s), `Long` where they have rows.

VLMEvalKit's figure (`EvalResult.vlmevalkit`): it reads every reply its xlsx gives back, a failed call included (its
"Failed to obtain answer via API." reads as A, the A of API); vlmkit counts a failed call as a miss. A reply the
xlsx gives back as NaN is the text `nan` there, no letter, as in vlmkit.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_texts
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, UNPARSED, method_counts, videomme_letter
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["DIMENSIONS", "DURATION_GROUPS", "score_v2p_bench", "v2p_letter"]

# VLMEvalKit's dim_mapping (dimension number -> name); 8, 11, 15, 16 are not printed
DIMENSIONS = {1: "OA", 2: "HA", 3: "OD", 4: "FM", 5: "CR", 6: "PU", 7: "CI", 9: "FT", 10: "RT", 12: "AS", 13: "SR",
              14: "GC"}  # fmt: skip
DIMENSION_COUNT = 16
DURATION_GROUPS = (("Short", 240.0), ("Medium", 1800.0), ("Long", float("inf")))
_THINK = re.compile(r"<think>.*?(?:</think>|<\\/think>)", re.DOTALL)


def v2p_letter(prediction: str) -> str | None:
    """V2P-Bench's reading: think blocks removed, then the first A-D after the answer prefixes; None for none."""
    return videomme_letter(_THINK.sub("", prediction))


def duration_group(seconds: float) -> str:
    """Short (< 240 s), Medium (< 1800 s) or Long, as `calu_acc_main` splits them."""
    return next(name for name, bound in DURATION_GROUPS if seconds < bound)


def _metrics(hits: np.ndarray, dims: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    metrics = {"Overall": float(hits.mean())}
    for number, name in DIMENSIONS.items():
        if (dims == number).any():
            metrics[name] = float(hits[dims == number].mean())
    for name, _ in DURATION_GROUPS:
        if (groups == name).any():
            metrics[name] = float(hits[groups == name].mean())
    return metrics


def score_v2p_bench(df: pd.DataFrame) -> EvalResult:
    """V2P-Bench predictions -> EvalResult (module docstring). Columns: index, prediction, answer (a letter),
    dimension (1..16), duration (seconds)."""
    records, _ = keyed_records(df, ("index", "prediction", "answer", "dimension", "duration"), "V2P-Bench")
    n = len(records)
    methods = [INFERENCE_ERROR] * n
    letters: list[str | None] = [None] * n
    for i, row in enumerate(records):
        if not is_missing(row["prediction"]):
            letters[i] = v2p_letter(str(row["prediction"]))
            methods[i] = RULE if letters[i] is not None else UNPARSED
    answers = [str(r["answer"]).strip() for r in records]
    hits = np.array([letters[i] is not None and letters[i] == answers[i] for i in range(n)], dtype=bool)
    dims = np.array([int(r["dimension"]) for r in records])
    groups = np.array([duration_group(float(r["duration"])) for r in records], dtype=object)
    failed = [m == INFERENCE_ERROR for m in methods]
    texts = vlmevalkit_texts([VLMEVALKIT_FAIL_MARKER + "." if f else r["prediction"] for r, f in zip(records, failed)])
    theirs: list[str | None] = [v2p_letter(t) for t in texts]
    their_hits = np.array([theirs[i] is not None and theirs[i] == answers[i] for i in range(n)], dtype=bool)
    figure = VlmevalkitFigure(
        metrics=_metrics(their_hits, dims, groups), primary="Overall",
        differing=[
            ReadingDifference(records[i]["index"], letters[i], theirs[i], float(hits[i]), float(their_hits[i]))
            for i in range(n) if letters[i] != theirs[i] or hits[i] != their_hits[i]
        ],
        notes=["VLMEvalKit reads a failed call's 'Failed to obtain answer via API.' as A (the A of API); vlmkit "
               "counts it a miss; VLMEvalKit prints each figure to 3 decimals"],
    )  # fmt: skip
    notes = ["a failed inference is a miss"]
    if methods.count(UNPARSED):
        notes.append(f"{methods.count(UNPARSED)} replies naming no A-D count as misses")
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "extracted": pd.Series(letters, dtype=object), "hit": hits,
        "method": methods, "vlmevalkit": pd.Series(theirs, dtype=object), "vlmevalkit_hit": their_hits,
    })  # fmt: skip
    metrics = _metrics(hits, dims, groups)
    return EvalResult(
        scorer="v2p_bench", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=method_counts(methods, n),
        notes=notes, scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip


def dimension_number(value: Any) -> int | None:
    """A V2P-Bench `dimension` cell as its number 1..16, or None where it is not one."""
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        return None
    return number if 1 <= number <= DIMENSION_COUNT and float(value) == number else None
