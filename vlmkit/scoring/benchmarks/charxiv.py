"""CharXiv (descriptive and reasoning validation sets) graded by an LLM judge as VLMEvalKit grades them
(vlmeval/dataset/charxiv.py at e8e78f05). The scorers are charxiv_descriptive and charxiv_reasoning (one module
each, as scorers are registered); this module holds what they share.

The judge prompt is the row's own `grading_query` with `{PREDICTION}` replaced by the reply: VLMEvalKit's prompts,
verbatim, since they are data. The judge is asked at temperature 0 with at most 256 tokens, up to 10 times while
its reply is not JSON; a JSON reply that is not an object holding `score` and `extracted_answer` scores 0 at once
(VLMEvalKit's `failure_result`), as does a row whose asks all fail. A row scores the judge's `score`.
Figures, fractions: the mean score per category (descriptive: by `qid`, 1-19, to Information Extraction,
Enumeration, Counting, Pattern Recognition, Compositionality; reasoning: by `inst_category`, 1-4, to Text-in-Chart,
Text-in-General, Number-in-Chart, Number-in-General) and `Overall` (all rows).

Where vlmkit differs: a failed call is not sent to the judge and scores 0 (VLMEvalKit grades its failure message);
VLMEvalKit also passes seed 42 and top_p 1 to its judge, which vlmkit's judge interface does not carry.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed, whole_number
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.common.breakdown import keyed_records, required_text
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

DESCRIPTIVE = {
    **{q: "Information Extraction" for q in range(1, 8)}, 8: "Enumeration", 9: "Enumeration", 10: "Counting",
    11: "Pattern Recognition", 12: "Counting", 13: "Enumeration", 14: "Enumeration", 15: "Enumeration",
    16: "Pattern Recognition", 17: "Compositionality", 18: "Pattern Recognition", 19: "Counting",
}  # fmt: skip
REASONING = {1: "Text-in-Chart", 2: "Text-in-General", 3: "Number-in-Chart", 4: "Number-in-General"}
MODES = {"descriptive": ("qid", DESCRIPTIVE), "reasoning": ("inst_category", REASONING)}
ASKS, MAX_TOKENS = 10, 256
FAILED = ("Failed to parse response", 0.0)


def read_grading(reply: str) -> tuple[str, float] | None:
    """(extracted answer, score) of a judge reply; FAILED for JSON that is not a grading; None to ask again."""
    try:
        content = json.loads(reply)
    except ValueError:
        return None
    if not isinstance(content, dict) or "score" not in content or "extracted_answer" not in content:
        return FAILED
    try:
        return str(content["extracted_answer"]), float(content["score"])
    except (TypeError, ValueError):
        return FAILED


def grade_charxiv(df: pd.DataFrame, judge: Judge, mode: str) -> EvalResult:
    """Grade CharXiv replies. Columns: `index`, `prediction` (None/NaN = a failed call), `grading_query`, and `qid`
    (descriptive) or `inst_category` (reasoning)."""
    column, categories = MODES[mode]
    what = f"CharXiv {mode} scoring"
    records, keys = keyed_records(df, ("index", "prediction", "grading_query", column), what)
    row_categories: list[str] = []
    prompts: dict[str, str] = {}
    errors = []
    for key, row in zip(keys, records):
        number = whole_number(row[column])
        if number not in categories:
            raise ValueError(f"{what}: index {row['index']}, field {column}: {row[column]!r} is not one of "
                             f"{min(categories)}-{max(categories)}")  # fmt: skip
        row_categories.append(categories[number])
        if failed_call(row["prediction"]):
            errors.append(row["index"])
            continue
        prompts[key] = required_text(row, "grading_query", what).replace("{PREDICTION}", str(row["prediction"]))
    outcomes = judge_rounds(judge, prompts, lambda _key, reply: read_grading(reply), temperatures=(0.0,) * ASKS,
                            max_tokens=MAX_TOKENS) if prompts else {}  # fmt: skip
    scores, extracted, methods = [], [], []
    for key in keys:
        outcome = outcomes.get(key)
        if outcome is None:
            grading, method = FAILED, "inference_error"
        elif outcome.error is not None:
            grading, method = FAILED, "judge_error"
        elif outcome.value is None:
            grading, method = FAILED, "judge_unread"
        else:
            grading, method = outcome.value, "judge"
        extracted.append(grading[0])
        scores.append(grading[1])
        methods.append(method)
    metrics = figures(row_categories, scores)
    notes = [f"graded by {judge.name} with the rows' own grading prompts (VLMEvalKit's), JSON replies, up to {ASKS} "
             "asks at temperature 0"]  # fmt: skip
    if errors:
        notes.append(f"{len(errors)} failed call(s) score 0 without a judge call: index {listed(errors)}")
    counts = {"total": len(records), "scored": len(records), "by_judge": methods.count("judge"),
              "unread": methods.count("judge_unread"), "judge_errors": methods.count("judge_error"),
              "inference_errors": methods.count("inference_error")}  # fmt: skip
    per_sample = pd.DataFrame({"index": [r["index"] for r in records], "category": row_categories,
                               "extracted_answer": extracted, "score": scores, "method": methods})  # fmt: skip
    return EvalResult(
        scorer=f"charxiv_{mode}", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([metrics]), table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(dict(metrics), "Overall", [], [
            "VLMEvalKit's figures on the same judge replies are vlmkit's (a failed call: 0 here, its failure "
            "message graded there)"]),
    )  # fmt: skip


def figures(categories: list[str], scores: list[float]) -> dict[str, Any]:
    out: dict[str, float] = {}
    for category in dict.fromkeys(categories):
        picked = [s for c, s in zip(categories, scores) if c == category]
        out[category] = sum(picked) / len(picked)
    out["Overall"] = sum(scores) / len(scores)
    return out
