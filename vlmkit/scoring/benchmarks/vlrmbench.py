"""VLRMBench (VLRMBench, VLRMBench_MultiSolution, VLRMBench_Foresight) as VLMEvalKit scores it
(vlmeval/dataset/vlrmbench.py `VLRMBench.evaluate` at e8e78f05). The rows' `category` says how each is scored:

- Step-based categories (every category but `multi_solution` and `foresight`): the `answer` cell is a list of 0/1
  step labels (a Python literal). The reply's labels are its runs of digits in order, each other than 0 or 1 read
  as 1, cut to the answer's length or padded with 0. All labels of a category are pooled: `<category>_F1_pos` and
  `<category>_F1_neg` are the binary F1 of label 1 and of label 0 (2TP / (2TP + FP + FN), 0 when nothing is
  predicted or present), `<category>_F1_weighted` = (#0 F1_pos + #1 F1_neg) / (#0 + #1) with #0, #1 the counts of
  gold 0 and 1 labels; the same over all step-based rows as `Overall_*`.
- `multi_solution`: the rows sorted by `index` form pairs (the 1st and 2nd, the 3rd and 4th, ...); where an `order`
  column exists the first must say `front` and the second `back`, else the pair is skipped. A reply's two scores
  are its last two runs of digits (padded with 0); the pair is right when front[0] + back[1] > front[1] + back[0].
  `multi_solution_accuracy` = right / pairs scored.
- `foresight`: `task_gt` True: right when the reply holds the word `yes` or `true` (any case); False: `no` or
  `false`. `foresight_accuracy` = right / rows.
Figures are fractions; the headline is `Overall_F1_weighted`, else `multi_solution_accuracy`, else
`foresight_accuracy`. The `_count` / `_skipped` numbers are in the table (VLMEvalKit's _score.csv) and `counts`.

Where vlmkit differs: a failed call is a miss: every step label wrong, a pair wrong, a foresight row wrong
(VLMEvalKit reads its failure message: no digits, so all labels 0). VLMEvalKit tests `task_gt is True` on the
cell pandas hands it, which a numpy boolean (a column of True/False) fails: none of its foresight rows can count
as right there; vlmkit reads the cell's truth value (its figure keeps VLMEvalKit's test). VLMEvalKit skips a
foresight reply its xlsx round trip turns into a number or NaN (re.search fails on it); vlmkit reads it as text.
"""

from __future__ import annotations

import re
from ast import literal_eval
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.vlmevalkit_replies import (
    VLMEVALKIT_FAILURE_REPLY, failed_call, vlmevalkit_cells_of, vlmevalkit_replies,
)  # fmt: skip
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

MULTI_SOLUTION, FORESIGHT = "multi_solution", "foresight"
_DIGITS = re.compile(r"\d+")
_YES = re.compile(r"\b(yes|true)\b", re.IGNORECASE)
_NO = re.compile(r"\b(no|false)\b", re.IGNORECASE)


def step_labels(reply: str, length: int) -> list[int]:
    """VLMEvalKit's `format_model_answer_tolist`: the reply's digit runs as 0/1 labels, fitted to `length`."""
    labels = [0 if int(d) == 0 else 1 for d in _DIGITS.findall(reply)]
    return labels[:length] + [0] * (length - len(labels))


def pair_scores(reply: str) -> list[int]:
    """VLMEvalKit's `format_ms_model_answer`: the last two digit runs (padded with 0)."""
    numbers = [int(d) for d in _DIGITS.findall(reply)]
    return numbers[-2:] if len(numbers) >= 2 else numbers + [0] * (2 - len(numbers))


def binary_f1(gold: Sequence[int], pred: Sequence[int], label: int) -> float:
    tp = sum(g == label and p == label for g, p in zip(gold, pred))
    wrong = sum((g == label) != (p == label) for g, p in zip(gold, pred))
    return 2 * tp / (2 * tp + wrong) if tp else 0.0


def f1_figures(gold: Sequence[int], pred: Sequence[int], prefix: str) -> dict[str, float]:
    pos, neg = binary_f1(gold, pred, 1), binary_f1(gold, pred, 0)
    n1, n0 = sum(g == 1 for g in gold), sum(g == 0 for g in gold)
    weighted = (n0 * pos + n1 * neg) / (n0 + n1) if n0 + n1 else 0.0
    return {f"{prefix}_F1_pos": pos, f"{prefix}_F1_neg": neg, f"{prefix}_F1_weighted": weighted}


def gold_steps(cell: Any, index: Any) -> list[int]:
    """A row's step labels from its `answer` cell; a ValueError naming the row and field when it is not a list."""
    try:
        value = literal_eval(cell) if isinstance(cell, str) else cell
        labels = [int(v) for v in value]
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"VLRMBench scoring: row index {index}, field answer: {cell!r} is not a list of step "
                         "labels") from None  # fmt: skip
    return labels


def truth(cell: Any, index: Any) -> bool:
    text = str(cell).strip().lower()
    if text in ("true", "1", "1.0"):
        return True
    if text in ("false", "0", "0.0"):
        return False
    raise ValueError(f"VLRMBench scoring: row index {index}, field task_gt: {cell!r} is not True or False")


def _steps(df: pd.DataFrame, replies: list[str | None], fail_wrong: bool) -> tuple[dict[str, float], dict[str, int],
                                                                                     list[list[int]]]:  # fmt: skip
    """Step-based figures and counts; per row the labels read (reply None: a failed call)."""
    gold: dict[str, list[int]] = {}
    pred: dict[str, list[int]] = {}
    counts: dict[str, int] = {}
    read: list[list[int]] = []
    for index, category, answer, reply in zip(df["index"], df["category"], df["answer"], replies):
        labels = gold_steps(answer, index)
        mine = [1 - g for g in labels] if reply is None and fail_wrong else \
            step_labels(VLMEVALKIT_FAILURE_REPLY if reply is None else reply, len(labels))  # fmt: skip
        read.append(mine)
        gold.setdefault(str(category), []).extend(labels)
        pred.setdefault(str(category), []).extend(mine)
        counts[f"{category}_count"] = counts.get(f"{category}_count", 0) + 1
    figures: dict[str, float] = {}
    for category in gold:
        figures.update(f1_figures(gold[category], pred[category], category))
    figures.update(f1_figures([g for v in gold.values() for g in v], [p for v in pred.values() for p in v], "Overall"))
    counts["Overall_count"] = len(df)
    return figures, counts, read


def _pairs(df: pd.DataFrame, replies: list[str | None]) -> tuple[dict[str, float], dict[str, int], list[Any]]:
    """multi_solution accuracy and counts; the indices of the first rows of the pairs judged right."""
    rows = {key: pos for pos, key in enumerate(df["index"])}
    order = sorted(rows)
    right, scored, skipped, hits = 0, 0, 0, []
    for i in range(0, len(order), 2):
        if i + 1 >= len(order):
            skipped += 1
            continue
        front, back = rows[order[i]], rows[order[i + 1]]
        if "order" in df.columns and (df["order"].iloc[front] != "front" or df["order"].iloc[back] != "back"):
            skipped += 1
            continue
        f, b = (pair_scores(VLMEVALKIT_FAILURE_REPLY if replies[p] is None else replies[p]) for p in (front, back))
        scored += 1
        if f[0] + b[1] > f[1] + b[0]:
            right += 1
            hits.append(order[i])
    return ({"multi_solution_accuracy": right / scored if scored else 0.0},
            {"multi_solution_count": scored, "multi_solution_skipped": skipped}, hits)  # fmt: skip


def _foresight(df: pd.DataFrame, cells: list[Any], gold: list[Any]) -> tuple[dict[str, float], dict[str, int],
                                                                              list[bool]]:  # fmt: skip
    """foresight accuracy: `cells` the replies (None: a failed call, wrong; not a string: skipped), `gold` the
    task_gt values tested by identity with True / False (as VLMEvalKit does)."""
    right, scored, skipped, hits = 0, 0, 0, []
    for cell, truth_value in zip(cells, gold):
        if cell is not None and not isinstance(cell, str):
            skipped += 1
            hits.append(False)
            continue
        text = cell or ""
        hit = cell is not None and ((truth_value is True and bool(_YES.search(text)))
                                    or (truth_value is False and bool(_NO.search(text))))  # fmt: skip
        right += hit
        scored += 1
        hits.append(hit)
    return ({"foresight_accuracy": right / scored if scored else 0.0},
            {"foresight_count": scored, "foresight_skipped": skipped}, hits)  # fmt: skip


def _all(df: pd.DataFrame, replies: list[str | None], cells: list[Any], gold_truth: list[Any], fail_wrong: bool
         ) -> tuple[dict[str, float], dict[str, int], dict[Any, float]]:  # fmt: skip
    """Every figure, the table's counts, and per row its score (step rows: the share of labels right)."""
    cats = df["category"].astype(str)
    metrics: dict[str, float] = {}
    counts: dict[str, int] = {}
    per_row: dict[Any, float] = {}
    step = ~cats.isin([MULTI_SOLUTION, FORESIGHT])
    if step.any():
        part = df[step.to_numpy()]
        picked = [r for r, s in zip(replies, step) if s]
        figures, n, read = _steps(part, picked, fail_wrong)
        metrics.update(figures), counts.update(n)
        for index, answer, labels in zip(part["index"], part["answer"], read):
            gold = gold_steps(answer, index)
            per_row[index] = sum(g == p for g, p in zip(gold, labels)) / len(gold) if gold else 0.0
    ms = (cats == MULTI_SOLUTION).to_numpy()
    if ms.any():
        figures, n, right = _pairs(df[ms], [r for r, s in zip(replies, ms) if s])
        metrics.update(figures), counts.update(n)
        per_row.update({i: float(i in right) for i in df["index"][ms]})
    fs = (cats == FORESIGHT).to_numpy()
    if fs.any():
        figures, n, hits = _foresight(df[fs], [c for c, s in zip(cells, fs) if s],
                                      [g for g, s in zip(gold_truth, fs) if s])  # fmt: skip
        metrics.update(figures), counts.update(n)
        per_row.update({i: float(h) for i, h in zip(df["index"][fs], hits)})
    return metrics, counts, per_row


def score_vlrmbench(df: pd.DataFrame) -> EvalResult:
    """Score VLRMBench replies. Columns: `index`, `prediction` (None/NaN = a failed call), `category`, and `answer`
    (step-based rows), `task_gt` (foresight rows), `order` (multi_solution rows, optional)."""
    require_columns(df, ("index", "prediction", "category"), "VLRMBench scoring")
    if len(df) == 0:
        raise ValueError("VLRMBench scoring: the predictions table has no rows")
    cats = set(df["category"].astype(str))
    if cats - {MULTI_SOLUTION, FORESIGHT}:
        require_columns(df, ("answer",), "VLRMBench scoring (step-based rows)")
    if FORESIGHT in cats:
        require_columns(df, ("task_gt",), "VLRMBench scoring (foresight rows)")
    predictions = df["prediction"].tolist()
    errors = [i for i, p in zip(df["index"], predictions) if failed_call(p)]
    mine_replies = [None if failed_call(p) else str(p) for p in predictions]
    is_fs = (df["category"].astype(str) == FORESIGHT).tolist()
    my_truth = [truth(g, i) if fs else None for g, i, fs in zip(df.get("task_gt", [None] * len(df)), df["index"],
                                                                 is_fs)]  # fmt: skip
    metrics, counts, per_row = _all(df, mine_replies, mine_replies, my_truth, fail_wrong=True)
    their_truth = [df.iloc[pos]["task_gt"] if fs else None for pos, fs in enumerate(is_fs)]  # the cell as iloc gives it
    theirs, their_counts, their_rows = _all(df, vlmevalkit_replies(predictions), vlmevalkit_cells_of(predictions),
                                            their_truth, fail_wrong=False)  # fmt: skip
    differing = [ReadingDifference(i, None, None, per_row[i], their_rows[i]) for i in df["index"]
                 if per_row[i] != their_rows[i]]  # fmt: skip
    notes = [f"{len(errors)} failed call(s) are misses: index {listed(errors)}"] if errors else []
    their_notes = []
    if any(fs and not (t is True or t is False) for fs, t in zip(is_fs, their_truth)):
        their_notes.append("VLMEvalKit tests task_gt with `is True`/`is False`, which the cells (numpy booleans) "
                           "fail: such a foresight row never counts as right")  # fmt: skip
    primary = next(k for k in ("Overall_F1_weighted", "multi_solution_accuracy", "foresight_accuracy") if k in metrics)
    return EvalResult(
        scorer="vlrmbench", metrics=metrics, primary=primary,
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "score": [per_row[i] for i in df["index"]]}),
        table=pd.DataFrame([{**metrics, **counts}]), table_suffix="score",
        counts={"total": len(df), "scored": len(df), "inference_errors": len(errors), "by_rule": len(df) - len(errors),
                "by_judge": 0, "unread": 0, "judge_errors": 0, **counts},
        notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(theirs, primary, differing, their_notes),
    )  # fmt: skip

