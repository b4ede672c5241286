"""TempCompass_YorN's scorer (VLMEvalKit `TempCompass_YorN.evaluate`, utils/tempcompass.py `evaluate_tempcompass_YorN`
at e8e78f05).

The rule (`eval_rule_YorN`): the reply, lower-cased, starting with "yes" reads yes and starting with "no" reads no
(so "not sure" reads no, as in VLMEvalKit); right when that is the answer (`yes`/`no`). A reply the rule does not read
goes to the judge when there is one (VLMEvalKit's Y/N prompt verbatim, with the TempCompass system text, temperature
1.0, 128 tokens, asked once; "Correct"/"Incorrect" read as `llm_output_to_rating`), else is a miss. Figures, the
NaN-reply note and VLMEvalKit's figure as for TempCompass_MCQ (`score_tempcompass_rows`).
"""

from __future__ import annotations

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.tempcompass_mcq import score_tempcompass_rows
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.result import EvalResult

__all__ = ["YORN_JUDGE", "score_tempcompass_yorn", "yorn_rule"]

YORN_JUDGE = (
    "\nYou will receive a Yes/No question, the ground-truth answer and the prediction from a question answering (QA) "
    "model. Your task is to determine whether QA model prediction is correct, based on the question and ground-truth "
    "answer. If the prediction is correct, respond \"Correct\". If the prediction is incorrect, respond "
    "\"Incorrect\".\n"
)


def yorn_rule(prediction: str) -> str | None:
    """VLMEvalKit's `eval_rule_YorN`: "yes", "no" or None."""
    low = prediction.lower()
    if low.startswith("yes"):
        return "yes"
    if low.startswith("no"):
        return "no"
    return None


def score_tempcompass_yorn(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """TempCompass_YorN predictions -> EvalResult (module docstring). Columns: index, prediction, answer (yes/no),
    question, task_type, dim."""
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "task_type", "dim"),
                               "TempCompass_YorN")

    def rule(i: int, reply: str) -> int | None:
        read = yorn_rule(reply)
        return None if read is None else int(read == str(records[i]["answer"]))

    def prompt(i: int) -> str:
        row = records[i]
        return (f"{YORN_JUDGE}\nYes/No Question:\n{row['question']}\nGround-Truth Answer: {row['answer']}\n"
                f"Model Prediction: {row['prediction']}")

    return score_tempcompass_rows(records, rule, prompt, judge, "tempcompass_yorn")
