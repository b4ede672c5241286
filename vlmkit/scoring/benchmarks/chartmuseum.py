"""ChartMuseum graded by an LLM judge as VLMEvalKit grades it (vlmeval/dataset/chartmuseum.py at e8e78f05).

The reply's answer is the text between its first `<answer>` and the next `</answer>` (or the end of the reply),
trimmed; a reply without `<answer>` gives an empty answer, which is still judged. The judge is asked once per row
(VLMEvalKit's `COMPARE_ANSWER_PROMPT` with [QUESTION], [ANSWER1] (the answer cell) and [ANSWER2] (the reply's answer)
filled in that order, no system turn, temperature 0); a row is right when the judge's reply holds `yes` (any case).
Figures, in percent: one per `category`, then `Overall`.

Where vlmkit differs: a failed call is a miss and is not sent to the judge (VLMEvalKit judges the empty answer of its
failure message); a failed judge call is a judge error, the row a miss (VLMEvalKit reads its failure message: no).
VLMEvalKit's figure reads the replies its xlsx round trip leaves (its answers are the same unless a reply reads as a
number, which holds no `<answer>`).
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

COMPARE_ANSWER_PROMPT = """You are provided with a question and two answers. Please determine if these answers are equivalent. Follow these guidelines:

1. Numerical Comparison:
   - For decimal numbers, consider them as equivalent if their relative difference is sufficiently small.
   For example, the following pairs are equivalent:
    - 32.35 and 32.34
    - 90.05 and 90.00
    - 83.3% and 83.2%
    - 31 and 31%
   The following pairs are not equivalent:
   - 32.35 and 35.25
   - 90.05 and 91.05
   - 83.3% and 45.2%

   Note that if the question asks for years or dates, please do the exact match with no error tolerance.

2. Unit Handling:
   - If only one answer includes units (e.g. '$', '%', '-', etc.), ignore the units and compare only the numerical values
   For example, the following pairs are equivalent:
   - 305 million and 305 million square meters
   - 0.75 and 0.75%
   - 0.6 and 60%
   - $80 and 80
   The following pairs are not equivalent:
   - 305 million and 200 million square meters
   - 0.75 and 0.90%

3. Text Comparison:
   - Ignore differences in capitalization
   - Treat mathematical expressions in different but equivalent forms as the same (e.g., "2+3" = "5")

Question: [QUESTION]
Answer 1: [ANSWER1]
Answer 2: [ANSWER2]

Please respond with:
- "Yes" if the answers are equivalent
- "No" if the answers are different"""  # noqa: E501
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def extract_answer(reply: str) -> str:
    found = _ANSWER.search(reply + "</answer>")
    return found.group(1).strip() if found else ""


def judge_prompt(question: str, answer: str, reply_answer: str) -> str:
    return (COMPARE_ANSWER_PROMPT.replace("[QUESTION]", question).replace("[ANSWER1]", answer)
            .replace("[ANSWER2]", reply_answer))  # fmt: skip


def figures(categories: list[str], hits: list[bool]) -> dict[str, float]:
    out: dict[str, float] = {}
    for category in dict.fromkeys(categories):
        picked = [h for c, h in zip(categories, hits) if c == category]
        out[category] = 100 * sum(picked) / len(picked)
    out["Overall"] = 100 * sum(hits) / len(hits)
    return out


def score_chartmuseum(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Grade ChartMuseum replies. Columns: `index`, `prediction` (None/NaN = a failed call), `question`, `answer`,
    `category`."""
    require_columns(df, ("index", "prediction", "question", "answer", "category"), "ChartMuseum scoring")
    if len(df) == 0:
        raise ValueError("ChartMuseum scoring: the predictions table has no rows")
    records: list[dict[str, Any]] = df.to_dict("records")
    answers = ["" if failed_call(r["prediction"]) else extract_answer(str(r["prediction"])) for r in records]
    prompts = {str(pos): judge_prompt(str(r["question"]), str(r["answer"]), answer)
               for pos, (r, answer) in enumerate(zip(records, answers)) if not failed_call(r["prediction"])}
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: reply) if prompts else {}
    hits, methods, verdicts = [], [], []
    for pos in range(len(records)):
        outcome = outcomes.get(str(pos))
        if outcome is None:
            hits.append(False), methods.append("inference_error"), verdicts.append(None)
        elif outcome.error is not None:
            hits.append(False), methods.append("judge_error"), verdicts.append(None)
        else:
            hits.append("yes" in (outcome.value or "").lower())
            methods.append("judge"), verdicts.append(outcome.value)
    categories = [str(r["category"]) for r in records]
    metrics = figures(categories, hits)
    errors = [r["index"] for r, m in zip(records, methods) if m == "inference_error"]
    notes = [f"{len(errors)} failed call(s) are misses (not sent to the judge): index {listed(errors)}"] \
        if errors else []  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "by_rule": 0, "by_judge": methods.count("judge"), "unread": 0,
              "judge_errors": methods.count("judge_error")}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "extracted": answers, "judge": verdicts,
                               "method": methods, "hit": hits})  # fmt: skip
    return EvalResult(
        scorer="chartmuseum", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame([metrics]), table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT),
        vlmevalkit=VlmevalkitFigure(dict(metrics), "Overall"),
    )  # fmt: skip
