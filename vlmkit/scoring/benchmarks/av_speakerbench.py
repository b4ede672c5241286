"""AV-SpeakerBench's scorer (VLMEvalKit `AVSpeakerBench.evaluate` and `_parse_multi_choice_response`,
vlmeval/dataset/av_speakerbench.py at e8e78f05).

The letter: answer prefixes removed ("The best answer is", ..., "Based", "Correct answer", "☞", "<|im_end|>", the list
as VLMEvalKit has it, in its order), a `<think>...</think>` block removed, the text of an `<answer>...</answer>` block
kept if there is one, punctuation turned to spaces; then the first whitespace-separated token that is A, B, C or D (in
either case). A row is right when that letter is the answer. No judge. Figures are percent: `Overall` (right / all
rows) and one per `task_id` (`task: <id>`), VLMEvalKit's rating.

Where no token is a letter, VLMEvalKit takes A ("to avoid empty return"), so a reply that names nothing, and a failed
call (its fail message holds no letter token), score as A; vlmkit reads no answer there (a miss). VLMEvalKit's figure
(`EvalResult.vlmevalkit`) keeps its fallback; a reply its xlsx gives back as NaN scores 0 there, as in vlmkit.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from vlmkit.scoring.benchmarks.video_letter_rows import reading_differences, rule_letters
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["CHOICES", "speaker_letter", "score_av_speakerbench"]

CHOICES = ("A", "B", "C", "D")
PREFIXES = (
    "The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
    "The correct option is", "Best answer:", "Best option:", "Answer:", "Option:", "The correct answer",
    "The correct option", "Based", "Correct answer", "\u261e", "<|im_end|>",
)  # fmt: skip
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_PUNCTUATION = re.compile(r"[.,:!\"'`;\\/?`~@#\$%\^&\*\(\)\[\]\{\}\\|<>\n]")


def speaker_letter(reply: str) -> str | None:
    """The letter VLMEvalKit's rule reads (module docstring), or None where it would fall back to A."""
    text = reply or ""
    for prefix in PREFIXES:
        text = text.replace(prefix, "")
    think = _THINK.search(text)
    if think:
        text = text.replace(think.group(0), "")
    answer = _ANSWER.search(text)
    if answer:
        text = answer.group(1)
    for token in _PUNCTUATION.sub(" ", text.strip()).split():
        if token in CHOICES or token.upper() in CHOICES:
            return token.upper()
    return None


def _figures(hits: np.ndarray, tasks: list[str]) -> dict[str, float]:
    task_of = np.array(tasks, dtype=object)
    metrics = {"Overall": 100.0 * float(hits.mean())}
    for task in sorted(set(tasks)):
        metrics[f"task: {task}"] = 100.0 * float(hits[task_of == task].mean())
    return metrics


def score_av_speakerbench(df: pd.DataFrame) -> EvalResult:
    """AV-SpeakerBench predictions -> EvalResult (module docstring). Columns: index, prediction, answer, task_id."""
    what = "AV-SpeakerBench"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "task_id"), what)
    answers = [str(r["answer"]).strip().upper() for r in records]
    tasks = [str(r["task_id"]) for r in records]
    letters, methods = rule_letters(records, speaker_letter)
    hits = np.array([letter is not None and letter == answer for letter, answer in zip(letters, answers)])
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    theirs = [None if is_nan_cell(cell) else (speaker_letter(str(cell)) or CHOICES[0]) for cell in back]
    their_hits = np.array([t is not None and t == a for t, a in zip(theirs, answers)])
    figure = VlmevalkitFigure(
        metrics=_figures(their_hits, tasks), primary="Overall",
        differing=reading_differences(records, letters, theirs, hits, their_hits),
        notes=["VLMEvalKit reads A where no token is a letter (a reply naming nothing, a failed call)"],
    )  # fmt: skip
    notes = ["a reply with no letter token is a miss (VLMEvalKit reads it as A)", "a failed inference is a miss"]
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "extracted": pd.Series(letters, dtype=object), "hit": hits,
        "method": methods, "vlmevalkit": pd.Series(theirs, dtype=object), "vlmevalkit_hit": their_hits,
    })  # fmt: skip
    metrics = _figures(hits, tasks)
    return EvalResult(
        scorer="av_speakerbench", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc",
        counts=method_counts(methods, len(records)), notes=notes, scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip
