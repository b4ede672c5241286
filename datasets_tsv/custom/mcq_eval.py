"""Scoring custom multiple-choice data: vlmkit.scoring.kinds.mcq (non-circular) over the rows whose answer is valid.

A row's answer is valid when it names one of the row's non-empty options (a letter; an answer given as an
option's text was mapped to its letter when the file was read). Rows whose answer fits no option (`invalid_target`)
or is missing (`no_target`) are left out of the accuracy, counted, and listed in the notes: a data error never
turns into a silent miss or hit. Their predictions are still parsed, so the per-sample record shows the letter the
model chose. The Levenshtein fallback AISBench applies always is only used under `fuzzy=True` (the runner's
--fuzzy) and is counted apart (`counts["fuzzy"]`). With a judge (--judge), the scored rows the rules cannot read go
to it with VLMEvalKit's MCQ prompt, as for a TSV benchmark (vlmkit.scoring.kinds.mcq).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.judging import Judge
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.kinds.mcq import extract_choice, score_mcq
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

from datasets_tsv.custom.fields import resolve_answer, row_options

GROUP_COLUMNS = ("split", "category", "l2-category")


def evaluate_mcq(
    df: pd.DataFrame, letters: Sequence[str], *, fuzzy: bool = False, judge: Judge | None = None
) -> EvalResult:
    require_columns(df, ("index", "prediction", "answer"), "custom MCQ")
    records = df.to_dict("records")
    valid_rows, unscored = [], []
    invalid, missing, as_text = [], [], 0
    for pos, row in enumerate(records):
        options = row_options(row, letters)
        letter, status = resolve_answer(row.get("answer"), options)
        if row.get("answer_status") == "option_text" or status == "option_text":
            as_text += 1
        if letter is not None:
            valid_rows.append((pos, letter))
            continue
        (missing if status == "missing" else invalid).append(row["index"])
        pred = row.get("prediction")
        extracted = None if is_missing(pred) else extract_choice(str(pred), dict(options), fuzzy)[0]
        method = "no_target" if status == "missing" else "invalid_target"
        unscored.append({"index": row["index"], "extracted": extracted, "method": method, "hit": None})

    keep = ["index", "prediction", *letters, *(c for c in ("question", *GROUP_COLUMNS) if c in df.columns)]
    counts: dict[str, int]
    notes: list[str] = []
    if valid_rows:
        sub = df.iloc[[pos for pos, _ in valid_rows]][keep].copy()
        sub["answer"] = [letter for _, letter in valid_rows]
        result = score_mcq(sub.reset_index(drop=True), circular=False, fuzzy=fuzzy, judge=judge)
        per_sample = result.per_sample.astype(object)
        metrics, table, counts, notes = result.metrics, result.table, dict(result.counts), list(result.notes)
    else:
        per_sample = pd.DataFrame(columns=["index", "extracted", "method", "hit"])
        metrics, table, counts = {"Overall": float("nan")}, None, {"hits": 0}
        notes.append("no row has an answer that is one of its options: nothing scored")
    if unscored:
        extra = pd.DataFrame(unscored, columns=["index", "extracted", "method", "hit"]).astype(object)
        per_sample = pd.concat([per_sample, extra], ignore_index=True) if len(per_sample) else extra
    counts.update(
        total=len(df),
        scored=len(valid_rows),
        invalid_target=len(invalid),
        no_target=len(missing),
        answer_as_text=as_text,
    )
    if invalid:
        notes.append(
            f"{len(invalid)} row(s) have an answer that fits none of their options and are not scored: "
            f"index {listed(invalid)}"
        )
    if missing:
        notes.append(f"{len(missing)} row(s) have no answer and are not scored: index {listed(missing)}")
    if as_text:
        notes.append(f"{as_text} answer(s) were given as an option's text and mapped to its letter")
    return EvalResult("custom_mcq", metrics, "Overall", per_sample, table, "acc", counts, notes, scale=Scale(FRACTION))
