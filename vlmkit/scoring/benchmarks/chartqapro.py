"""ChartQAPro as VLMEvalKit scores it (vlmeval/dataset/chartqapro.py with utils/chartqapro.py at e8e78f05;
VLMEvalKit scores the CoT and PoT variants by the same rule, and warns that their figures can be very low).

A row: the target is the last item of its `answer` list, the reply taken as it is; both lose leading and trailing
`.` and then line breaks. Each is split into items when it reads as a Python list (the target after quoting its
bare items), else it is one item. Items are compared in order; a missing or extra item scores 0. An item whose year
flag (the row's `Year` list, the last flag only for Conversational questions; repeated when shorter than the
target) is `YES` must equal the target's (trimmed, any case); otherwise both lose `%` and spaces at the ends and,
when both read as numbers, the reply must be within 5% of the target (exactly 0 for a target 0); otherwise the
score is the ANLS of the lower-cased texts (the `anls` package: spaces collapsed, distance over the longer
collapsed text, kept when below 0.5). The row scores the mean of its items. Figures: the mean per question type
and `Overall`, fractions.

Where vlmkit differs: a failed call scores 0 (VLMEvalKit scores its failure message as a reply); a row whose Year
list is empty is read without year flags (VLMEvalKit stops on it). VLMEvalKit's figure (`EvalResult.vlmevalkit`)
applies the rule to the replies its xlsx round trip leaves.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import pandas as pd
from rapidfuzz.distance import Levenshtein

from vlmkit.core.cells import listed
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

_BARE = re.compile(r"(?<!['\w])(\w[^,]*?)(?!['\w])")


def quote_bare_items(target: str) -> str:
    """`[a, b]` -> `['a', 'b']` (VLMEvalKit's fix_list_format, as text); anything else unchanged."""
    match = re.match(r"^\[(.*)\]$", target.strip())
    if not match:
        return target
    fixed = f"[{_BARE.sub(lambda m: repr_free(m.group(1)), match.group(1))}]"
    try:
        return str(ast.literal_eval(fixed))
    except (SyntaxError, ValueError):
        return target


def repr_free(text: str) -> str:
    return f"'{text}'"


def as_items(text: str) -> list[str] | None:
    try:
        parsed = ast.literal_eval(text)
    except Exception:  # noqa: BLE001 - whatever literal_eval refuses is not a list
        return None
    if isinstance(parsed, list):
        return [str(x).strip(" '") for x in parsed]
    return None


def anls_package(prediction: str, gold: str, threshold: float = 0.5) -> float:
    """The `anls` package's anls_score for one gold label."""
    pred, true = " ".join(prediction.strip().lower().split()), " ".join(gold.strip().lower().split())
    length = max(len(pred.upper()), len(true.upper()))
    distance = 0.0 if length == 0 else Levenshtein.distance(pred, true) / length
    return 1 - distance if distance < threshold else 0.0


def _number(text: str) -> float | None:
    try:
        return float(text.strip().strip("%"))
    except ValueError:
        return None


def item_score(target: str, reply: str) -> float:
    t, p = target.strip().strip("%").strip(), reply.strip().strip("%").strip()
    t_f, p_f = _number(t), _number(p)
    if t_f is not None and p_f is not None:
        if t_f == 0.0:
            return 1.0 if p_f == 0.0 else 0.0
        return 1.0 if abs(p_f - t_f) / abs(t_f) <= 0.05 else 0.0
    return anls_package(p.lower(), t.lower())


def row_score(target: str, reply: str, year_flags: list[str] | None) -> float:
    t_items = as_items(quote_bare_items(target)) or [target]
    p_items = as_items(reply) or [reply]
    flags = list(year_flags or [])
    if flags and len(flags) < len(t_items):
        flags = flags * len(t_items)
    scores = []
    for i in range(max(len(t_items), len(p_items))):
        if i >= len(t_items) or i >= len(p_items):
            scores.append(0.0)
        elif i < len(flags) and str(flags[i]).upper() == "YES":
            scores.append(1.0 if t_items[i].strip().lower() == p_items[i].strip().lower() else 0.0)
        else:
            scores.append(item_score(t_items[i], p_items[i]))
    return sum(scores) / len(scores) if scores else 0.0


def _literal_list(value: Any, what: str) -> list[Any]:
    try:
        parsed = ast.literal_eval(str(value))
    except (SyntaxError, ValueError):
        raise ValueError(f"{what}: {value!r} is not a list") from None
    if not isinstance(parsed, list):
        raise ValueError(f"{what}: {value!r} is not a list")
    return parsed


def row_inputs(record: dict[str, Any]) -> tuple[str, list[str]]:
    """(target, year flags) of a row."""
    where = f"ChartQAPro scoring: index {record['index']}"
    answers = _literal_list(record["answer"], f"{where}, field answer")
    if not answers:
        raise ValueError(f"{where}, field answer: an empty list")
    flags = [str(f) for f in _literal_list(record["Year"], f"{where}, field Year")]
    if str(record["question_type"]) == "Conversational":
        flags = flags[-1:]
    return str(answers[-1]).strip(".").strip("\n"), flags


def figures(types: list[str], scores: list[float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for kind in dict.fromkeys(types):
        picked = [s for t, s in zip(types, scores) if t == kind]
        out[kind] = sum(picked) / len(picked)
    out["Overall"] = sum(scores) / len(scores)
    return out


def score_chartqapro(df: pd.DataFrame) -> EvalResult:
    """Score ChartQAPro replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer` (a list),
    `question_type`, `Year` (a list of YES/NO)."""
    require_columns(df, ("index", "prediction", "answer", "question_type", "Year"), "ChartQAPro scoring")
    if len(df) == 0:
        raise ValueError("ChartQAPro scoring: the predictions table has no rows")
    records = df.to_dict("records")
    inputs = [row_inputs(r) for r in records]
    types = [str(r["question_type"]) for r in records]
    scores, errors = [], []
    for r, (target, flags) in zip(records, inputs):
        if failed_call(r["prediction"]):
            errors.append(r["index"])
            scores.append(0.0)
            continue
        scores.append(row_score(target, str(r["prediction"]).strip(".").strip("\n"), flags))
    metrics = figures(types, scores)
    notes = []
    if errors:
        notes.append(f"{len(errors)} failed call(s) score 0: index {listed(errors)}")
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors), "by_rule": len(df) - len(errors),
              "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    theirs, differing = [], []
    for r, (target, flags), reply, mine in zip(records, inputs, vlmevalkit_replies(df["prediction"].tolist()), scores):
        score = 0.0 if reply is None else row_score(target, reply.strip(".").strip("\n"), flags)
        theirs.append(score)
        if score != mine:
            differing.append(ReadingDifference(r["index"], str(r["prediction"]), reply, mine, score))
    return EvalResult(
        scorer="chartqapro", metrics=metrics, primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "question_type": types, "score": scores}),
        table=pd.DataFrame([metrics]), table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(figures(types, theirs), "Overall", differing),
    )  # fmt: skip
