"""Option-letter MCQ as VLMEvalKit scores M3oralBench and SIUO_MCQ (vlmeval/dataset/m3oralbench.py,
siuo_mcq.py `_extract_option` and `evaluate` at e8e78f05).

The letter read from a reply (`read_letter`): the last `\\boxed{X}` (a capital letter), else the last `(X)`, else
the last stand-alone letter A-G of the upper-cased reply, else none. A row is right when it equals the answer
(trimmed, upper-cased). Figures, in percent: `Overall`, then one per value of each breakdown column the dataset
names (`breakdowns`: column -> the prefix of its figures, `task_` and `foundation_` for M3oralBench, none for
SIUO's `category`). VLMEvalKit rounds each figure to 2 decimals; vlmkit does not (its figure does).
A failed call is a miss on both sides (VLMEvalKit reads its failure message, `Failed to obtain answer via API.`,
which holds no boxed, bracketed or stand-alone letter).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

_BOXED = re.compile(r"\\boxed\{\s*([A-Z])\s*\}")
_PAREN = re.compile(r"\(([A-Z])\)")
_ALONE = re.compile(r"\b([A-G])\b")


def read_letter(reply: str) -> str:
    for pattern, text in ((_BOXED, reply), (_PAREN, reply), (_ALONE, reply.upper())):
        found = pattern.findall(text)
        if found:
            return found[-1]
    return ""


def figures(df: pd.DataFrame, hits: list[bool], breakdowns: Mapping[str, str], digits: int | None = None
            ) -> dict[str, float]:  # fmt: skip
    def pct(values: list[bool]) -> float:
        value = 100 * sum(values) / len(values) if values else 0.0
        return round(value, digits) if digits is not None else value

    out = {"Overall": pct(hits)}
    for column, prefix in breakdowns.items():
        if column in df.columns:
            cells = [str(v) for v in df[column]]
            for value in sorted(set(cells)):
                out[f"{prefix}{value}"] = pct([h for c, h in zip(cells, hits) if c == value])
    return out


def score_letter_mcq(df: pd.DataFrame, breakdowns: Mapping[str, str] | None = None) -> EvalResult:
    """Score option-letter replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, and the
    breakdown columns where present."""
    require_columns(df, ("index", "prediction", "answer"), "option-letter MCQ scoring")
    if len(df) == 0:
        raise ValueError("option-letter MCQ scoring: the predictions table has no rows")
    breakdowns = dict(breakdowns or {})
    answers = ["" if is_missing(a) else str(a).strip().upper() for a in df["answer"]]
    letters, hits, errors = [], [], []
    for index, pred, answer in zip(df["index"], df["prediction"], answers):
        if failed_call(pred):
            errors.append(index)
            letters.append("")
            hits.append(False)
            continue
        letters.append(read_letter(str(pred)))
        hits.append(letters[-1] == answer)
    notes = [f"{len(errors)} failed call(s) are misses: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "unread": sum(1 for letter, i in zip(letters, df["index"]) if not letter and i not in errors),
              "by_rule": len(df) - len(errors), "by_judge": 0, "judge_errors": 0}  # fmt: skip
    theirs, differing = [], []
    for index, reply, answer, mine, letter in zip(df["index"], vlmevalkit_replies(df["prediction"].tolist()),
                                                  answers, hits, letters):  # fmt: skip
        their_letter = "" if reply is None else read_letter(reply)
        theirs.append(reply is not None and their_letter == answer)
        if theirs[-1] != mine:
            differing.append(ReadingDifference(index, letter, their_letter, float(mine), float(theirs[-1])))
    metrics = figures(df, hits, breakdowns)
    return EvalResult(
        scorer="letter_mcq", metrics=metrics, primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "letter": letters, "hit": hits}),
        table=pd.DataFrame([metrics]), table_suffix="score", counts=counts, notes=notes, scale=Scale(PERCENT),
        vlmevalkit=VlmevalkitFigure(figures(df, theirs, breakdowns, digits=2), "Overall", differing,
                                    ["VLMEvalKit rounds each figure to 2 decimals"]),
    )  # fmt: skip
