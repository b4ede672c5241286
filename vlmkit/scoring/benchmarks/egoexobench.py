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

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.video_letter_rows import judge_unread, letter_hits, letter_result, reading_differences
from vlmkit.scoring.benchmarks.video_letter_rows import rule_letters
from vlmkit.scoring.benchmarks.videomme_v2 import option_lines
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, NOTE_VIDEOMME_PREFIXES, videomme_letter
from vlmkit.scoring.kinds.video_mcq import videomme_vlmevalkit_readings
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

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
    letters, methods = rule_letters(records, videomme_letter)
    replies, judged = judge_unread(judge, records, letters, methods,
                                   lambda: [option_lines(str(r["options"])) for r in records])
    hits = letter_hits(records, letters)
    theirs, their_hits, nan_rows, _ = videomme_vlmevalkit_readings(records, [m == INFERENCE_ERROR for m in methods])
    figure = VlmevalkitFigure(
        metrics={k: round(v, 2) for k, v in _figures(records, np.asarray(their_hits, dtype=bool)).items()},
        primary="Overall",
        differing=reading_differences(records, letters, theirs, hits, their_hits),
        notes=["VLMEvalKit prints EgoExoBench's figures with 2 decimals; so does this figure",
               "VLMEvalKit reads its fail message's A as the answer of a failed call"],
    )  # fmt: skip
    notes = [NOTE_VIDEOMME_PREFIXES.replace("Video-MME", "EgoExoBench (Video-MME's)"), "a failed inference is a miss"]
    return letter_result(
        "egoexobench", records, letters=letters, methods=methods, replies=replies, judged=judged, hits=hits,
        theirs=theirs, their_hits=their_hits, nan_rows=nan_rows, metrics=_figures(records, hits), primary="Overall",
        notes=notes, scale=Scale(PERCENT), figure=figure,
    )  # fmt: skip
