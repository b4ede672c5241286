"""Video-TT's scorer (VLMEvalKit `VideoTT.evaluate`, utils/videott.py at e8e78f05).

The letter is Video-MME's `extract_characters_regex` (utils/videott.py holds a copy: answer prefixes removed, then the
first capital A-D); vlmkit removes each listed prefix where VLMEvalKit's list lacks two commas, as for Video-MME
(`vlmkit.scoring.kinds.video_mcq.videomme_letter`). A reply no rule reads goes to the judge when there is one, with
the options of the row's `question_prompt` (VLMEvalKit's fallback looks for them in the stored question, which has
none: there it can only say Z, a miss). Figures are percent: `overall` (right over all rows) and one per capability,
VLMEvalKit's `get_dimension_rating` `score`s. VLMEvalKit's figure (`EvalResult.vlmevalkit`): its reading of every
reply (`videomme_vlmevalkit_readings`); VLMEvalKit divides by the row count of each of its 18 capabilities, so a
table missing one of them stops it with a ZeroDivisionError (a note says so; the figure gives the present ones).
"""

from __future__ import annotations

import re
import numpy as np
import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.video_letter_rows import judge_unread, letter_hits, letter_result, reading_differences
from vlmkit.scoring.benchmarks.video_letter_rows import rule_letters
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, NOTE_VIDEOMME_PREFIXES, videomme_letter
from vlmkit.scoring.kinds.video_mcq import videomme_vlmevalkit_readings
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["CAPABILITIES", "prompt_options", "score_video_tt"]

CAPABILITIES = (
    "Character Motivation Causality", "Element Counting", "Event Counting", "Event Localization",
    "Element Localization", "Positional Relationship", "Objective Causality (Videography Phenomenon & Illusion)",
    "Plot Attribute", "Plot Attribute (Montage)", "Element Attributes (Optical Illusion)", "Element Attributes",
    "Event Duration & Speed Attribute", "Objective Causality", "Character Reaction Causality",
    "Professional Knowledge", "Displacement Attribute", "Character Emotion Attribute", "Local Event Attribute",
)  # fmt: skip
_OPTION = re.compile(r"^\s*\(?([A-Z])[.)]\s*(.*)$")


def prompt_options(question_prompt: str) -> dict[str, str]:
    """{letter: text} of the option lines (`A. text`, `(A) text`) of a Video-TT `question_prompt`."""
    out = {}
    for line in str(question_prompt).split("\n"):
        match = _OPTION.match(line)
        if match:
            out[match.group(1)] = match.group(2).strip()
    return out


def _metrics(hits: np.ndarray, capability: np.ndarray) -> dict[str, float]:
    metrics = {"overall": 100.0 * float(hits.mean())}
    for name in [c for c in CAPABILITIES if c in set(capability)] + sorted(set(capability) - set(CAPABILITIES)):
        metrics[name] = 100.0 * float(hits[capability == name].mean())
    return metrics


def score_video_tt(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """Video-TT predictions -> EvalResult (module docstring). Columns: index, prediction, answer (a letter),
    question, question_prompt (the option lines), capability."""
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "question_prompt", "capability"),
                               "Video-TT")
    letters, methods = rule_letters(records, videomme_letter)
    replies, judged = judge_unread(judge, records, letters, methods,
                                   lambda: [prompt_options(row["question_prompt"]) for row in records])
    hits = letter_hits(records, letters)
    capability = np.array([str(r["capability"]) for r in records], dtype=object)
    metrics = _metrics(hits, capability)
    theirs, their_hits, nan_rows, _ = videomme_vlmevalkit_readings(records, [m == INFERENCE_ERROR for m in methods])
    figure_notes = ["VLMEvalKit reads Video-TT replies with Video-MME's rule as it is; its fallback finds no options "
                    "in the stored question (a miss)"]
    absent = [c for c in CAPABILITIES if c not in set(capability)]
    if absent:
        figure_notes.append(f"VLMEvalKit stops with a ZeroDivisionError when a capability has no row ({len(absent)} "
                            "of its 18 have none here); the figure gives the present ones")
    figure = VlmevalkitFigure(
        metrics=_metrics(np.asarray(their_hits, dtype=bool), capability), primary="overall",
        differing=reading_differences(records, letters, theirs, hits, their_hits, methods), notes=figure_notes,
    )  # fmt: skip
    notes = [NOTE_VIDEOMME_PREFIXES.replace("Video-MME", "Video-TT (Video-MME's)"), "a failed inference is a miss"]
    return letter_result(
        "video_tt", records, letters=letters, methods=methods, replies=replies, judged=judged, hits=hits,
        theirs=theirs, their_hits=their_hits, nan_rows=nan_rows, metrics=metrics, primary="overall", notes=notes,
        scale=Scale(PERCENT), figure=figure,
    )  # fmt: skip
