"""PerceptionBench: each answer graded right or wrong by an LLM judge against the reference, as VLMEvalKit grades it
(vlmeval/dataset/perceptionbench.py at e8e78f05).

The judge prompt is VLMEvalKit's template (vlmkit.scoring.benchmarks.perceptionbench_prompt) with `{problem}`, then
`{reference_answer}`, then `{assistant_answer}` replaced, each text first passed through VLMEvalKit's
`_normalize_escape` (`escaped_text`) and stripped. One ask at temperature 0.3 (VLMEvalKit sets 0.3 for this judge),
max_tokens 2048. A reply is right when it has both `[reason]` and `[judge]` and the text after the last `[judge]`
contains `true` (any case); anything else is wrong. A reply that is empty, or starts with `[error]` or `Failed to
obtain answer`, is not sent to the judge and is wrong (as VLMEvalKit); so is a row without a prediction.

Figures (VLMEvalKit's compute_metrics, fractions 0..1): `overall` (the headline) and `per_category/<error_category>`
(a blank category is `?`), in the order the categories first appear.

Per row (EvalResult.per_sample): `index`, `hit`, `score`, `method` (`judge`; `judge_error`: the judge call failed,
left out of the figures this run and asked again on the next, where VLMEvalKit counts it wrong; `inference_error`:
no usable prediction, wrong) and `judge` (the reply).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.benchmarks.perceptionbench_prompt import JUDGE_TEMPLATE
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE_ERROR, hit_columns, judged_columns, judged_result
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

SCORER = "perceptionbench"
JUDGE_TEMPERATURE = 0.3
JUDGE_MAX_TOKENS = 2048

_KEPT = " 0123456789-"  # VLMEvalKit's `wl`: a backslash before one of these is rewritten as `\\ `
_BEFORE_KEPT = re.compile(rf"\\+[{_KEPT}]")
_OTHER_RUN = re.compile(rf"\\+(?![{_KEPT}])")
_NEWLINE = re.compile(r"\\+n")


def escaped_text(text: str) -> str:
    """VLMEvalKit's _normalize_escape, step for step: backslashes before a space, digit or `-` (that character
    included) become two backslashes and a space; other runs of backslashes one; a backslash run before `n` a new
    line."""
    text = _BEFORE_KEPT.sub(r"\\\\ ", text)
    text = _OTHER_RUN.sub(r"\\", text)
    return _NEWLINE.sub("\n", text)


def reference_answer(value: Any) -> Any:
    """VLMEvalKit's _reference_answer: the `answer` of a JSON object (or dict), else the value."""
    if isinstance(value, dict):
        return value.get("answer", "")
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            data = json.loads(value)
        except ValueError:
            return value
        if isinstance(data, dict):
            return data.get("answer", value)
    return value


def judge_prompt(problem: str, prediction: str, reference: Any) -> str:
    """VLMEvalKit's _build_judge_prompt."""
    ref = str(reference if reference is not None else "").strip()
    return (JUDGE_TEMPLATE.replace("{problem}", escaped_text(problem).strip())
            .replace("{reference_answer}", escaped_text(ref).strip())
            .replace("{assistant_answer}", escaped_text(prediction).strip()))


def judged_right(reply: str) -> bool:
    """VLMEvalKit's _decode_judge verdict (module docstring)."""
    text = reply.strip()
    if "[reason]" not in text or "[judge]" not in text:
        return False
    return "true" in text.split("[judge]")[-1].strip().lower()


def unusable(prediction: Any) -> bool:
    """VLMEvalKit's _is_failed on the prediction as it reads it (a missing one is empty text there)."""
    if failed_call(prediction):
        return True
    text = str(prediction).strip()
    return not text or text.startswith("[error]") or text.startswith("Failed to obtain answer")


def score_perceptionbench(df: pd.DataFrame, judge: Judge, *, what: str = "PerceptionBench") -> EvalResult:
    """Judge every answer (module docstring). Columns: `index`, `question`, `answer`, `prediction`; optional
    `error_category`. JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "question", "answer", "prediction"), what)
    prompts = {}
    for key, row in zip(keys, records):
        if not unusable(row["prediction"]):
            problem = "" if is_blank(row["question"]) else str(row["question"])
            answer = "" if is_blank(row["answer"]) else row["answer"]
            prompts[key] = judge_prompt(problem, str(row["prediction"]), reference_answer(answer))
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: judged_right(answer_part(reply)),
                            temperatures=(JUDGE_TEMPERATURE,), max_tokens=JUDGE_MAX_TOKENS) if prompts else {}
    hits, methods, replies = judged_columns(keys, outcomes, unasked=False)  # a judged hit: judged_right's bool
    categories = [str(row.get("error_category")) if not is_blank(row.get("error_category")) else "?"
                  for row in records]
    total: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for category, hit in zip(categories, hits):
        if hit is None:
            continue
        total[category] += 1
        right[category] += int(hit)
    metrics = {"overall": sum(right.values()) / max(1, sum(total.values()))}
    metrics.update({f"per_category/{c}": right[c] / total[c] for c in total})
    notes = [f"answers graded by {judge.name} with VLMEvalKit's PerceptionBench prompt (one ask, temperature 0.3)"]
    return judged_result(SCORER, [row["index"] for row in records], columns=hit_columns(hits), methods=methods,
                         replies=replies, scored=sum(h is not None for h in hits), metrics=metrics, primary="overall",
                         notes=notes, explained={
                             JUDGE_ERROR: "the judge call failed: left out of the figures this run and asked again on "
                                          "the next run (VLMEvalKit counts it wrong)",
                             INFERENCE_ERROR: "no usable prediction: not sent to the judge, wrong (as VLMEvalKit)",
                         }, scale=Scale(FRACTION))
