"""EgoExoBench_MCQ's scorer (VLMEvalKit `EgoExoBench_MCQ.evaluate`, EgoExoBench/utils.py at e8e78f05).

The letter is Video-MME's `extract_characters_regex` (EgoExoBench/utils.py holds a copy): answer prefixes removed,
then the first capital A-D; vlmkit removes each listed prefix where VLMEvalKit's list lacks two commas, as for
Video-MME (`vlmkit.scoring.kinds.video_mcq.videomme_letter`). A reply no rule reads goes to the judge when there is
one, with the row's options (VLMEvalKit's fallback looks for options in the question's lines, where EgoExoBench has
none: a miss there). Figures are percent, VLMEvalKit's `get_dimension_rating` over `subtask_type`: right / rows per
subtask and `Overall`. VLMEvalKit's figure (`EvalResult.vlmevalkit`) is its reading of every reply
(`videomme_vlmevalkit_readings`; its fail message reads as A there), with 2 decimals as it prints them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.videomme_v2 import option_lines
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.choice_judge import judge_notes
from vlmkit.scoring.common.vlmevalkit_cells import nan_note
from vlmkit.scoring.kinds.video_mcq import (
    INFERENCE_ERROR,
    NOTE_VIDEOMME_PREFIXES,
    RULE,
    UNPARSED,
    ask_unread,
    method_counts,
    videomme_letter,
    videomme_vlmevalkit_readings,
)
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["score_egoexobench"]


def _figures(records: list[dict[str, Any]], hits: np.ndarray) -> dict[str, float]:
    kinds = np.array([str(r["subtask_type"]) for r in records], dtype=object)
    metrics = {kind: 100.0 * float(hits[kinds == kind].mean()) for kind in dict.fromkeys(kinds.tolist())}
    return {**metrics, "Overall": 100.0 * float(hits.mean())}


def score_egoexobench(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """EgoExoBench_MCQ predictions -> EvalResult (module docstring). Columns: index, prediction, answer (a letter),
    question, options ("A. ..." lines), subtask_type."""
    what = "EgoExoBench_MCQ"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "options", "subtask_type"), what)
    n = len(records)
    letters: list[str | None] = [None] * n
    methods = [INFERENCE_ERROR] * n
    replies: list[str | None] = [None] * n
    for i, row in enumerate(records):
        if not is_missing(row["prediction"]):
            letters[i] = videomme_letter(str(row["prediction"]))
            methods[i] = RULE if letters[i] is not None else UNPARSED
    ask = [i for i in range(n) if methods[i] == UNPARSED]
    if judge is not None and ask:
        options = [option_lines(str(r["options"])) for r in records]
        for i, verdict in ask_unread(judge, records, options, ask).items():
            methods[i], letters[i], replies[i] = verdict.method, verdict.value, verdict.reply
    hits = np.array([letters[i] is not None and letters[i] == str(r["answer"]).strip() for i, r in enumerate(records)])
    theirs, their_hits, nan_rows, _ = videomme_vlmevalkit_readings(records, [m == INFERENCE_ERROR for m in methods])
    figure = VlmevalkitFigure(
        metrics={k: round(v, 2) for k, v in _figures(records, np.asarray(their_hits, dtype=bool)).items()},
        primary="Overall",
        differing=[
            ReadingDifference(row["index"], ours, their, float(hit), float(their_hit))
            for row, ours, their, hit, their_hit in zip(records, letters, theirs, hits, their_hits)
            if ours != their or bool(hit) != bool(their_hit)
        ],
        notes=["VLMEvalKit prints EgoExoBench's figures with 2 decimals; so does this figure",
               "VLMEvalKit reads its fail message's A as the answer of a failed call"],
    )  # fmt: skip
    notes = [NOTE_VIDEOMME_PREFIXES.replace("Video-MME", "EgoExoBench (Video-MME's)"), "a failed inference is a miss"]
    notes += judge_notes(methods, judge is not None and bool(ask), methods.count(UNPARSED))
    counts = method_counts(methods, n)
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "extracted": pd.Series(letters, dtype=object), "hit": hits,
        "method": methods, "judge": replies, "vlmevalkit": pd.Series(theirs, dtype=object),
        "vlmevalkit_hit": their_hits,
    })  # fmt: skip
    metrics = _figures(records, hits)
    return EvalResult(
        scorer="egoexobench", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=counts, notes=notes,
        scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip
