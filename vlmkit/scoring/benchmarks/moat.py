"""MOAT: each answer checked by an LLM judge against the ground truth, as VLMEvalKit checks it
(vlmeval/dataset/moat.py at e8e78f05).

The answer sent to the judge (VLMEvalKit's extract_prediction): the `answer` of the reply read as a JSON object (the
model was asked for `{"analysis": ..., "answer": ...}`); else, for a reply fenced as ```` ```json ... ``` ````, the
`answer` of the JSON after the first 7 characters (VLMEvalKit's slice; a fence it cannot read gives the whole reply);
else nothing, which VLMEvalKit writes into the prompt as `None`. The judge prompt is `EVAL_SYSTEM_PROMPT`, a new line,
then `The answer to evaluate is <answer>\\nThe ground truth answer is <ground truth>`; one ask, temperature 0,
max_tokens 2048. Its verdict (VLMEvalKit's extract_verdict): the `verdict` of the reply read as JSON (or of the JSON in
a ```` ```json ```` fence), a number 0/1 (or its text). A reply without a readable verdict makes VLMEvalKit's whole
evaluation fail; vlmkit leaves that row out (`judge_unread`) and says so.

Figures (VLMEvalKit's `_score.json`, fractions 0..1): `overall_acc` (the mean verdict, the headline) and
`capability_acc/<capability>` (a row counts for each capability in its `capability` list).

Per row (EvalResult.per_sample): `index`, `extracted`, `verdict`, `score`, `method` (`judge`, `judge_unread`,
`judge_error`: the call failed, left out this run and asked again on the next; `inference_error`: no prediction, not
sent, 0) and `judge` (the reply).
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD, judged_result
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

SCORER = "moat"
JUDGE_MAX_TOKENS = 2048

# VLMEvalKit's EVAL_SYSTEM_PROMPT (json.dumps of its dict, default separators, ASCII)
EVAL_SYSTEM_PROMPT = json.dumps({
    "task": "Evaluate whether the answer to a question is correct.",
    "requirements": [
        "Compare an answer to a question with the ground truth answer. Determine whether it is correct.",
        "You must ignore any analysis of the problem if present. You must focus only on the final answer.",
        'You must answer in the following json format: {"verdict": "(1 for correct, 0 for incorrect)"}',
    ],
})
_FENCE_HEAD, _FENCE_TAIL = "```json", "```"


def list_cell(value: Any) -> list[str]:
    """VLMEvalKit's toliststr of a cell: a `[...]` literal as its items (as text), other text as one item; blank:
    none (VLMEvalKit fails there)."""
    if isinstance(value, list):
        return [str(x) for x in value]
    if is_blank(value):
        return []
    text = str(value)
    if len(text) > 1 and text[0] == "[" and text[-1] == "]":
        try:
            items = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return [text]
        return [str(x) for x in items] if isinstance(items, (list, tuple)) else [text]
    return [text]


def _field(text: str, key: str) -> Any:
    value = json.loads(text)
    return value[key]


def extracted_answer(reply: str) -> Any:
    """VLMEvalKit's extract_prediction (module docstring): the answer, the reply, or None."""
    try:
        return _field(reply, "answer")
    except (ValueError, TypeError, KeyError, IndexError):
        pass
    if reply.startswith(_FENCE_HEAD) and reply.endswith(_FENCE_TAIL):
        try:
            return _field(reply[7:-3], "answer")
        except (ValueError, TypeError, KeyError, IndexError):
            return reply
    return None


def judge_prompt(answer: Any, truth: str) -> str:
    """VLMEvalKit's verdict_one prompt."""
    return EVAL_SYSTEM_PROMPT + "\n" + f"The answer to evaluate is {answer}\nThe ground truth answer is {truth}"


def verdict(reply: str) -> float | None:
    """VLMEvalKit's extract_verdict, read as a number; None where it would fail."""
    for text in (reply, reply[7:-3] if reply.startswith(_FENCE_HEAD) and reply.endswith(_FENCE_TAIL) else None):
        if text is None:
            continue
        try:
            value = _field(text, "verdict")
        except (ValueError, TypeError, KeyError, IndexError):
            continue
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    return None


def score_moat(df: pd.DataFrame, judge: Judge, *, what: str = "MOAT") -> EvalResult:
    """Judge every answer (module docstring). Columns: `index`, `answer`, `capability`, `prediction` (None/NaN =
    inference error). JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "answer", "capability", "prediction"), what)
    extracted: list[Any] = []
    prompts: dict[str, str] = {}
    for key, row in zip(keys, records):
        truth = required_text(row, "answer", what)
        if failed_call(row["prediction"]):
            extracted.append(None)
            continue
        answer = extracted_answer(str(row["prediction"]))
        extracted.append(answer)
        prompts[key] = judge_prompt(answer, truth)
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: verdict(answer_part(reply)),
                            max_tokens=JUDGE_MAX_TOKENS) if prompts else {}
    verdicts: list[float | None] = []
    methods: list[str] = []
    replies: list[str | None] = []
    for key in keys:
        outcome = outcomes.get(key)
        if outcome is None:
            verdicts.append(0.0)
            methods.append(INFERENCE_ERROR)
            replies.append(None)
            continue
        replies.append(outcome.last_reply)
        verdicts.append(outcome.value if outcome.error is None else None)
        methods.append(JUDGE_ERROR if outcome.error is not None else UNREAD if outcome.value is None else JUDGE)
    capabilities = [list_cell(row.get("capability")) for row in records]
    counted = [(v, caps) for v, caps in zip(verdicts, capabilities) if v is not None]
    metrics = {"overall_acc": sum(v for v, _ in counted) / len(counted) if counted else 0.0}
    by_capability: dict[str, list[float]] = {}
    for v, caps in counted:
        for capability in caps:
            by_capability.setdefault(capability, []).append(v)
    metrics.update({f"capability_acc/{c}": sum(vs) / len(vs) for c, vs in by_capability.items()})
    notes = [f"answers checked by {judge.name} with VLMEvalKit's MOAT prompt (one ask)"]
    columns = {"extracted": pd.Series([None if a is None else str(a) for a in extracted], dtype=object),
               "verdict": pd.Series(verdicts, dtype=object), "score": pd.Series(verdicts, dtype=object)}
    return judged_result(SCORER, [row["index"] for row in records], columns=columns, methods=methods, replies=replies,
                         scored=len(counted), metrics=metrics, primary="overall_acc", notes=notes, explained={
                             UNREAD: "no verdict could be read from the judge's reply: left out (VLMEvalKit's "
                                     "evaluation stops there)",
                             JUDGE_ERROR: "the judge call failed: left out this run and asked again on the next run",
                             INFERENCE_ERROR: "no prediction: not sent to the judge, 0",
                         }, scale=Scale(FRACTION), count_unread=True)
