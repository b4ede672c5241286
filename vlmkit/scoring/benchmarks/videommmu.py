"""VideoMMMU's scorer (VLMEvalKit `VideoMMMU.evaluate`, `process_results`, `evaluate_mmmu` and `aggregate_results`,
vlmeval/dataset/videommmu.py at e8e78f05).

A reply is read after its last "Answer:" (the whole reply when it has none), stripped. A multiple-choice question
takes the option letter MMMU's rule reads (`videommmu_answers.choice_of`: `L.` or `L:` anywhere, else `(L)`, else
`L ` as a word, else, in a reply of more than 5 words, an option's text; the last one when several) and is right
when it is the answer. Any other question takes MMMU's open reading (`open_answers`) and is right when a candidate
holds the answer (`open_right`); a `perception` question is checked as multiple choice on that open reading, which
never matches (VLMEvalKit's code, kept). Figures are percent, per category (Perception, Comprehension, Adaptation)
and `Overall`, right over the rows scored.

VLMEvalKit leaves a row out of every figure when the text after "Answer:" is empty (an empty reply, "Answer:" alone);
vlmkit counts it as a miss. A failed inference is a miss in vlmkit; VLMEvalKit reads its fail message. VLMEvalKit's
figure (`EvalResult.vlmevalkit`) keeps both, on the replies as its xlsx gives them back (a reply read back as NaN
stops its evaluate: such rows are misses in the figure, named in its notes).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.benchmarks.videommmu_answers import (
    NO_REPLY,
    choice_of,
    choice_right,
    open_answers,
    open_right,
)
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["MULTIPLE_CHOICE", "read_reply", "score_videommmu"]

MULTIPLE_CHOICE = "multiple-choice"


def options_of(value: Any, where: str) -> list[str]:
    """A row's options: a list, or the JSON list VLMEvalKit's TSV holds."""
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    try:
        parsed = json.loads(str(value))
    except ValueError:
        raise ValueError(f"{where}, field `options`: not a JSON list: {str(value)[:80]!r}") from None
    if not isinstance(parsed, list):
        raise ValueError(f"{where}, field `options`: not a JSON list: {str(value)[:80]!r}")
    return [str(v) for v in parsed]


def read_reply(reply: str, question_type: str, options: list[str]) -> str | list:
    """VLMEvalKit's `process_results` reading of one reply (module docstring)."""
    text = reply.rpartition("Answer:")[-1].strip()
    if question_type == MULTIPLE_CHOICE:
        return choice_of(text, options)
    return open_answers(text)


def _right(gold: str, question_type: str, reading: str | list) -> bool:
    if question_type in (MULTIPLE_CHOICE, "perception"):
        return choice_right(gold, reading)
    return isinstance(reading, list) and open_right(gold, reading)


def _figures(hits: list[bool], categories: list[str], counted: list[bool]) -> dict[str, float]:
    metrics: dict[str, float] = {}
    kept = [(h, c) for h, c, k in zip(hits, categories, counted) if k]
    for category in dict.fromkeys(c for _, c in kept):
        mine = [h for h, c in kept if c == category]
        metrics[category] = 100.0 * float(np.mean(mine))
    metrics["Overall"] = 100.0 * float(np.mean([h for h, _ in kept])) if kept else 0.0
    return metrics


def _shown(reading: str | list) -> str:
    return reading if isinstance(reading, str) else json.dumps(reading)


def score_videommmu(df: pd.DataFrame) -> EvalResult:
    """VideoMMMU predictions -> EvalResult (module docstring). Columns: index, prediction, answer, options,
    question_type, category."""
    what = "VideoMMMU"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "options", "question_type", "category"), what)
    options = [options_of(r["options"], f"{what}: row index {r['index']}") for r in records]
    kinds = [str(r["question_type"]) for r in records]
    golds = [str(r["answer"]).strip() for r in records]
    categories = [str(r["category"]) for r in records]
    methods = [INFERENCE_ERROR if is_missing(r["prediction"]) else RULE for r in records]
    readings: list[str | list | None] = [
        None if m == INFERENCE_ERROR else read_reply(str(r["prediction"]), k, o)
        for r, m, k, o in zip(records, methods, kinds, options)
    ]
    hits = [reading is not None and reading != NO_REPLY and _right(g, k, reading)
            for reading, g, k in zip(readings, golds, kinds)]
    metrics = _figures(hits, categories, [True] * len(records))
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    theirs: list[str | list | None] = []
    nan_rows = []
    for row, cell, kind, opts in zip(records, back, kinds, options):
        if is_nan_cell(cell):
            nan_rows.append(row["index"])
            theirs.append(None)
        else:
            theirs.append(read_reply(str(cell), kind, opts))
    their_hits = [t is not None and t != NO_REPLY and _right(g, k, t) for t, g, k in zip(theirs, golds, kinds)]
    counted = [t != NO_REPLY for t in theirs]
    notes = ["VLMEvalKit leaves a row whose reply is empty after 'Answer:' out of every figure"]
    if nan_rows:
        shown = ", ".join(str(x) for x in nan_rows[:5]) + (" ..." if len(nan_rows) > 5 else "")
        notes.append(f"VLMEvalKit's evaluate stops on a reply its xlsx gives back as NaN (rows {shown}); they are "
                     "misses in this figure")
    figure = VlmevalkitFigure(
        metrics=_figures(their_hits, categories, counted), primary="Overall",
        differing=[ReadingDifference(r["index"], None if o is None else _shown(o), None if t is None else _shown(t),
                                     float(h), float(th))
                   for r, o, t, h, th in zip(records, readings, theirs, hits, their_hits) if o != t or h != th],
        notes=notes,
    )  # fmt: skip
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "extracted": [None if x is None else _shown(x) for x in readings],
        "hit": hits, "method": methods, "vlmevalkit_hit": their_hits,
    })  # fmt: skip
    return EvalResult(
        scorer="videommmu", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc",
        counts=method_counts(methods, len(records)),
        notes=["an empty reply is a miss (VLMEvalKit leaves it out)", "a failed inference is a miss"],
        scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip
