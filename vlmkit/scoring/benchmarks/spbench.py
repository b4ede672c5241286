"""SPBench (SPBench-MV, SPBench-SI and their _CoT prompts) as VLMEvalKit scores it: vlmeval/dataset/spbench.py at
e8e78f05, which reuses VsiBench.evaluate and VsiBench._aggregate (vsibench.py) with the rule path of
utils/spatial_bench/cal_scores.py.

A row's `question_type` says its task: `object_rel_direction` and `object_rel_distance` are multiple choice, the
others numeric (`object_counting`, `object_abs_distance`, `object_size_estimation`); any other type is refused in one
line, as VLMEvalKit's get_task_type refuses it.
- Multiple choice: the option letter read from the reply and from the `answer` cell by VLMEvalKit's `can_match_option`
  (vlmkit.scoring.benchmarks.spatial_mcq.read_option_letter); right when both read the same letter.
- Numeric: the number read from the reply by VLMEvalKit's `can_match_na`
  (vlmkit.scoring.common.mean_relative_accuracy.to_number) scored by Mean Relative Accuracy against the answer read
  as a float; 0 when either is missing.
Figures (percents, as VLMEvalKit reports them): `<type>_accuracy` per multiple-choice type and `<type>_MRA:.5:.95:.05`
per numeric type, each the mean over its rows; `overall` the mean of those per-type figures.

Where vlmkit differs: a failed call is a miss (VLMEvalKit reads its failure text, which names no letter or number:
the same). A reply and an answer cell that both read as no letter make a hit in VLMEvalKit (it compares `False` with
`False`); vlmkit counts it as a miss and VLMEvalKit's figure (`EvalResult.vlmevalkit`) as a hit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.benchmarks.spatial_mcq import read_option_letter
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.mean_relative_accuracy import mean_relative_accuracy, to_number
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

MCQ_TYPES = ("object_rel_direction", "object_rel_distance")
NA_TYPES = ("object_counting", "object_abs_distance", "object_size_estimation")
MRA = "MRA:.5:.95:.05"


def task_type(question_type: str, where: str) -> str:
    """`MCQ` or `NA` for a question type; a ValueError naming `where` for any other."""
    if question_type in MCQ_TYPES:
        return "MCQ"
    if question_type in NA_TYPES:
        return "NA"
    known = ", ".join(MCQ_TYPES + NA_TYPES)
    raise ValueError(f"{where}: unknown question type {question_type!r} (SPBench has {known})")


def answer_number(answer: Any) -> float | None:
    """The answer cell as VLMEvalKit's to_float reads it (None when it is not a number, or NaN)."""
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def option_score(reply: str | None, answer: Any, *, vlmevalkit: bool = False) -> tuple[float, str | None]:
    """(1.0 or 0.0, the letter read) of a multiple-choice row; `reply` None for a failed call. `vlmevalkit=True`
    counts two unread letters as a hit, as VLMEvalKit's exact_match(False, False) does."""
    if reply is None:
        return 0.0, None
    letter, _ = read_option_letter(reply)
    target, _ = read_option_letter(str(answer).strip())
    if letter is None and target is None:
        return (1.0 if vlmevalkit else 0.0), None
    return float(letter is not None and letter == target), letter


def numeric_score(reply: str | None, answer: Any) -> tuple[float, float | None]:
    """(MRA, the number read) of a numeric row; `reply` None for a failed call."""
    if reply is None:
        return 0.0, None
    number, gold = to_number(reply), answer_number(answer)
    if number is None or gold is None:
        return 0.0, number
    return mean_relative_accuracy(number, gold), number


def figures(types: Sequence[str], kinds: Sequence[str], scores: Sequence[float]) -> dict[str, float]:
    """VsiBench._aggregate for SPBench's types: per type (sorted) its mean, `overall` their mean; percents."""
    by_type: dict[str, list[float]] = {}
    for qtype, score in zip(types, scores, strict=True):
        by_type.setdefault(qtype, []).append(score)
    kind_of = dict(zip(types, kinds, strict=True))
    per_type = {f"{t}_{'accuracy' if kind_of[t] == 'MCQ' else MRA}": sum(v) / len(v)
                for t, v in sorted(by_type.items())}  # fmt: skip
    overall = sum(per_type.values()) / len(per_type)
    ordered = [f"{t}_{m}" for t in (*NA_TYPES, "room_size_estimation", *MCQ_TYPES) for m in ("accuracy", MRA)]
    return {"overall": 100.0 * overall, **{k: 100.0 * per_type[k] for k in ordered if k in per_type}}


def row_score(reply: str | None, answer: Any, kind: str, *, vlmevalkit: bool = False) -> tuple[float, Any]:
    if kind == "MCQ":
        return option_score(reply, answer, vlmevalkit=vlmevalkit)
    return numeric_score(reply, answer)


def score_spbench(df: pd.DataFrame) -> EvalResult:
    """Score SPBench replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`,
    `question_type`."""
    return score_typed_rows(df, scorer="spbench", what="SPBench scoring", type_column="question_type",
                            kind_of=task_type, row_score=row_score, figures=figures, scale=Scale(PERCENT))


RowScore = Callable[..., tuple[float, Any]]  # (reply or None, answer, kind, *, vlmevalkit=False) -> (score, reading)
Figures = Callable[[Sequence[str], Sequence[str], Sequence[float]], dict[str, float]]  # (types, kinds, scores)


def score_typed_rows(df: pd.DataFrame, *, scorer: str, what: str, type_column: str, kind_of: Callable[[str, str], str],
                     row_score: RowScore, figures: Figures, scale: Scale, unread_kinds: Sequence[str] | None = None
                     ) -> EvalResult:
    """The rule scorer of the spatial benchmarks VLMEvalKit scores with VsiBench's rule path (SPBench, SPAR-Bench):
    each row's kind from its `type_column` (`kind_of(type, where)`), its score and reading by `row_score`, the
    figures by `figures`; a failed call scores 0. A row counts as unread where its reading is None (only rows of
    `unread_kinds`, when given: a kind without a reading is never unread). VLMEvalKit's figure scores the replies its
    xlsx round trip leaves, two unread letters a hit (`row_score(..., vlmevalkit=True)`)."""
    require_columns(df, ("index", "prediction", "answer", type_column), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    types = [str(t) for t in df[type_column]]
    kinds = [kind_of(t, f"{what}: row index {i}, field {type_column}") for i, t in zip(df["index"], types)]
    scores, readings, errors = [], [], []
    for index, pred, answer, kind in zip(df["index"], df["prediction"], df["answer"], kinds, strict=True):
        reply = None if failed_call(pred) else str(pred)
        if reply is None:
            errors.append(index)
        score, reading = row_score(reply, answer, kind)
        scores.append(score)
        readings.append(reading)
    metrics = figures(types, kinds, scores)
    notes = [f"{len(errors)} failed call(s) score 0: index {listed(errors)}"] if errors else []
    unread = sum(1 for r, k, p in zip(readings, kinds, df["prediction"])
                 if (unread_kinds is None or k in unread_kinds) and r is None and not failed_call(p))  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(errors),
              "by_rule": len(df) - len(errors) - unread, "by_judge": 0, "unread": unread,
              "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), type_column: types, "task_type": kinds,
                               "read": pd.Series(readings, dtype=object), "score": scores})  # fmt: skip
    theirs, differing = [], []
    for index, reply, answer, kind, my_score, my_reading in zip(
        df["index"], vlmevalkit_replies(df["prediction"].tolist()), df["answer"], kinds, scores, readings, strict=True
    ):
        score, reading = row_score(reply, answer, kind, vlmevalkit=True)
        theirs.append(score)
        if reply is not None and score != my_score:
            differing.append(ReadingDifference(index, my_reading, reading, my_score, score))
    return EvalResult(
        scorer=scorer, metrics=metrics, primary="overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=scale,
        vlmevalkit=VlmevalkitFigure(figures(types, kinds, theirs), "overall", differing),
    )  # fmt: skip
