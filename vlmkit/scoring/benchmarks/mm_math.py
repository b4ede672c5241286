"""MM-Math as VLMEvalKit scores it (vlmeval/dataset/mmmath.py MMMath.evaluate at e8e78f05): each reply is checked
against the answer by VLMEvalKit's AutoScoringJudge (vlmkit.scoring.benchmarks.mm_math_judge: boxed answers, units
removed, numbers within 0.01, sympy expressions, intervals, equations). Figures (fractions): `overall`, the share of
replies that match, then `Difficulty-<d>`, `Year-<y>`, `Knowledge-L1-<p>` and `Knowledge-L2-<p>` per value present.

A failed call is a miss, as in VLMEvalKit (its failure text matches no answer). VLMEvalKit checks the cells its xlsx
round trip leaves: a reply or answer read back as a number is no text to its check, which then fails; its figure
(`EvalResult.vlmevalkit`) does that, vlmkit checks the text.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.benchmarks.mm_math_judge import missing_library, same_answer
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_cells
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_cells_of
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

GROUPS = (("difficulty", "Difficulty"), ("year", "Year"), ("knowledge_l1", "Knowledge-L1"),
          ("knowledge_l2", "Knowledge-L2"))  # fmt: skip


def _label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def figures(df: pd.DataFrame, hits: list[bool]) -> dict[str, float]:
    out = {"overall": sum(hits) / len(hits)}
    for column, name in GROUPS:
        labels = [None if is_missing(v) else _label(v) for v in df[column]]
        for label in sorted({x for x in labels if x is not None}):
            mine = [h for h, x in zip(hits, labels) if x == label]
            out[f"{name}-{label}"] = sum(mine) / len(mine)
    return out


def score_mm_math(df: pd.DataFrame) -> EvalResult:
    """Score MM-Math replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `difficulty`,
    `year`, `knowledge_l1`, `knowledge_l2`."""
    what = "MM-Math scoring"
    require_columns(df, ("index", "prediction", "answer", *(c for c, _ in GROUPS)), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    missing = missing_library()
    if missing:
        raise ValueError(f"{what}: {missing}")
    answers = [_label(a) for a in df["answer"]]
    hits, errors = [], []
    for index, pred, answer in zip(df["index"], df["prediction"], answers):
        if failed_call(pred):
            errors.append(index)
            hits.append(False)
            continue
        hits.append(same_answer(answer, str(pred)))
    metrics = figures(df, hits)
    notes = [f"{len(errors)} failed call(s) are misses: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "by_rule": len(df) - len(errors), "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "hit": hits})
    return EvalResult(
        scorer="mm_math", metrics=metrics, primary="overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=_vlmevalkit_figure(df, answers, hits),
    )  # fmt: skip


def _vlmevalkit_figure(df: pd.DataFrame, answers: list[str], mine: list[bool]) -> VlmevalkitFigure:
    """The check on the cells VLMEvalKit's xlsx round trip leaves (asked again only where a cell changed)."""
    replies = vlmevalkit_cells_of(df["prediction"].tolist())
    gold = vlmevalkit_cells(df["answer"].tolist())
    theirs, differing = [], []
    for index, pred, reply, answer, cell, hit in zip(df["index"], df["prediction"], replies, answers, gold, mine,
                                                     strict=True):  # fmt: skip
        if reply is None or (reply == str(pred) and cell == answer):
            theirs.append(hit)
            continue
        their_hit = same_answer(cell, reply)
        theirs.append(their_hit)
        if their_hit != hit:
            differing.append(ReadingDifference(index, str(pred), str(reply), float(hit), float(their_hit)))
    return VlmevalkitFigure(figures(df, theirs), "overall", differing)
