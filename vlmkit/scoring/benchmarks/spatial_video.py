"""VLMEvalKit's spatial video scorers (vlmeval/dataset/vsibench.py, stibench.py, dsrbench.py, sitebench.py and
utils/spatial_bench/cal_scores.py at e8e78f05): multiple-choice rows read by the spatial_bench option rule
(`vlmkit.scoring.benchmarks.spatial_mcq.read_option_letter`, VLMEvalKit's `can_match_option`, applied to the reply and
to the `answer` cell), numeric rows read by `can_match_na` (`vlmkit.scoring.common.mean_relative_accuracy.to_number`)
and scored by Mean Relative Accuracy over thresholds 0.50..0.95; a number that cannot be read, or an answer that is
not a number, scores 0.

Two aggregations, as VLMEvalKit's classes do:
- `per_type` (VsiBench._aggregate, VsiSuperCount._aggregate): one figure per question type, `{type}_accuracy` (MCQ
  rows: mean hit) or `{type}_MRA:.5:.95:.05` (numeric rows: mean MRA); `merge` folds sub-types into one figure, their
  plain mean, when all of them are present (VSI-Bench's three `object_rel_direction_*` into `object_rel_direction`);
  `Overall` (VLMEvalKit's `overall`) is the plain mean of those figures, not of the rows.
- `pooled` (eval_mcq_score: VSI-SUPER-Recall, STI-Bench, DSRBench; SiteBench's evaluate): every row is MCQ;
  `Overall` is the mean hit over all rows and `{value}_accuracy` one per value of the grouping column (`order` first,
  then the others in order of appearance), with SITE's class-adjusted accuracy beside them when asked, as
  `vlmkit.scoring.benchmarks.spatial_mcq.score_spatial_mcq`, whose result this is.

- `revsi` (ReVSI.evaluate, vlmeval/dataset/revsi.py): its own reading, the reply's first space-separated word with
  trailing dots removed: MCQ rows right when it equals `ground_truth` (any case), numeric rows scored by MRA of
  float(word) (ReVSI's formula: |pred - answer| / answer, 0 when the answer is 0 or either is not a number); per-type
  means, then each of `merge`'s groups replaced by the mean of its members that are present, and `overall_accuracy`
  the mean of the figures; fractions, as ReVSI prints them.

Figures are percents, as VLMEvalKit prints them (ReVSI: fractions). A failed call is a miss (MCQ) or scores 0 (numeric).
VLMEvalKit's figure (`EvalResult.vlmevalkit`) reads the replies as its xlsx round trip gives them back (an empty
reply, `None`, `N/A`, ... become `nan`); otherwise the two readings are the same rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.benchmarks.spatial_mcq import read_option_letter, score_spatial_mcq
from vlmkit.scoring.benchmarks.spbench import answer_number
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.mean_relative_accuracy import VLMEVALKIT_THRESHOLDS, mean_relative_accuracy, to_number
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, nan_note, vlmevalkit_cells
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["AGGREGATIONS", "MRA_NAME", "score_spatial_video"]

AGGREGATIONS = ("per_type", "pooled", "revsi")
MRA_NAME = "MRA:.5:.95:.05"
INFERENCE_ERROR = "inference_error"
SCORER = "spatial_video"


def _read(reply: Any, numeric: bool, answer: Any, target_letter: str | None) -> tuple[Any, float]:
    """(what was read, the row's score) of one reply text."""
    if numeric:
        number = to_number(reply)
        target = answer_number(answer)
        if number is None or target is None:
            return number, 0.0
        return number, mean_relative_accuracy(number, target)
    letter, _ = read_option_letter(reply)
    return letter, float(letter is not None and letter == target_letter)


def _type_figures(types: list[str], numeric: list[bool], scores: list[float], merge: Mapping[str, Sequence[str]],
                  order: Sequence[str]) -> dict[str, float]:
    """VsiBench._aggregate: per-type means, merged groups, Overall the mean of the figures (percents)."""
    values: dict[str, float] = {}
    for kind in sorted(set(types)):  # pandas groupby's order
        picked = [s for s, t in zip(scores, types) if t == kind]
        is_numeric = next(n for n, t in zip(numeric, types) if t == kind)
        values[f"{kind}_{MRA_NAME if is_numeric else 'accuracy'}"] = sum(picked) / len(picked)
    for merged, parts in merge.items():
        keys = [f"{p}_accuracy" for p in parts]
        if all(k in values for k in keys):
            values[f"{merged}_accuracy"] = sum(values.pop(k) for k in keys) / len(keys)
    overall = sum(values.values()) / len(values) if values else 0.0
    metrics = {"Overall": 100.0 * overall}
    listed = [f"{kind}_{metric}" for kind in order for metric in ("accuracy", MRA_NAME)]
    for key in [k for k in listed if k in values] + sorted(k for k in values if k not in listed):
        metrics[key] = 100.0 * values[key]
    return metrics


def _per_type(df: pd.DataFrame, numeric_types: Sequence[str], merge: Mapping[str, Sequence[str]],
              order: Sequence[str], group: str) -> EvalResult:
    what = "spatial video"
    records, _ = keyed_records(df, ("index", "prediction", "answer", group), what)
    types = [str(r[group]) for r in records]
    numeric = [t in set(numeric_types) for t in types]
    failed = [is_missing(r["prediction"]) or VLMEVALKIT_FAIL_MARKER in str(r["prediction"]) for r in records]
    targets = [None if n or is_missing(r["answer"]) else read_option_letter(str(r["answer"]).strip())[0]
               for r, n in zip(records, numeric)]
    read: list[Any] = []
    scores: list[float] = []
    methods: list[str] = []
    for row, is_numeric, target, fail in zip(records, numeric, targets, failed):
        if fail:
            read.append(None), scores.append(0.0), methods.append(INFERENCE_ERROR)
            continue
        value, score = _read(str(row["prediction"]), is_numeric, row["answer"], target)
        read.append(value), scores.append(score)
        methods.append(("number" if is_numeric else "letter") if value is not None else "unparsed")
    metrics = _type_figures(types, numeric, scores, merge, order)

    cells = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    theirs: list[Any] = []
    their_scores: list[float] = []
    for row, is_numeric, target, fail, cell in zip(records, numeric, targets, failed, cells):
        if fail:
            theirs.append(None), their_scores.append(0.0)
            continue
        value, score = _read(str(cell), is_numeric, row["answer"], target)
        theirs.append(value), their_scores.append(score)
    nan_rows = [r["index"] for r, cell, f in zip(records, cells, failed)
                if not f and is_nan_cell(cell) and str(r["prediction"]) != "nan"]
    figure = VlmevalkitFigure(
        metrics=_type_figures(types, numeric, their_scores, merge, order), primary="Overall",
        differing=[ReadingDifference(r["index"], ours, their, score, their_score)
                   for r, ours, their, score, their_score, f in zip(records, read, theirs, scores, their_scores, failed)
                   if not f and (ours != their or score != their_score)],
        notes=[nan_note(nan_rows, "reads the reply itself")] if nan_rows else [],
    )  # fmt: skip
    tally = Counter(methods)
    invalid = [r["index"] for r, n, t in zip(records, numeric, targets)
               if (n and answer_number(r["answer"]) is None) or (not n and t is None)]
    counts = {"total": len(records), "scored": len(records), "mcq": numeric.count(False), "numeric": sum(numeric),
              "by_rule": tally["letter"] + tally["number"], "unread": tally["unparsed"],
              "inference_errors": tally[INFERENCE_ERROR], "invalid_target": len(invalid)}
    notes = ["Overall is VLMEvalKit's: the plain mean of the per-type figures (each type weighs the same), not of "
             "the rows"]
    if invalid:
        notes.append(f"{len(invalid)} row(s) have an answer that is not a number (numeric types) or names no option "
                     f"letter (scored 0): index {', '.join(map(str, invalid[:20]))}")
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], group: types,
        "task_type": ["NA" if n else "MCQ" for n in numeric], "extracted": pd.Series(read, dtype=object),
        "score": scores, "hit": [s == 1.0 for s in scores], "method": methods,
        "vlmevalkit": pd.Series(theirs, dtype=object), "vlmevalkit_score": their_scores,
    })  # fmt: skip
    return EvalResult(
        scorer=SCORER, metrics=metrics, primary="Overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip


def _ordered(metrics: dict[str, float], order: Sequence[str]) -> dict[str, float]:
    """eval_mcq_score's order: Overall, the preferred categories, then the others as they came."""
    first = ["Overall", "overall_caa"] + [f"{c}_accuracy" for c in order] + [f"{c}_caa" for c in order]
    return {**{k: metrics[k] for k in first if k in metrics}, **{k: v for k, v in metrics.items() if k not in first}}


def score_spatial_video(df: pd.DataFrame, *, aggregate: str = "per_type",
                        group: str | Sequence[str] = "question_type", numeric_types: Sequence[str] = (),
                        merge: Mapping[str, Sequence[str]] | None = None, order: Sequence[str] = (),
                        caa: bool = False) -> EvalResult:
    """Score spatial video predictions (module docstring). Columns: `index`, `prediction` (None/NaN: a failed
    call), `answer` (ReVSI: `ground_truth`; a letter, or a number for the `numeric_types`), the `group` column (the
    question type or category; pooled: several columns may be given, the figures then named
    `{column}.{value}_accuracy` and `order` naming `{column}.{value}`). `order`: the figures listed first
    (VLMEvalKit's order of its table); `caa` (pooled, SiteBenchVideo): SITE's class-adjusted accuracy beside each
    accuracy (`overall_caa`, `{value}_caa`)."""
    if aggregate not in AGGREGATIONS:
        raise ValueError(f"spatial video: aggregate {aggregate!r}; choose one of {', '.join(AGGREGATIONS)}")
    groups = (group,) if isinstance(group, str) else tuple(group)
    if aggregate != "pooled" and len(groups) != 1:
        raise ValueError(f"spatial video: aggregate {aggregate} takes one grouping column")
    if aggregate == "per_type":
        return _per_type(df, numeric_types, merge or {}, order, groups[0])
    if aggregate == "revsi":
        return _revsi(df, numeric_types, merge or {}, groups[0])
    result = score_spatial_mcq(df.sort_values("index", kind="stable"), groups=groups, caa=caa)
    result.scorer = SCORER
    result.metrics = _ordered(result.metrics, order)
    result.table = pd.DataFrame([result.metrics])
    if result.vlmevalkit is not None:
        result.vlmevalkit.metrics = _ordered(result.vlmevalkit.metrics, order)
    return result


# -- ReVSI -----------------------------------------------------------------------------------------------------------
def revsi_word(reply: Any) -> str:
    """ReVSI's reading of a reply: its first space-separated word, trailing dots removed."""
    return str(reply).strip().split(" ")[0].rstrip(".").strip()


def revsi_mra(word: str, answer: Any) -> float:
    """ReVSI's `_mean_relative_accuracy(float(pred), float(gt))`, 0.0 where it raises (not numbers, answer 0)."""
    try:
        prediction, target = float(word), float(answer)
        error = abs(prediction - target) / target
    except (TypeError, ValueError, ZeroDivisionError):
        return 0.0
    return sum(1.0 for t in VLMEVALKIT_THRESHOLDS if error <= 1 - t) / len(VLMEVALKIT_THRESHOLDS)


def _revsi_score(reply: str, numeric: bool, answer: Any) -> tuple[str, float]:
    word = revsi_word(reply)
    if numeric:
        return word, revsi_mra(word, answer)
    return word, float(word.lower() == str(answer).lower())


def _revsi_figures(types: list[str], scores: list[float], merge: Mapping[str, Sequence[str]]) -> dict[str, float]:
    values: dict[str, float] = {}
    for kind in sorted(set(types)):
        picked = [s for s, t in zip(scores, types) if t == kind]
        values[f"{kind}_accuracy"] = sum(picked) / len(picked)
    for merged, parts in merge.items():
        present = [values.pop(f"{p}_accuracy") for p in parts if f"{p}_accuracy" in values]
        if present:
            values[f"{merged}_accuracy"] = sum(present) / len(present)
    overall = sum(values.values()) / len(values) if values else 0.0
    return {"overall_accuracy": overall, **values}


def _revsi(df: pd.DataFrame, numeric_types: Sequence[str], merge: Mapping[str, Sequence[str]], group: str
           ) -> EvalResult:
    records, _ = keyed_records(df, ("index", "prediction", "ground_truth", group), "ReVSI")
    types = [str(r[group]) for r in records]
    numeric = [t in set(numeric_types) for t in types]
    failed = [is_missing(r["prediction"]) or VLMEVALKIT_FAIL_MARKER in str(r["prediction"]) for r in records]
    cells = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    read, scores, theirs, their_scores = [], [], [], []
    for row, is_numeric, fail, cell in zip(records, numeric, failed, cells):
        word, score = (None, 0.0) if fail else _revsi_score(str(row["prediction"]), is_numeric, row["ground_truth"])
        their, their_score = (None, 0.0) if fail else _revsi_score(str(cell), is_numeric, row["ground_truth"])
        read.append(word), scores.append(score), theirs.append(their), their_scores.append(their_score)
    metrics = _revsi_figures(types, scores, merge)
    nan_rows = [r["index"] for r, cell, f in zip(records, cells, failed)
                if not f and is_nan_cell(cell) and str(r["prediction"]) != "nan"]
    figure = VlmevalkitFigure(
        metrics=_revsi_figures(types, their_scores, merge), primary="overall_accuracy",
        differing=[ReadingDifference(r["index"], ours, their, score, their_score)
                   for r, ours, their, score, their_score, f in zip(records, read, theirs, scores, their_scores, failed)
                   if not f and (ours != their or score != their_score)],
        notes=[nan_note(nan_rows, "reads the reply itself")] if nan_rows else [],
    )  # fmt: skip
    counts = {"total": len(records), "scored": len(records), "mcq": numeric.count(False), "numeric": sum(numeric),
              "inference_errors": sum(failed)}
    notes = ["ReVSI's own reading: the reply's first word only (a reply that begins with anything but the letter or "
             "the number scores 0); overall_accuracy is the mean of the per-type figures"]
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], group: types, "task_type": ["NA" if n else "MCQ" for n in numeric],
        "extracted": pd.Series(read, dtype=object), "score": scores, "hit": [s == 1.0 for s in scores],
        "vlmevalkit": pd.Series(theirs, dtype=object), "vlmevalkit_score": their_scores,
    })  # fmt: skip
    return EvalResult(
        scorer=SCORER, metrics=metrics, primary="overall_accuracy", per_sample=per_sample,
        table=pd.DataFrame([metrics]), table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=figure,
    )  # fmt: skip
