"""BabyVision: each answer checked against the ground truth by an LLM judge, as VLMEvalKit checks it
(vlmeval/dataset/babyvision.py at e8e78f05).

The answer sent to the judge is the content of the reply's last `\\boxed{...}` (one level of nested braces inside,
VLMEvalKit's pattern), else of its last `<|begin_of_box|>...<|end_of_box|>` (stripped), else the text `None` (as
VLMEvalKit formats a missing answer into the prompt). The judge prompt is VLMEvalKit's `LLM_JUDGE_PROMPT`, character for
character, with the question as the model saw it, the ground truth (`answer`) and that answer; one ask, temperature
0, max_tokens 16 (VLMEvalKit's judge settings). A reply containing `true` (any case, anywhere) is right; else one
containing `false`, or anything else, is wrong.

Figures (VLMEvalKit's compute_metrics, percent, rounded to 4 decimals as it rounds them): `Overall` (the headline),
`Type/<Type>` and `Subtype/<n><Type>/<Subtype>` (n: 1 Fine-grained Discrimination, 2 Visual Tracking, 3 Spatial
Perception, 4 Visual Pattern Recognition, 0 otherwise).

Per row (EvalResult.per_sample): `index`, `extracted` (the boxed answer; None when none), `hit`, `score`, `method`
(`judge`; `judge_error`: the judge call failed, left out of the figures this run and asked again on the next, where
VLMEvalKit reads its failure text as wrong; `inference_error`: no prediction, not sent to the judge, wrong; VLMEvalKit
sends the text `None` to its judge) and `judge` (the reply).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE_ERROR, hit_columns, judged_columns, judged_result
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale

SCORER = "babyvision"
JUDGE_MAX_TOKENS = 16
EXPLAINED = {  # the notes on rows not judged this run
    JUDGE_ERROR: "the judge call failed: left out of the figures this run and asked again on the next run (VLMEvalKit "
                 "counts it wrong)",
    INFERENCE_ERROR: "no prediction: not sent to the judge, wrong (VLMEvalKit asks its judge about `None`)",
}
TYPE_NUMBERS = {"Fine-grained Discrimination": "1", "Visual Tracking": "2", "Spatial Perception": "3",
                "Visual Pattern Recognition": "4"}

# VLMEvalKit's LLM_JUDGE_PROMPT
JUDGE_PROMPT = """You are a careful and strict evaluator. You will be given:

1. **Question**
2. **Ground Truth Answer** (correct answer)
3. **Model Output** (answer from another model)

**Your goal:** Determine if the Model Output **accurately matches** the Ground Truth Answer in meaning.

* Matching means: the facts, entities, and key details are equivalent, even if phrasing differs.
* Not matching means: the Model Output is wrong, incomplete, contains extra incorrect facts, or changes the meaning.

**Process (internal reasoning):**

1. Read and understand the Question, Ground Truth Answer, and Model Output.
2. Ignore small wording differences, formatting, or synonyms.
3. If all factual content matches, conclude `1`. Otherwise, conclude `0`.

**Important:**

* Think through your decision step-by-step **internally** before responding.
* In your final output, return **only** True or False, with no extra text or explanation.

**Output format:**

True

or

False

**Input:**

Question: {question},
Ground Truth Answer: {groundtruth},
Model Output: {modeloutput}
"""

_BOXED = re.compile(r"\\boxed\{((?:[^{}]|{(?:[^{}]|{.*})*})*)\}")
_BOX_TOKENS = re.compile(r"<\|begin_of_box\|>(.*?)<\|end_of_box\|>")


def boxed_answer(text: str) -> str | None:
    """VLMEvalKit's extract_boxed_answer (module docstring)."""
    found = _BOXED.findall(text)
    if found:
        return found[-1]
    tokens = _BOX_TOKENS.findall(text)
    return tokens[-1].strip() if tokens else None


def judge_prompt(question: str, truth: str, answer: str | None) -> str:
    """VLMEvalKit's build_babyvision_judge_prompt (str.format: a missing answer is `None`)."""
    return JUDGE_PROMPT.format(question=question, groundtruth=truth, modeloutput=answer)


def judged_right(reply: str) -> bool:
    """VLMEvalKit's parse_judge_response: `true` anywhere (any case) is right, else wrong."""
    return "true" in reply.strip().lower()


def score_babyvision(df: pd.DataFrame, judge: Judge, *, what: str = "BabyVision") -> EvalResult:
    """Judge every answer (module docstring). Columns: `index`, `question`, `answer`, `Type`, `Subtype`,
    `prediction` (None/NaN = inference error). JudgeStopped from the judge is let through."""
    records, keys = keyed_records(df, ("index", "question", "answer", "Type", "Subtype", "prediction"), what)
    extracted: list[str | None] = []
    prompts: dict[str, str] = {}
    for key, row in zip(keys, records):
        question = required_text(row, "question", what)
        truth = required_text(row, "answer", what)
        answer = None if failed_call(row["prediction"]) else boxed_answer(str(row["prediction"]))
        extracted.append(answer)
        if not failed_call(row["prediction"]):
            prompts[key] = judge_prompt(question, truth, answer)
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: judged_right(answer_part(reply)),
                            max_tokens=JUDGE_MAX_TOKENS) if prompts else {}
    hits, methods, replies = judged_columns(keys, outcomes, unasked=False)  # a judged hit: judged_right's bool
    types = [required_text(row, "Type", what) for row in records]
    subtypes = [required_text(row, "Subtype", what) for row in records]
    metrics = babyvision_figures(types, subtypes, hits)
    columns = {"extracted": pd.Series(extracted, dtype=object), **hit_columns(hits)}
    return judged_result(SCORER, [row["index"] for row in records], columns=columns, methods=methods,
                         replies=replies, scored=sum(h is not None for h in hits), metrics=metrics, primary="Overall",
                         notes=[f"answers checked by {judge.name} with VLMEvalKit's BabyVision prompt (the last boxed "
                                "answer; one ask)"], explained=EXPLAINED, scale=Scale(PERCENT))


def babyvision_figures(types: Sequence[str], subtypes: Sequence[str],
                       hits: Sequence[bool | None]) -> dict[str, float]:
    """VLMEvalKit's compute_metrics over the rows judged (hit not None), rounded to 4 decimals."""
    rows = [(t, s, bool(h)) for t, s, h in zip(types, subtypes, hits) if h is not None]
    metrics = {"Overall": sum(h for _, _, h in rows) / len(rows) * 100 if rows else 0.0}
    for name in sorted({t for t, _, _ in rows}):
        metrics[f"Type/{name}"] = float(np.mean([h for t, _, h in rows if t == name])) * 100
    by_subtype: dict[str, list[bool]] = {}
    for t, s, h in rows:
        by_subtype.setdefault(f"{TYPE_NUMBERS.get(t, '0')}{t}/{s}", []).append(h)
    for name in sorted(by_subtype):
        metrics[f"Subtype/{name}"] = float(np.mean(by_subtype[name])) * 100
    return {name: round(float(value), 4) for name, value in metrics.items()}

