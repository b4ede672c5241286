"""VMCBench (VMCBench_DEV, VMCBench_TEST) as VLMEvalKit scores it (vlmeval/dataset/utils/vmcbench.py): MMMU's
`parse_multi_choice_response` reads a letter, accuracy per `category` (the source benchmark) x100, and the means of
groups of categories (General, Reasoning, OCR, Doc & Chart), which are a catalog option (`category_means`).

Reading (`read_vmc_choice`), over the choices A..I the row fills (none when `A` is empty: a miss, as VLMEvalKit):
the reply's leading/trailing `, . ! ? ; : '` stripped (one character kind after another), padded with a space on each
side; candidates are the letters written `(X)` or `X. ` (method `bracket`); else those standing alone ` X ` (`spaced`);
else, for a reply of more than 5 words, the options whose text appears in it, any case (`option_text`). Several
candidates: the one found last (`(X)` / ` X ` / option text by its last position; a letter found only as `X. `
counts as position -1); ties go to the earlier letter.

Where vlmkit differs: a reply no step can read is scored by VLMEvalKit as a random letter (unseeded); vlmkit scores it
as a miss (`unparsed`, counted and noted). A failed call is a miss (`inference_errors`). A group mean is over the
categories of the group present in the predictions (VLMEvalKit fails when one is absent), and categories outside every
group are reported too. Figures are not rounded (VLMEvalKit rounds them to 2 decimals).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, nan_note, vlmevalkit_cells
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text

INFERENCE_ERROR = "inference_error"
CHOICES = "ABCDEFGHI"  # VLMEvalKit looks at the first nine option columns only
_STRIP = (",", ".", "!", "?", ";", ":", "'")
# VLMEvalKit's groups of VMCBench categories (report_vmc_acc), as the catalog passes them (`category_means`).
VMCBENCH_MEANS: dict[str, list[str]] = {
    "General": ["SEEDBench", "MMStar", "A-OKVQA", "VizWiz", "MMVet", "VQAv2", "OKVQA"],
    "Reasoning": ["MMMU", "MathVista", "ScienceQA", "RealWorldQA", "GQA", "MathVision"],
    "OCR": ["TextVQA", "OCRVQA"],
    "Doc & Chart": ["AI2D", "ChartQA", "DocVQA", "InfoVQA", "TableVQABench"],
}


def read_vmc_choice(response: str, options: Mapping[str, str]) -> tuple[str | None, str]:
    """(letter, method) read from a reply by MMMU's parse_multi_choice_response over `options` (letter -> text, in
    letter order); (None, "unparsed") where VLMEvalKit would pick a random letter."""
    for char in _STRIP:
        response = response.strip(char)
    response = f" {response} "
    choices = list(options)
    candidates = [c for c in choices if f"({c})" in response or f"{c}. " in response]
    method = "bracket"
    if not candidates:
        candidates = [c for c in choices if f" {c} " in response]
        method = "spaced"
    if not candidates and len(response.split()) > 5:
        low = response.lower()
        candidates = [c for c in choices if options[c].lower() in low]
        method = "option_text"
    if not candidates:
        return None, "unparsed"
    if len(candidates) == 1:
        return candidates[0], method
    if method == "bracket":
        positions = [response.rfind(f"({c})") for c in candidates]
    elif method == "spaced":
        positions = [response.rfind(f" {c} ") for c in candidates]
    else:
        positions = [response.lower().rfind(options[c].lower()) for c in candidates]
    return candidates[int(np.argmax(positions))], method


def _row_options(row: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for letter in CHOICES:
        text = cell_text(row.get(letter))
        if text is not None:
            out[letter] = text
    return out


def score_vmcbench(df: pd.DataFrame, category_means: Mapping[str, Sequence[str]] | None = None) -> EvalResult:
    """Score VMCBench predictions. Columns: `index`, `prediction` (None/NaN = a failed call), `answer` (a letter),
    `category`, option columns A..I. `category_means`: group name -> its categories (none by default; the catalog
    gives VMCBENCH_MEANS)."""
    what = "VMCBench scoring"
    require_columns(df, ("index", "prediction", "answer", "category"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    means = category_means or {}
    records = df.to_dict("records")
    extracted: list[str | None] = []
    methods: list[str] = []
    hits: list[bool] = []
    no_options: list[Any] = []
    for row in records:
        options = _row_options(row)
        pred = row["prediction"]
        if "A" not in options:
            no_options.append(row["index"])
            letter, method = None, "no_options"
        elif is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            letter, method = None, INFERENCE_ERROR
        else:
            letter, method = read_vmc_choice(str(pred), options)
        extracted.append(letter)
        methods.append(method)
        hits.append(letter is not None and letter == cell_text(row["answer"]))
    tally = Counter(methods)
    categories = df["category"].map(lambda v: cell_text(v) or "").to_numpy()
    metrics, per_category = _metrics(hits, categories, means)
    figure = _vlmevalkit_figure(df, records, extracted, hits, methods, categories, means)
    counts = {"total": len(df), "scored": len(df), "hits": int(sum(hits))}
    counts.update({m: tally[m] for m in ("bracket", "spaced", "option_text")})
    counts.update({
        "unparsed": tally["unparsed"], "inference_errors": tally[INFERENCE_ERROR], "no_options": len(no_options),
        "by_rule": tally["bracket"] + tally["spaced"] + tally["option_text"], "by_judge": 0,
        "unread": tally["unparsed"], "judge_errors": 0,
    })  # fmt: skip
    notes = []
    if tally["unparsed"]:
        notes.append(
            f"{tally['unparsed']} reply(ies) could not be read: scored as misses (VLMEvalKit scores a random letter)"
        )
    if no_options:
        notes.append(f"{len(no_options)} row(s) have no option A (misses, as in VLMEvalKit): index {listed(no_options)}")
    missing = {g: [m for m in ms if m not in per_category.index] for g, ms in means.items()}
    partial = [g for g, ms in missing.items() if ms and g in metrics]
    if partial:
        notes.append(f"group mean(s) {', '.join(partial)} are over the categories present only")
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(extracted, dtype=object),
                               "method": methods, "hit": hits})  # fmt: skip
    return EvalResult(
        scorer="vmcbench", metrics=metrics, primary="Overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip


def _metrics(hits: Sequence[bool], categories: np.ndarray, means: Mapping[str, Sequence[str]]
             ) -> tuple[dict[str, float], pd.Series]:
    """Overall, the group means and the per-category accuracies (x100), and the per-category series."""
    per_category = pd.Series(hits, dtype=float).groupby(categories).mean() * 100
    metrics: dict[str, float] = {"Overall": float(np.mean(hits) * 100)}
    for group, members in means.items():
        present = [per_category[m] for m in members if m in per_category.index]
        if present:
            metrics[group] = float(np.mean(present))
    metrics.update({str(cat): float(value) for cat, value in per_category.items()})
    return metrics, per_category


def _vlmevalkit_figure(df: pd.DataFrame, records: list[dict[str, Any]], extracted: list[str | None],
                       hits: list[bool], methods: list[str], categories: np.ndarray,
                       means: Mapping[str, Sequence[str]]) -> VlmevalkitFigure:
    """VLMEvalKit's figure: the same rule on the replies its xlsx round trip gives back (`nan` for an empty reply,
    `None`, ...), figures rounded to 2 decimals as it reports them; its random letter for an unread reply cannot be
    reproduced and counts as a miss here."""
    preds = df["prediction"].tolist()
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else p for p, f in zip(preds, failed)])
    theirs: list[str | None] = []
    their_hits: list[bool] = []
    nan_rows = []
    for row, cell, fail, method in zip(records, back, failed, methods):
        letter = None
        if not fail and method != "no_options":
            letter = read_vmc_choice(str(cell), _row_options(row))[0]
            if is_nan_cell(cell) and str(row["prediction"]) != "nan":
                nan_rows.append(row["index"])
        theirs.append(letter)
        their_hits.append(letter is not None and letter == cell_text(row["answer"]))
    metrics = {k: round(v, 2) for k, v in _metrics(their_hits, categories, means)[0].items()}
    notes = ["VLMEvalKit rounds these figures to 2 decimals; a reply it cannot read gets a random letter there (not "
             "reproducible), a miss here"]
    if nan_rows:
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    differing = [
        ReadingDifference(row["index"], ours, their, float(hit), float(their_hit))
        for row, ours, their, hit, their_hit, fail in zip(records, extracted, theirs, hits, their_hits, failed)
        if not fail and (ours != their or hit != their_hit)
    ]
    return VlmevalkitFigure(metrics=metrics, primary="Overall", differing=differing, notes=notes)
