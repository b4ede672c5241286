"""Open-answer VQA scoring: VQA soft score, ANLS, relaxed accuracy, exact match, OCRBench.

Per-row functions return 0..1; `score_vqa` reports x100 (VLMEvalKit's scale), except OCRBench, which reports
sums of hits (Final Score out of 1000 for the full benchmark). `answer` cells hold one string or a list given as
a JSON / Python list literal; they are parsed with json / ast.literal_eval, never evaluated as code.

Every result carries VLMEvalKit's figure for the same replies (`EvalResult.vlmevalkit`; its rules in
vlmkit.scoring.kinds.vqa_vlmevalkit): the same metrics, from its own per-row rules on the text its xlsx round trip
leaves (an empty or `None` reply is `nan` there), with every row whose score differs (and the text each scored). vlmkit's headline
keeps vlmkit's reading; ANLS is the official script's in both. With a `split` column (ChartQA: human, augmented)
the summary table is VLMEvalKit's `_acc.csv` row: one column per split and `Overall`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.anls import anls
from vlmkit.scoring.common.breakdown import group_means, require_columns, split_category_table, split_series
from vlmkit.scoring.common.vlmevalkit_replies import vlmevalkit_cells_of
from vlmkit.scoring.common.vlmevalkit_cells import NAN_TEXT, is_nan_cell, nan_note, vlmevalkit_texts
from vlmkit.scoring.kinds import vqa_vlmevalkit
from vlmkit.scoring.common.headline_interval import headline_interval
from vlmkit.scoring.common.intervals import wilson
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure
from vlmkit.scoring.common.text_norm import (
    VLMEVALKIT_FAIL_MARKER,
    parse_answer_list,
    process_digit_article,
    process_punctuation,
)

METRICS = ("vqa_score", "anls", "relaxed", "exact", "ocrbench")

# OCRBench: the categories that make up each of its five reported groups.
OCRBENCH_GROUPS: dict[str, tuple[str, ...]] = {
    "Text Recognition": (
        "Regular Text Recognition", "Irregular Text Recognition", "Artistic Text Recognition",
        "Handwriting Recognition", "Digit String Recognition", "Non-Semantic Text Recognition",
    ),
    "Scene Text-centric VQA": ("Scene Text-centric VQA",),
    "Doc-oriented VQA": ("Doc-oriented VQA",),
    "Key Information Extraction": ("Key Information Extraction",),
    "Handwritten Mathematical Expression Recognition": ("Handwritten Mathematical Expression Recognition",),
}  # fmt: skip
OCRBENCH_SPACE_INSENSITIVE = "Handwritten Mathematical Expression Recognition"
ANLS_NOTE = (
    "ANLS divides the edit distance of the normalised texts by the longer raw (unstripped) length, as the official "
    "DocVQA/InfographicVQA evaluation script (rrc.cvc.uab.es/?ch=17) and VLMEvalKit do, so figures compare with "
    "published ones"
)


def normalize_vqa_answer(text: str) -> str:
    """Standard VQA normalisation: punctuation, lower case, number words -> digits, articles dropped,
    contractions restored (`a dog.` -> `dog`, `Two` -> `2`, `dont` -> `don't`)."""
    text = str(text).replace("\n", " ").replace("\t", " ").strip()
    return process_digit_article(process_punctuation(text))


def vqa_soft_score(prediction: str, answers: Sequence[str]) -> float:
    """VQA accuracy: for each ground truth, min(1, (number of the *other* ground truths equal to the
    prediction) / 3), averaged, all normalised. With a single ground truth that formula is always 0, so vlmkit
    scores a single ground truth as normalised exact match (1 or 0) instead."""
    if not answers:
        return 0.0
    pred = normalize_vqa_answer(prediction)
    gts = [normalize_vqa_answer(a) for a in answers]
    if len(gts) == 1:
        return 1.0 if gts[0] == pred else 0.0
    n_equal = sum(g == pred for g in gts)
    total = 0.0
    for g in gts:
        others = n_equal - (1 if g == pred else 0)
        total += min(1.0, others / 3)
    return total / len(gts)


def _to_number(text: str) -> float | None:
    text = text.strip()
    try:
        value = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def relaxed_accuracy(prediction: str, answers: Sequence[str], tolerance: float = 0.05) -> float:
    """ChartQA relaxed accuracy: when both are numbers (a trailing % divides by 100) and the target is not 0,
    correct if |pred - target| / |target| <= tolerance; else case-insensitive exact match. Best over answers."""
    pred = str(prediction).strip()
    pred_num = _to_number(pred)
    for answer in answers:
        target = str(answer).strip()
        target_num = _to_number(target)
        if pred_num is not None and target_num:
            if abs(pred_num - target_num) / abs(target_num) <= tolerance:
                return 1.0
        elif pred.lower() == target.lower():
            return 1.0
    return 0.0


def exact_match_ignoring_case(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when the stripped prediction equals one answer, ignoring case only (the `exact` VQA metric): `Paris.`
    is not `paris`. text_qa's `exact_match_bare_words` also drops punctuation and articles."""
    pred = str(prediction).strip().lower()
    return 1.0 if any(str(a).strip().lower() == pred for a in answers) else 0.0


def ocrbench_hit(prediction: str, answers: Sequence[str], *, space_insensitive: bool = False) -> bool:
    """OCRBench: some answer is a substring of the prediction (lower-cased, newlines as spaces); for handwritten
    math, spaces are removed instead and case is kept."""
    if space_insensitive:
        pred = str(prediction).strip().replace("\n", " ").replace(" ", "")
        return any(str(a).strip().replace("\n", " ").replace(" ", "") in pred for a in answers)
    pred = str(prediction).lower().strip().replace("\n", " ")
    return any(str(a).lower().strip().replace("\n", " ") in pred for a in answers)


_ROW_SCORERS: dict[str, Callable[[str, Sequence[str]], float]] = {
    "vqa_score": vqa_soft_score,
    "anls": anls,
    "relaxed": relaxed_accuracy,
    "exact": exact_match_ignoring_case,
}


def _ocrbench_scales(categories: list[object]) -> dict[str, Scale]:
    """Each OCRBench figure counts hits, one point per row: out of the rows it covers (1000 for the full set;
    `Final Score Norm` is the score / 10, out of 100 only there)."""
    rows = pd.Series(categories).map(str).value_counts()
    scales = {}
    for group, cats in OCRBENCH_GROUPS.items():
        scales[group] = Scale(POINTS, out_of=float(sum(rows.get(c, 0) for c in cats)))
    for cat in OCRBENCH_GROUPS["Text Recognition"]:
        scales[cat] = Scale(POINTS, out_of=float(rows.get(cat, 0)))
    scales["Final Score"] = Scale(POINTS, out_of=float(len(categories)))
    scales["Final Score Norm"] = Scale(POINTS, out_of=len(categories) / 10)
    return scales


def score_vqa(df: pd.DataFrame, metric: str = "vqa_score") -> EvalResult:
    """Score open answers with one of METRICS. Columns: `index`, `prediction` (None/NaN = inference error, a 0),
    `answer` (string or list literal; missing = invalid target, a 0), optional `split`, `category`
    (required for "ocrbench": the ten OCRBench category names)."""
    if metric not in METRICS:
        raise ValueError(f"VQA scoring: unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    what = f"VQA scoring ({metric})"
    require_columns(df, ("index", "prediction", "answer"), what)
    if metric == "ocrbench":
        require_columns(df, ("category",), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")

    indices = df["index"].tolist()
    preds = df["prediction"].tolist()
    answer_cells = df["answer"].tolist()
    categories = df["category"].tolist() if "category" in df.columns else [None] * len(df)
    if metric == "ocrbench":
        known = {c for cats in OCRBENCH_GROUPS.values() for c in cats}
        bad = next((i for i, c in enumerate(categories) if str(c) not in known), None)
        if bad is not None:
            raise ValueError(
                f"VQA scoring (ocrbench): row {bad}, field `category`: {categories[bad]!r} is not an OCRBench "
                f"category ({', '.join(sorted(known))})"
            )

    scores = np.zeros(len(df), dtype=float)
    errors, invalid, single_gt = [], [], 0
    for i, (pred, cell) in enumerate(zip(preds, answer_cells, strict=True)):
        answers = parse_answer_list(cell)
        if not answers:
            invalid.append(indices[i])
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            errors.append(indices[i])
            continue
        if not answers:
            continue
        if metric == "ocrbench":
            no_space = categories[i] == OCRBENCH_SPACE_INSENSITIVE
            scores[i] = float(ocrbench_hit(pred, answers, space_insensitive=no_space))
        else:
            if metric == "vqa_score" and len(answers) == 1:
                single_gt += 1
            scores[i] = _ROW_SCORERS[metric](str(pred), answers)

    per_sample = pd.DataFrame({"index": indices, "score": scores})
    counts = {
        "total": len(df),
        "scored": len(df),
        "inference_errors": len(errors),
        "invalid_target": len(invalid),
    }
    notes = []
    if invalid:
        notes.append(f"{len(invalid)} row(s) have no answer to compare with (scored 0): index {listed(invalid)}")
    if single_gt:
        counts["single_answer"] = single_gt
        notes.append(
            f"{single_gt} row(s) have a single ground truth and were scored by normalised exact match "
            "(VLMEvalKit's leave-one-out formula gives such rows 0)"
        )
    if metric == "anls":
        notes.append(ANLS_NOTE)
    figure_scores, figure = _vlmevalkit_figure(df, metric, categories, scores)

    if metric == "ocrbench":
        per_sample["hit"] = scores.astype(bool)
        counts["hits"] = int(scores.sum())
        metrics, table = _ocrbench_metrics(scores, categories)
        figure.metrics, _ = _ocrbench_metrics(figure_scores, categories)
        return EvalResult(
            scorer="ocrbench", metrics=metrics, primary="Final Score", per_sample=per_sample, table=table,
            table_suffix="score", counts=counts, notes=notes, scale=Scale(POINTS),
            metric_scales=_ocrbench_scales(categories), vlmevalkit=figure,
            interval=wilson(scores, "Final Score", factor=float(len(scores))),
        )  # fmt: skip

    metrics, table = _vqa_metrics(df, scores)
    figure.metrics, _ = _vqa_metrics(df, figure_scores)
    return EvalResult(
        scorer=f"vqa_{metric}" if metric != "vqa_score" else "vqa_score",
        metrics=metrics,
        primary="Overall",
        per_sample=per_sample,
        table=table,
        table_suffix="acc",
        counts=counts,
        notes=notes,
        scale=Scale(PERCENT),
        vlmevalkit=figure,
        interval=headline_interval(_with_split(df, scores), "score", "Overall", factor=100.0),
    )


def _ocrbench_metrics(scores: np.ndarray, categories: list[object]) -> tuple[dict[str, float], pd.DataFrame]:
    """OCRBench's five group sums, Final Score and Final Score Norm (the table), plus the Text Recognition parts."""
    by_cat = pd.Series(scores).groupby(pd.Series(categories).map(str)).sum()
    metrics: dict[str, float] = {}
    for group, cats in OCRBENCH_GROUPS.items():
        metrics[group] = float(sum(by_cat.get(c, 0.0) for c in cats))
    metrics["Final Score"] = float(sum(metrics.values()))
    metrics["Final Score Norm"] = metrics["Final Score"] / 10
    table = pd.DataFrame([metrics])
    for cat in OCRBENCH_GROUPS["Text Recognition"]:
        metrics[cat] = float(by_cat.get(cat, 0.0))
    return metrics, table


def _with_split(df: pd.DataFrame, scores: np.ndarray) -> pd.DataFrame:
    data = pd.DataFrame({"score": scores})
    if "split" in df.columns:
        data["split"] = df["split"].to_numpy()
    return data


def _vqa_metrics(df: pd.DataFrame, scores: np.ndarray) -> tuple[dict[str, float], pd.DataFrame]:
    """Mean x100 over all rows (`Overall`) and per category; with a `split` column also per split, and the table is
    VLMEvalKit's `_acc.csv` layout: one row, a column per split (sorted), then `Overall` (ChartQA: augmented, human,
    Overall). Without one, the table has vlmkit's split/category layout (one row, split `none`)."""
    data = pd.DataFrame({"score": scores})
    for col in ("split", "category"):
        if col in df.columns:
            data[col] = df[col].to_numpy()
    metrics = group_means(data, "score", groups=("category",), scale=100.0)
    if "split" not in data.columns:
        return metrics, split_category_table(data, "score", groups=("category",), scale=100.0)
    splits = split_series(data)
    by_split = (data["score"].astype(float) * 100).groupby(splits).mean()
    row = {str(name): float(by_split[name]) for name in sorted(by_split.index, key=str)}
    for name, value in row.items():
        metrics.setdefault(name, value)
    row["Overall"] = metrics["Overall"]
    return metrics, pd.DataFrame([row])


def _vlmevalkit_figure(
    df: pd.DataFrame, metric: str, categories: list[object], scores: np.ndarray
) -> tuple[np.ndarray, VlmevalkitFigure]:
    """VLMEvalKit's per-row scores of the same replies (vlmkit.scoring.kinds.vqa_vlmevalkit) and its figure, metrics
    left for the caller to aggregate as vlmkit's are; every row whose score differs is listed, with the text each
    scored (a reply the round trip changes without changing its score is counted in a note, not listed). A failed call
    is a miss on both sides and never listed (VLMEvalKit's file holds its failure message there)."""
    preds = df["prediction"].tolist()
    seen = vlmevalkit_cells_of(preds)
    answers = vlmevalkit_texts(df["answer"].tolist())
    figure_scores = np.zeros(len(df), dtype=float)
    differing: list[ReadingDifference] = []
    nan_rows, inf_rows, period_rows = [], [], []
    for i, (index, pred, cell, answer) in enumerate(zip(df["index"].tolist(), preds, seen, answers, strict=True)):
        if cell is None:  # a failed call: a miss on both sides, never listed (vlmevalkit_replies)
            continue
        text = str(cell)
        if metric == "ocrbench":
            hit = vqa_vlmevalkit.ocrbench(text, vqa_vlmevalkit.vlmevalkit_answers(answer),
                                          space_insensitive=categories[i] == OCRBENCH_SPACE_INSENSITIVE)  # fmt: skip
            figure_scores[i] = float(hit)
        else:
            figure_scores[i] = vqa_vlmevalkit.row_score(metric, text, answer)
        mine = None if is_missing(pred) else str(pred)
        if is_nan_cell(cell) and (mine or "").strip().lower() != NAN_TEXT:
            nan_rows.append(index)
        if not math.isclose(scores[i], figure_scores[i], abs_tol=1e-12):
            differing.append(ReadingDifference(index, mine, text, float(scores[i]), float(figure_scores[i])))
            if is_nan_cell(cell):
                continue
            if metric == "relaxed" and "inf" in text.lower():
                inf_rows.append(index)
            elif metric == "vqa_score" and re.search(r"\d\.", text + answer):
                period_rows.append(index)
    notes = []
    if nan_rows:
        notes.append(nan_note(nan_rows, "scores them as the reply given"))
    if inf_rows:
        notes.append(
            f"{len(inf_rows)} row(s) with an infinite number: VLMEvalKit's relaxed accuracy divides inf by inf "
            f"(NaN, a miss); vlmkit compares such answers as text: index {listed(inf_rows)}"
        )
    if period_rows:
        notes.append(
            f"{len(period_rows)} row(s) with a period after a digit: VLMEvalKit's copy of the VQA punctuation rule "
            f"keeps it (`5.`), the official rule vlmkit follows drops it: index {listed(period_rows)}"
        )
    if metric == "exact":
        notes.append("VLMEvalKit takes the best of several answers for OCRVQA and their mean for GQA; both have one "
                     "answer a row, where the two agree (the figure takes the best)")  # fmt: skip
    primary = "Final Score" if metric == "ocrbench" else "Overall"
    return figure_scores, VlmevalkitFigure(metrics={}, primary=primary, differing=differing, notes=notes)
