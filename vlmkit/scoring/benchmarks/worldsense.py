"""WorldSense's scorer (VLMEvalKit `WorldSense.evaluate`, utils/worldsense.py at e8e78f05).

The letter is Video-MME's `extract_characters_regex` (utils/worldsense.py holds a copy); vlmkit removes each listed
prefix where VLMEvalKit's list lacks two commas, as for Video-MME (`vlmkit.scoring.kinds.video_mcq.videomme_letter`).
A reply no rule reads goes to the judge when there is one, with the row's candidates (VLMEvalKit's fallback looks for
options in the stored question, which has none: there it can only say Z, a miss). Figures are fractions,
VLMEvalKit's `get_dimension_rating` over all rows: `Overall`, one per duration (`<1min`, ...) and one per value of
domain, sub_category, task_domain, task_type and audio_class (`audio_class: Speech`, ...; a row counts in each of its
audio classes). VLMEvalKit's figure (`EvalResult.vlmevalkit`) is its reading of every reply
(`videomme_vlmevalkit_readings`), printed with 3 decimals as its rating prints them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.video_letter_rows import judge_unread, letter_hits, letter_result, reading_differences
from vlmkit.scoring.benchmarks.video_letter_rows import rule_letters
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, NOTE_VIDEOMME_PREFIXES, candidate_list, candidate_options
from vlmkit.scoring.kinds.video_mcq import videomme_letter, videomme_vlmevalkit_readings
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["DURATIONS", "GROUPS", "score_worldsense"]

DURATIONS = ("<1min", "1-2min", "2-4min", "4-6min", "6-8min", ">8min")
GROUPS = ("domain", "sub_category", "task_domain", "task_type")


def _figures(records: list[dict[str, Any]], hits: np.ndarray, audio: list[list[str]]) -> dict[str, float]:
    metrics = {"Overall": float(hits.mean())}
    durations = np.array([str(r["duration"]) for r in records], dtype=object)
    for duration in [d for d in DURATIONS if d in set(durations)] + sorted(set(durations) - set(DURATIONS)):
        metrics[duration] = float(hits[durations == duration].mean())
    for group in GROUPS:
        values = np.array([str(r[group]) for r in records], dtype=object)
        for value in sorted(set(values)):
            metrics[f"{group}: {value}"] = float(hits[values == value].mean())
    for value in sorted({c for classes in audio for c in classes}):
        metrics[f"audio_class: {value}"] = float(np.mean([h for h, classes in zip(hits, audio) if value in classes]))
    return metrics


def score_worldsense(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """WorldSense predictions -> EvalResult (module docstring). Columns: index, prediction, answer (a letter),
    question, candidates (a list of `L. text`), duration, domain, sub_category, task_domain, task_type, audio_class
    (a list)."""
    what = "WorldSense"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "candidates", "duration", *GROUPS,
                                    "audio_class"), what)
    letters, methods = rule_letters(records, videomme_letter)
    options = [candidate_options(candidate_list(r["candidates"], f"{what}: row index {r['index']}, field `candidates`"))
               for r in records]
    audio = [candidate_list(r["audio_class"], f"{what}: row index {r['index']}, field `audio_class`") for r in records]
    replies, judged = judge_unread(judge, records, letters, methods, lambda: options)
    hits = letter_hits(records, letters)
    metrics = _figures(records, hits, audio)
    theirs, their_hits, nan_rows, _ = videomme_vlmevalkit_readings(records, [m == INFERENCE_ERROR for m in methods])
    figure = VlmevalkitFigure(
        metrics={k: round(v, 3) for k, v in _figures(records, np.asarray(their_hits, dtype=bool), audio).items()},
        primary="Overall",
        differing=reading_differences(records, letters, theirs, hits, their_hits, methods),
        notes=["VLMEvalKit prints WorldSense's figures with 3 decimals; so does this figure",
               "VLMEvalKit's fallback finds no options in the stored WorldSense question (a miss there)"],
    )  # fmt: skip
    notes = [NOTE_VIDEOMME_PREFIXES.replace("Video-MME", "WorldSense (Video-MME's)"), "a failed inference is a miss"]
    return letter_result(
        "worldsense", records, letters=letters, methods=methods, replies=replies, judged=judged, hits=hits,
        theirs=theirs, their_hits=their_hits, nan_rows=nan_rows, metrics=metrics, primary="Overall", notes=notes,
        scale=Scale(FRACTION), figure=figure,
    )  # fmt: skip
