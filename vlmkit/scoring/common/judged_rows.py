"""The per-row columns of a scorer that asks a judge about every usable reply (BabyVision, PerceptionBench, MOAT,
MMRarebench, MRareBench's diagnosis, ...): what the judge's rounds gave each row, how the row was decided, the notes
that list the rows by how they were decided, and the EvalResult they make.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging.base import JudgeOutcome
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import Scale

__all__ = ["INFERENCE_ERROR", "JUDGE", "JUDGE_ERROR", "UNREAD", "hit_columns", "judged_columns", "judged_counts",
           "judged_result", "method_notes"]

JUDGE, UNREAD, JUDGE_ERROR, INFERENCE_ERROR = "judge", "judge_unread", "judge_error", "inference_error"
T = TypeVar("T")


def judged_columns(keys: Sequence[str], outcomes: Mapping[str, JudgeOutcome[Any]], unasked: T
                   ) -> tuple[list[Any], list[str], list[str | None]]:
    """For each row key, in order: the judge's value, the method and the judge's last reply. A row the judge was not
    asked (its call failed: no outcome) gets `unasked`, INFERENCE_ERROR and no reply; a row whose judge call failed
    None, JUDGE_ERROR and no reply (it is asked again on the next run); any other its outcome's value and JUDGE."""
    values: list[Any] = []
    methods: list[str] = []
    replies: list[str | None] = []
    for key in keys:
        outcome = outcomes.get(key)
        if outcome is None:
            values.append(unasked)
            methods.append(INFERENCE_ERROR)
            replies.append(None)
        elif outcome.error is not None:
            values.append(None)
            methods.append(JUDGE_ERROR)
            replies.append(None)
        else:
            values.append(outcome.value)
            methods.append(JUDGE)
            replies.append(outcome.last_reply)
    return values, methods, replies


def method_notes(per_sample: pd.DataFrame, explained: Mapping[str, str]) -> list[str]:
    """One note per method of `explained` ({method: what it means}) that some row of `per_sample` (its `index` and
    `method` columns) has: `<n> row(s) <method>: <meaning>; index <the rows>`."""
    notes = []
    for method, text in explained.items():
        rows = per_sample.loc[per_sample["method"] == method, "index"].tolist()
        if rows:
            notes.append(f"{len(rows)} row(s) {method}: {text}; index {listed(rows)}")
    return notes


def hit_columns(hits: Sequence[bool | None]) -> dict[str, pd.Series]:
    """The per-sample `hit` and `score` (1.0/0.0) columns of judged right/wrong rows (None: not judged this run)."""
    return {"hit": pd.Series(hits, dtype=object),
            "score": pd.Series([None if h is None else float(h) for h in hits], dtype=object)}


def judged_result(scorer: str, indices: Sequence[Any], *, columns: dict[str, Any], methods: list[str],
                  replies: Sequence[str | None], scored: int, metrics: dict[str, float], primary: str, notes: list[str],
                  explained: Mapping[str, str], scale: Scale, count_unread: bool = False) -> EvalResult:
    """The EvalResult of a judge-scored benchmark: per sample the index, `columns` in order, the method and the
    judge's reply; the counts by method (`count_unread`: with the rows whose verdict could not be read); `notes`
    then `method_notes(per_sample, explained)`; one table row a metric."""
    per_sample = pd.DataFrame({"index": list(indices), **columns, "method": methods,
                               "judge": pd.Series(replies, dtype=object)})
    notes = [*notes, *method_notes(per_sample, explained)]
    return EvalResult(
        scorer=scorer, metrics=metrics, primary=primary, per_sample=per_sample,
        table=pd.DataFrame({"metric": list(metrics), "value": list(metrics.values())}), table_suffix="score",
        counts=judged_counts(methods, scored, count_unread=count_unread), notes=notes, scale=scale,
    )  # fmt: skip


def judged_counts(methods: list[str], scored: int, *, count_unread: bool = False) -> dict[str, int]:
    """total, scored, by_judge, (`count_unread`: unread,) judge_errors, inference_errors."""
    return {"total": len(methods), "scored": scored, "by_judge": methods.count(JUDGE),
            **({"unread": methods.count(UNREAD)} if count_unread else {}),
            "judge_errors": methods.count(JUDGE_ERROR), "inference_errors": methods.count(INFERENCE_ERROR)}
