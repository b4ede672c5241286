"""VLMs are Blind (VLMBlind) as VLMEvalKit scores it (vlmeval/dataset/image_mcq.py VLMBlind.evaluate): one rule per
`task`, the reply compared with the row's `answers`; accuracy per task and Overall (all rows), as fractions.

Rules (which task uses which is the catalog's `task_rules` option, VLMEvalKit's table as data):
- `braces`: the text inside the first `{...}` of the reply (on one line; "" when there is none) equals the answer.
- `substring`: the answer is part of the reply; `substring_nocase`: the same in lower case.
- `rows_columns`: the answer is two whole numbers `r, c`; the reply says `rows ... {r}` and `columns ... {c}`
  (`Row`/`Rows`/`Column`/`Columns`, any text without braces between the word and its `{n}`), or else holds a pair
  `(r, c)`; both numbers must match in order.
A row whose task has no rule counts in its task and Overall but is never right, as in VLMEvalKit (named in a note).
Where vlmkit differs: a failed call is a miss (`inference_errors`; VLMEvalKit fails on it for most rules); a row
without an answer is a miss (`invalid_target`).

VLMEvalKit's figure (EvalResult.vlmevalkit): its rules are the ones above, so on the same replies its per-task
figures are vlmkit's (VLMEvalKit prints no Overall; the figure's `Overall` is over all rows, as vlmkit's). Its
evaluate reads the prediction without str(): a reply its xlsx round trip turns into NaN (an empty reply, `None`,
`N/A`, `nan`...) or a number (a column of numbers) stops it with a TypeError, so the figure is not computed then
(None, and a note names the rows).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, not_text
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.common.text_norm import cell_text
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

_BRACES = re.compile(r"\{(.*?)\}")
_ROWS = re.compile(r"[Rr]ows?(?:[^{}]*)\{(\d+)\}")
_COLUMNS = re.compile(r"[Cc]olumns?(?:[^{}]*)\{(\d+)\}")
_PAIR = re.compile(r"\((\d+),\s*(\d+)\)")


def first_braces(reply: str) -> str:
    match = _BRACES.search(reply)
    return match.group(1) if match else ""


def rows_columns_hit(reply: str, answer: str) -> bool:
    try:
        target = [int(x.strip()) for x in answer.split(",")]
    except ValueError:
        return False
    if len(target) != 2:
        return False
    rows, columns = _ROWS.search(reply), _COLUMNS.search(reply)
    if rows and columns:
        return [int(rows.group(1)), int(columns.group(1))] == target
    pair = _PAIR.search(reply)
    return bool(pair) and [int(pair.group(1)), int(pair.group(2))] == target


RULES: dict[str, Callable[[str, str], bool]] = {
    "braces": lambda reply, answer: first_braces(reply) == answer,
    "substring": lambda reply, answer: answer in reply,
    "substring_nocase": lambda reply, answer: answer.lower() in reply.lower(),
    "rows_columns": rows_columns_hit,
}


def score_vlmblind(df: pd.DataFrame, task_rules: Mapping[str, str]) -> EvalResult:
    """Score VLMBlind predictions. Columns: `index`, `prediction` (None/NaN = a failed call), `answers`, `task`.
    `task_rules`: task -> one of RULES."""
    what = "VLMBlind scoring"
    require_columns(df, ("index", "prediction", "answers", "task"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    unknown_rules = sorted({r for r in task_rules.values() if r not in RULES})
    if unknown_rules:
        raise ValueError(f"{what}: unknown rule(s) {', '.join(unknown_rules)}; choose from {', '.join(RULES)}")
    hits: list[bool] = []
    rules: list[str] = []
    errors, invalid, no_rule = [], [], []
    for index, pred, answer, task in zip(df["index"], df["prediction"], df["answers"], df["task"], strict=True):
        rule = task_rules.get(cell_text(task) or "")
        rules.append(rule or "none")
        if rule is None:
            no_rule.append(index)
        if is_blank(answer):
            invalid.append(index)
        if failed_call(pred):
            errors.append(index)
            hits.append(False)
            continue
        hits.append(rule is not None and not is_blank(answer) and RULES[rule](str(pred), cell_text(answer) or ""))
    tasks = df["task"].map(lambda v: cell_text(v) or "").to_numpy()
    per_task = pd.Series(hits, dtype=float).groupby(tasks).mean()
    metrics = {str(task): float(value) for task, value in per_task.items()}
    metrics["Overall"] = sum(hits) / len(hits)
    counts = {"total": len(df), "scored": len(df), "hits": int(sum(hits)), "inference_errors": len(errors),
              "invalid_target": len(invalid), "no_rule": len(no_rule), "by_rule": len(df) - len(errors),
              "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    notes = []
    if no_rule:
        notes.append(f"{len(no_rule)} row(s) belong to a task without a rule (misses, as in VLMEvalKit): index "
                     f"{listed(no_rule)}")
    if invalid:
        notes.append(f"{len(invalid)} row(s) have no answer (misses): index {listed(invalid)}")
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "rule": rules, "hit": hits})
    stops = [index for index, stop in zip(df["index"], not_text(df["prediction"].tolist())) if stop]
    figure = None
    if stops:
        notes.append(f"VLMEvalKit's figure not computed: {len(stops)} reply(ies) come back from its xlsx as NaN "
                     f"(empty, 'None', 'N/A', ...) or as numbers, and its VLMBlind.evaluate, which uses them as text "
                     f"without str(), stops on them; index {listed(stops)}")
    else:
        figure = VlmevalkitFigure(metrics=dict(metrics), primary="Overall", notes=[
            "VLMEvalKit's rules are vlmkit's: the same per-task figures; it prints no Overall (here: all rows)"])
    return EvalResult(
        scorer="vlmblind", metrics=metrics, primary="Overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip
