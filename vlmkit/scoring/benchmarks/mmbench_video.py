"""MMBench-Video's scorer: each open answer rated 0-3 by an LLM judge, as VLMEvalKit rates it
(vlmeval/dataset/mmbench_video.py `MMBenchVideo.evaluate` and utils/mmbench_video.py at e8e78f05).

Judge prompt: VLMEvalKit's system text (`SYSTEM_PROMPT`, verbatim: it starts and ends with a newline) and the user
text `Question: <q>\\nGroundtruth answer: <a>\\nCandidate answer: <prediction>\\nYour response: `, asked once per row
at temperature 0 (max_tokens 2048, VLMEvalKit's judge default).

Reading: vlmkit reads the judge's reply (after any think block, stripped) when it is a whole number 0..3; anything
else is unread (-1). VLMEvalKit keeps a reply when `eval(reply)` is an int and takes `int(reply)`: the same for
`0`..`3`, but a `5` or `-2` is kept as that number (and a `True` stops its scorer); those rows are listed in its
figure. A row without a prediction is not asked (-1 on both sides); a failed judge call is -1 this run
(`judge_error`) and asked again on the next run (VLMEvalKit drops a failed reply from its cache and retries too).

Figures (VLMEvalKit's `get_dimension_rating`; `dimensions` holds a list of its L3 dimensions): for each coarse
dimension (CP, FP-S, FP-C, HL, LR, AR, RR, CSR, TR, Perception, Reasoning, Overall) the mean rating with -1 counted
as 0 (`all`: metrics `<dim>`) and the mean over rated rows only (`valid`: `valid/<dim>`); the same per L3 dimension
(`fine/<dim>`, `fine_valid/<dim>`). Headline: `Overall` (all). Points out of 3. VLMEvalKit prints them with 2
decimals; its figure here is rounded so.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, JudgeOutcome, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_counts, method_notes
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, reads_as_nan
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["COARSE", "FINE", "SYSTEM_PROMPT", "judge_prompt", "read_rating", "score_mmbench_video"]

SCORER = "mmbench_video"
SYSTEM_PROMPT = (
    "\nAs an AI assistant, your task is to evaluate a candidate answer in comparison to a given correct answer.\n"
    "The question itself, the correct 'groundtruth' answer, and the candidate answer will be provided to you.\n"
    "Your assessment should range from 0 to 3, based solely on the semantic similarity between the groundtruth and "
    "the candidate answer, disregarding any grammatical differences.\n"
    "A rating of 0 suggests no similarity, implying the candidate answer is entirely incorrect.\n"
    "A rating of 1 suggests low similarity, meaning the candidate answer is largely incorrect.\n"
    "A rating of 2 suggests high similarity, meaning the candidate answer is largely correct.\n"
    "Lastly, a rating of 3 indicates complete similarity, which means the candidate answer is entirely correct.\n"
    "Your response should be a single integer from 0, 1, 2, or 3.\n"
)
JUDGE_MAX_TOKENS = 2048
# VLMEvalKit's MMV_DIMENSIONS: coarse dimension -> its L3 dimensions
_LEVELS: dict[str, tuple[str, ...]] = {
    "CP": ("Video Topic", "Video Emotion", "Video Scene", "Video Style"),
    "FP-S": ("OCR", "Object Recognition", "Attribute Recognition", "Event Recognition", "Human Motion", "Counting"),
    "FP-C": ("Spatial Relationship", "Human-object Interaction", "Human Interaction"),
    "HL": ("Hallucination",),
    "LR": ("Structuralized Image-Text Understanding", "Mathematical Calculation"),
    "AR": ("Physical Property", "Function Reasoning", "Identity Reasoning"),
    "RR": ("Natural Relation", "Physical Relation", "Social Relation"),
    "CSR": ("Common Sense Reasoning",),
    "TR": ("Counterfactual Reasoning", "Causal Reasoning", "Future Prediction"),
}
FINE: tuple[str, ...] = tuple(d for dims in _LEVELS.values() for d in dims)
_PERCEPTION = ("CP", "FP-C", "FP-S", "HL")
_REASONING = ("LR", "AR", "RR", "CSR", "TR")
COARSE: dict[str, tuple[str, ...]] = {
    **_LEVELS,
    "Perception": tuple(d for k in _PERCEPTION for d in _LEVELS[k]),
    "Reasoning": tuple(d for k in _REASONING for d in _LEVELS[k]),
    "Overall": tuple(d for k in (*_PERCEPTION, *_REASONING) for d in _LEVELS[k]),
}
_INT = re.compile(r"[+-]?(0|[1-9][0-9]*)")


def judge_prompt(question: str, answer: str, prediction: str) -> str:
    """VLMEvalKit's user text for one row (utils/mmbench_video.py `build_prompt`)."""
    return "Question: {}\nGroundtruth answer: {}\nCandidate answer: {}\nYour response: ".format(
        question, answer, prediction)


def read_rating(reply: str) -> int | None:
    """vlmkit's reading: the reply (after any think block, stripped) as a whole number 0..3, else None."""
    text = answer_part(reply).strip()
    return int(text) if text in ("0", "1", "2", "3") else None


def vlmevalkit_rating(reply: str) -> int:
    """VLMEvalKit's reading: `int(reply)` when `eval(reply)` is an int (a whole number written without leading
    zeros; `True` is left out: its int() stops VLMEvalKit's scorer), else -1."""
    text = reply.strip()
    return int(text) if _INT.fullmatch(text) else -1


def dimensions_of(cell: Any, where: str) -> list[str]:
    """A row's `dimensions` cell (a Python list literal of L3 dimensions); a one-line ValueError otherwise."""
    try:
        value = ast.literal_eval(str(cell))
    except (ValueError, SyntaxError):
        raise ValueError(f"{where}: {cell!r} is not a list of dimensions") from None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where}: {cell!r} is not a list of dimensions")
    unknown = [str(d) for d in value if str(d) not in FINE]
    if unknown:
        raise ValueError(f"{where}: {unknown[0]!r} is not one of MMBench-Video's dimensions")
    return [str(d) for d in value]


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def dimension_rating(dims: Sequence[Sequence[str]], scores: Sequence[float]) -> dict[str, float]:
    """VLMEvalKit's get_dimension_rating as flat metrics: `<coarse>` (all: -1 as 0), `valid/<coarse>` (rated rows
    only), `fine/<L3>`, `fine_valid/<L3>`; NaN where a dimension has no row."""
    coarse: dict[str, list[float]] = {k: [] for k in COARSE}
    fine: dict[str, list[float]] = {k: [] for k in FINE}
    for cats, score in zip(dims, scores):
        for c in cats:
            fine[c].append(score)
        for k, members in COARSE.items():
            if any(c in members for c in cats):
                coarse[k].append(score)
    out: dict[str, float] = {}
    for prefix, table in (("", coarse), ("fine/", fine)):
        for k, values in table.items():
            out[f"{prefix}{k}"] = _mean([max(v, 0) for v in values])
    for prefix, table in (("valid/", coarse), ("fine_valid/", fine)):
        for k, values in table.items():
            out[f"{prefix}{k}"] = _mean([v for v in values if v >= 0])
    return out


def score_mmbench_video(df: pd.DataFrame, judge: Judge, *, what: str = "MMBench-Video") -> EvalResult:
    """Rate every prediction with the judge (module docstring). Columns: index, question, answer, dimensions,
    prediction (None/NaN: inference error). JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "question", "answer", "dimensions", "prediction"), what)
    dims = [dimensions_of(row["dimensions"], f"{what}: row index {row['index']}, field `dimensions`")
            for row in records]
    prompts: dict[str, str] = {}
    for key, row in zip(keys, records):
        answer = required_text(row, "answer", what)
        question = required_text(row, "question", what)
        if not failed_call(row["prediction"]):
            prompts[key] = judge_prompt(question, answer, str(row["prediction"]))
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: read_rating(reply), max_tokens=JUDGE_MAX_TOKENS,
                            system=SYSTEM_PROMPT) if prompts else {}
    scores, methods, replies = [], [], []
    for key in keys:
        score, method, reply = _rated(outcomes.get(key))
        scores.append(score)
        methods.append(method)
        replies.append(reply)
    metrics = dimension_rating(dims, scores)
    figure = _figure(records, keys, dims, outcomes, scores)
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "score": scores, "method": methods,
                               "judge": pd.Series(replies, dtype=object)})
    table = pd.DataFrame([{"dimension": k, "all": metrics[k], "valid": metrics[f"valid/{k}"]} for k in COARSE]
                         + [{"dimension": k, "all": metrics[f"fine/{k}"], "valid": metrics[f"fine_valid/{k}"]}
                            for k in FINE])
    counts = judged_counts(methods, len(records), count_unread=True)
    notes = [f"rated 0-3 by {judge.name} with VLMEvalKit's MMBench-Video prompt; `Overall` counts an unrated row "
             "as 0 (VLMEvalKit's coarse_all), `valid/Overall` leaves it out (coarse_valid)"]
    notes += method_notes(per_sample, {
        UNREAD: "the judge's reply is not a whole number 0..3: -1 (0 in the `all` figures, left out of `valid`)",
        JUDGE_ERROR: "the judge call failed: -1 this run, asked again on the next run",
        INFERENCE_ERROR: "no prediction: -1 without asking the judge, as in VLMEvalKit",
    })
    return EvalResult(scorer=SCORER, metrics=metrics, primary="Overall", per_sample=per_sample, table=table,
                      table_suffix="score", counts=counts, notes=notes, scale=Scale(POINTS, out_of=3.0),
                      vlmevalkit=figure)


def _rated(outcome: JudgeOutcome[int] | None) -> tuple[float, str, str | None]:
    if outcome is None:
        return -1.0, INFERENCE_ERROR, None
    if outcome.error is not None:
        return -1.0, JUDGE_ERROR, outcome.last_reply
    if outcome.value is None:
        return -1.0, UNREAD, outcome.last_reply
    return float(outcome.value), JUDGE, outcome.last_reply


def _figure(records: list[dict[str, Any]], keys: list[str], dims: list[list[str]],
            outcomes: dict[str, JudgeOutcome[int]], scores: list[float]) -> VlmevalkitFigure:
    """VLMEvalKit's ratings of the same judge replies: its int reading; a reply its xlsx gives back as NaN is not
    sent to its judge (-1)."""
    nan = reads_as_nan([r["prediction"] for r in records])
    theirs: list[float] = []
    differing: list[ReadingDifference] = []
    nan_rows = []
    for row, key, mine, is_nan in zip(records, keys, scores, nan):
        outcome = outcomes.get(key)
        if is_nan:
            nan_rows.append(row["index"])
            their = -1.0
        elif outcome is None or outcome.error is not None or not outcome.replies:
            their = -1.0
        else:
            their = float(vlmevalkit_rating(outcome.replies[-1]))
        theirs.append(their)
        if their != mine:
            differing.append(ReadingDifference(row["index"], mine, their, mine, their))
    metrics = {k: round(v, 2) for k, v in dimension_rating(dims, theirs).items()}
    notes = ["VLMEvalKit prints MMBench-Video's ratings with 2 decimals; so does this figure"]
    if nan_rows:
        notes.append(f"{len(nan_rows)} reply(ies) read back from VLMEvalKit's xlsx as NaN are not sent to its judge "
                     f"(-1 there); index {listed(nan_rows)}")
    return VlmevalkitFigure(metrics=metrics, primary="Overall", differing=differing, notes=notes)
