"""BIG-Bench Hard's exact match, reading replies as OpenCompass's BBH post-processing does.

Reading a reply (`read_answer`): the text after its last `answer is ` (the CoT prompts end each example with "So the
answer is X."), else the whole reply; its first line, stripped, without one trailing `.`. Where the target is an
option letter in brackets (`(A)`: the multiple-choice tasks), the first `(X)` of that text, else its first letter
standing alone, is the answer, written `(X)`. A row is right when the reading equals `answer` (the target) ignoring
case and surrounding space. A failed call or an empty reading is wrong.
Figures, fractions: `Overall` (right / rows: lm-evaluation-harness's size-weighted group figure) and `task:<name>` per
task; `task_mean`, the plain mean over tasks (OpenCompass's summary), beside it.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

_OPTION = re.compile(r"^\([A-Z]\)$")
_BRACKETED = re.compile(r"\(([A-Z])\)")
_ALONE = re.compile(r"\b([A-Z])\b")


def read_answer(reply: str, target: str) -> str:
    """The answer a reply gives (module docstring); "" when none."""
    text = reply
    cut = text.lower().rfind("answer is ")
    if cut >= 0:
        text = text[cut + len("answer is "):]
    text = text.strip().split("\n", 1)[0].strip()
    if text.endswith("."):
        text = text[:-1].strip()
    if _OPTION.match(target.strip()):
        found = _BRACKETED.search(text) or _ALONE.search(text)
        return f"({found.group(1)})" if found else ""
    return text


def score_text_bbh(df: pd.DataFrame) -> EvalResult:
    """Score BBH replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer` (the target), optional
    `task`."""
    require_columns(df, ("index", "prediction", "answer"), "BBH scoring")
    if len(df) == 0:
        raise ValueError("BBH scoring: the predictions table has no rows")
    rows: list[dict[str, Any]] = df.to_dict("records")
    read: list[str | None] = []
    hits: list[bool] = []
    errors: list[Any] = []
    for row in rows:
        if is_blank(row["answer"]) or not str(row["answer"]).strip():
            raise ValueError(f"BBH scoring: row index {row['index']}, field answer: empty")
        target = str(row["answer"]).strip()
        if failed_call(row["prediction"]):
            errors.append(row["index"])
            read.append(None), hits.append(False)
            continue
        answer = read_answer(str(row["prediction"]), target)
        read.append(answer or None)
        hits.append(bool(answer) and answer.casefold() == target.casefold())
    metrics = {"Overall": sum(hits) / len(hits)}
    if "task" in df.columns:
        tasks = [row["task"] for row in rows]
        per_task = {}
        for task in dict.fromkeys(tasks):
            picked = [hit for t, hit in zip(tasks, hits) if t == task]
            per_task[f"task:{task}"] = sum(picked) / len(picked)
        metrics["task_mean"] = sum(per_task.values()) / len(per_task)
        metrics.update(per_task)
    notes = [f"{len(errors)} failed call(s) are wrong: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "unread": sum(r is None for r in read) - len(errors), "by_rule": len(df) - len(errors),
              "by_judge": 0, "judge_errors": 0}
    return EvalResult(
        scorer="text_bbh", metrics=metrics, primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(read, dtype=object),
                                 "hit": hits}),
        table=pd.DataFrame([{"Metric": k, "Accuracy": v} for k, v in metrics.items()]),
        counts=counts, notes=notes, scale=Scale(FRACTION), also=("task_mean",) if "task_mean" in metrics else (),
    )  # fmt: skip
