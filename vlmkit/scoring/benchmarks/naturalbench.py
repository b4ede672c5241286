"""NaturalBench as VLMEvalKit scores it (vlmeval/dataset/image_mcq.py NaturalBenchDataset.evaluate with
utils/naturalbench.extract_answer and get_scores).

Rows sorted by `index` come in groups of four: question 0 on image 0, q0 on image 1, q1 on image 0, q1 on image 1.
The benchmark is built so that the right answers are always Yes/A, No/B, No/B, Yes/A in that order; VLMEvalKit
scores against that pattern and never reads the `answer` column (vlmkit does the same, and counts and notes the
rows whose `answer` says otherwise: `answer_disagrees`).

Reading (`read_binary`): for a row of `type` yes_no, the first whole word `yes` and `no` (any case); for
multiple_choice, `A` and `B` (any case, so the article `a` counts as A, as in VLMEvalKit); the one found first
wins (1 for yes/A, 0 for no/B); neither: -1 (a miss). Figures, as fractions: `question_score` (per question, right
on both images), `image_score` (per image, right on both questions), `binary_score` (per row), `group_score` (the
whole group of four right; the headline).

Where vlmkit differs: a failed call is read as -1 (as VLMEvalKit reads the text `None`) and counted apart
(`inference_errors`). VLMEvalKit requires exactly 1900 groups; vlmkit scores any whole number of groups (a subset)
and refuses a row count that is not a multiple of four in one line.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, nan_note, vlmevalkit_cells
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

TYPES = {"yes_no": ("yes", "no"), "multiple_choice": ("A", "B")}
EXPECTED = (1, 0, 0, 1)  # q0_i0, q0_i1, q1_i0, q1_i1
_ANSWER_VALUE = {"yes": 1, "a": 1, "no": 0, "b": 0}


def _position(text: str, word: str) -> int:
    match = re.search(r"\b" + re.escape(word) + r"\b", text, re.IGNORECASE)
    return match.start() if match else -1


def read_binary(reply: str, task_type: str) -> int:
    """1 (yes / A), 0 (no / B) or -1 (neither found) by VLMEvalKit's extract_answer."""
    if task_type not in TYPES:
        raise ValueError(f"NaturalBench: type {task_type!r}; expected yes_no or multiple_choice")
    first, second = (_position(reply, w) for w in TYPES[task_type])
    if first == -1 and second == -1:
        return -1
    if first != -1 and second != -1:
        return 1 if first < second else 0
    return 0 if first == -1 else 1


def _sort_key(value: Any) -> tuple[int, float, str]:
    try:
        return 0, float(value), ""
    except (TypeError, ValueError):
        return 1, 0.0, str(value)


def score_naturalbench(df: pd.DataFrame) -> EvalResult:
    """Score NaturalBench predictions. Columns: `index`, `prediction` (None/NaN = a failed call), `type`; `answer`
    is only checked against the fixed pattern (module docstring)."""
    what = "NaturalBench scoring"
    require_columns(df, ("index", "prediction", "type"), what)
    if len(df) == 0 or len(df) % 4:
        raise ValueError(
            f"{what}: {len(df)} rows; NaturalBench is scored in groups of four rows (q0_i0, q0_i1, q1_i0, q1_i1)"
        )
    order = sorted(range(len(df)), key=lambda i: _sort_key(df["index"].iloc[i]))
    df = df.iloc[order].reset_index(drop=True)
    values: list[int] = []
    errors = 0
    disagrees: list[Any] = []
    for pos, row in enumerate(df.to_dict("records")):
        task_type = cell_text(row["type"]) or ""
        if task_type not in TYPES:
            raise ValueError(f"{what}: row index {row['index']}, field `type`: {task_type!r} is not yes_no or "
                             "multiple_choice")
        pred = row["prediction"]
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            errors += 1
            values.append(-1)
        else:
            values.append(read_binary(str(pred), task_type))
        answer = (cell_text(row.get("answer")) or "").strip().lower()
        if answer in _ANSWER_VALUE and _ANSWER_VALUE[answer] != EXPECTED[pos % 4]:
            disagrees.append(row["index"])
    metrics = _metrics(values)
    n = len(values) // 4
    preds = df["prediction"].tolist()
    failed = [is_missing(p) or VLMEVALKIT_FAIL_MARKER in str(p) for p in preds]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else p for p, f in zip(preds, failed)])
    theirs = [-1 if f else read_binary(str(cell), cell_text(t) or "") for f, cell, t in
              zip(failed, back, df["type"].tolist())]
    nan_rows = [df["index"].iloc[i] for i, (f, cell) in enumerate(zip(failed, back))
                if not f and is_nan_cell(cell) and str(preds[i]) != "nan"]
    figure = VlmevalkitFigure(
        metrics=_metrics(theirs), primary="group_score",
        differing=[ReadingDifference(index, ours, their, float(ours == EXPECTED[i % 4]),
                                     float(their == EXPECTED[i % 4]))
                   for i, (index, ours, their, f) in enumerate(zip(df["index"].tolist(), values, theirs, failed))
                   if not f and ours != their],
        notes=[nan_note(nan_rows, "reads the reply itself (neither reading finds an answer in it)")] if nan_rows
        else [],
    )  # fmt: skip
    hits = [v == EXPECTED[i % 4] for i, v in enumerate(values)]
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "extracted": values, "hit": hits,
                               "group": [i // 4 for i in range(len(values))]})  # fmt: skip
    unread = sum(v == -1 for v in values) - errors
    counts = {"total": len(df), "scored": len(df), "groups": n, "hits": int(sum(hits)), "inference_errors": errors,
              "unparsed": unread, "by_rule": len(df) - errors - unread, "by_judge": 0, "unread": unread,
              "judge_errors": 0, "answer_disagrees": len(disagrees)}  # fmt: skip
    notes = []
    if disagrees:
        notes.append(
            f"{len(disagrees)} row(s) have an `answer` that differs from NaturalBench's fixed pattern (Yes/A, No/B, "
            f"No/B, Yes/A per group), which VLMEvalKit and vlmkit score against: index {listed(disagrees)}"
        )
    return EvalResult(
        scorer="naturalbench", metrics=metrics, primary="group_score", per_sample=per_sample,
        table=pd.DataFrame({"Metric": list(metrics), "Score": list(metrics.values())}), table_suffix="acc",
        counts=counts, notes=notes, scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip


def _metrics(values: list[int]) -> dict[str, float]:
    """get_scores over groups of four readings (1, 0 or -1)."""
    groups = [values[i:i + 4] for i in range(0, len(values), 4)]
    question = image = binary = group = 0
    for q0i0, q0i1, q1i0, q1i1 in groups:
        q = int(q0i0 == 1 and q0i1 == 0) + int(q1i1 == 1 and q1i0 == 0)
        im = int(q0i0 == 1 and q1i0 == 0) + int(q1i1 == 1 and q0i1 == 0)
        question, image = question + q, image + im
        binary += int(q0i0 == 1) + int(q0i1 == 0) + int(q1i0 == 0) + int(q1i1 == 1)
        group += int(q == 2 and im == 2)
    n = len(groups)
    return {"question_score": question / (2 * n), "image_score": image / (2 * n), "binary_score": binary / (4 * n),
            "group_score": group / n}
