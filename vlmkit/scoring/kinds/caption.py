"""Caption metrics as VLMEvalKit reports them for COCO_VAL: BLEU-1..4, ROUGE-L and CIDEr, x100.

The figures come from the maintained COCO caption library, `pycocoevalcap` (an optional extra:
`pip install 'vlmkit[captions]'`), exactly as VLMEvalKit calls it: Bleu(4), Rouge() and Cider() over the raw
strings (no PTB tokenizer, so case and punctuation count; every string is split on white space), one candidate per
row (the prediction) against the row's reference list (the `answer` cell, a list literal, parsed, never evaluated).
BLEU is corpus BLEU with the closest reference length, ROUGE-L uses beta 1.2, CIDEr is the library's CIDEr-D with
document frequencies from this set's references. None of those three scorers needs Java.

Where vlmkit differs: a row whose call failed is scored as an empty caption (VLMEvalKit scores the text `nan`), and
counted under `inference_errors`; a row without any reference is a one-line error naming it (VLMEvalKit stops with
a traceback). The headline (`primary`) is CIDEr.

VLMEvalKit's figure (`EvalResult.vlmevalkit`) is the same scoring of the captions its xlsx round trip leaves: an empty
or `None`/`N/A` reply is the caption `nan` there; every such row is listed with its CIDEr on each side.
"""

from __future__ import annotations

import contextlib
import importlib
import io
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_blank, is_missing, listed
from vlmkit.core.errors import ConfigError, DataError
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.intervals import Interval, bootstrap, weighted_mean
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, POINTS, Scale
from vlmkit.scoring.common.vlmevalkit_replies import vlmevalkit_cells_of
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, parse_answer_list
from vlmkit.scoring.common.vlmevalkit_cells import NAN_TEXT, nan_note
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

INSTALL_HINT = "pip install 'vlmkit[captions]'"
BLEU = ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4")
METRICS = (*BLEU, "ROUGE_L", "CIDEr")
PRIMARY = "CIDEr"
CIDER_MOST = 1000.0  # CIDEr-D is at most 10 per image; x100 as VLMEvalKit reports it
ONE_IMAGE_NOTE = (
    "CIDEr weighs n-grams by how few images' references hold them: over a single image every weight is 0, so CIDEr "
    "is 0 whatever the caption"
)
SCALES = {"CIDEr": Scale(POINTS, out_of=CIDER_MOST)}
FAILED_NOTE = (
    "{n} row(s) whose call failed were scored as an empty caption (VLMEvalKit scores the text 'nan'): index {which}"
)


def missing_library() -> str | None:
    """One line saying how to install the caption metrics' library, or None when it is importable."""
    try:
        for module in ("pycocoevalcap.bleu.bleu", "pycocoevalcap.rouge.rouge", "pycocoevalcap.cider.cider"):
            importlib.import_module(module)
    except ImportError:
        return f"caption scoring (BLEU, ROUGE-L, CIDEr) needs pycocoevalcap, which is not installed: {INSTALL_HINT}"
    return None


def caption_references(cell: Any, where: str) -> list[str]:
    """The reference captions of an `answer` cell (a list literal, or one caption); blank ones are dropped. A cell
    with none is a one-line DataError naming `where`."""
    refs = [r for r in (parse_answer_list(cell) or []) if not is_blank(r)]
    if not refs:
        raise DataError(f"{where}: no reference caption (expected a list of captions, got {cell!r})")
    return refs


def coco_scores(refs: dict[str, list[str]], candidates: dict[str, str]) -> tuple[dict[str, float], pd.DataFrame]:
    """pycocoevalcap's Bleu(4), Rouge and Cider of candidates (key -> caption) against refs (key -> captions):
    the corpus figures x100 (METRICS) and a per-key table of the same figures x100 (sentence BLEU per key)."""
    problem = missing_library()
    if problem is not None:
        raise ConfigError(problem)
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    res = {key: [candidates[key]] for key in refs}
    metrics: dict[str, float] = {}
    per_key = pd.DataFrame(index=list(refs))
    with contextlib.redirect_stdout(io.StringIO()):  # Bleu prints its length statistics
        bleu, bleu_each = Bleu(4).compute_score(refs, res)
        rouge, rouge_each = Rouge().compute_score(refs, res)
        cider, cider_each = Cider().compute_score(refs, res)
    for name, corpus, each in zip(BLEU, bleu, bleu_each, strict=True):
        metrics[name] = float(corpus) * 100
        per_key[name] = [float(v) * 100 for v in each]
    metrics["ROUGE_L"] = float(rouge) * 100
    per_key["ROUGE_L"] = [float(v) * 100 for v in rouge_each]
    metrics["CIDEr"] = float(cider) * 100
    per_key["CIDEr"] = [float(v) * 100 for v in cider_each]
    return metrics, per_key


def score_captions(df: pd.DataFrame, *, source: str = "caption scoring") -> EvalResult:
    """Score captions. Columns: `index`, `prediction` (None/NaN = a failed call, scored as an empty caption),
    `answer` (the reference captions). `source` names the file in errors."""
    require_columns(df, ("index", "prediction", "answer"), "caption scoring")
    if len(df) == 0:
        raise ValueError("caption scoring: the predictions table has no rows")
    problem = missing_library()  # before reading any row: the one thing every user without the extra meets
    if problem is not None:
        raise ConfigError(problem)
    indices = df["index"].tolist()
    refs: dict[str, list[str]] = {}
    candidates: dict[str, str] = {}
    failed = []
    for pos, (index, pred, cell) in enumerate(zip(indices, df["prediction"], df["answer"], strict=True)):
        key = str(pos)  # VLMEvalKit keys rows by position
        refs[key] = caption_references(cell, f"{source}: row {pos} (index {index}), field answer")
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            failed.append(index)
            candidates[key] = ""
        else:
            candidates[key] = str(pred)
    metrics, per_key = coco_scores(refs, candidates)
    per_sample = per_key.reset_index(drop=True)
    per_sample.insert(0, "index", indices)
    notes = [FAILED_NOTE.format(n=len(failed), which=listed(failed))] if failed else []
    if len(df) == 1:
        notes.append(ONE_IMAGE_NOTE)
    counts = {"total": len(df), "scored": len(df), "inference_errors": len(failed)}
    figure = _vlmevalkit_figure(df["prediction"].tolist(), indices, refs, candidates, metrics, per_key)
    return EvalResult(
        scorer="caption", metrics=metrics, primary=PRIMARY, per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="score", counts=counts, notes=notes, scale=Scale(PERCENT), metric_scales=dict(SCALES),
        vlmevalkit=figure, interval=_cider_interval(per_sample["CIDEr"].to_numpy(dtype=float), metrics[PRIMARY]),
    )  # fmt: skip


def _cider_interval(per_image: np.ndarray, cider: float) -> Interval:
    """CIDEr is the mean of the images' CIDEr-D: a bootstrap of that mean over images, the n-gram weights (document
    frequencies over the whole set) held as computed, so the interval leaves out how they would move."""
    return bootstrap(weighted_mean(per_image / 100), len(per_image), PRIMARY, cider / 100, factor=100.0)


def _vlmevalkit_figure(
    predictions: list[Any], indices: list[Any], refs: dict[str, list[str]], candidates: dict[str, str],
    metrics: dict[str, float], per_key: pd.DataFrame,
) -> VlmevalkitFigure:
    """VLMEvalKit's figure: the same scorers on the captions its xlsx round trip leaves (an empty or `None` reply is
    the caption `nan`); its `Bleu` list is named Bleu_1..Bleu_4 as vlmkit names it. A failed call keeps vlmkit's
    empty caption on both sides (never listed). Computed again only when some caption differs."""
    theirs = dict(candidates)
    for pos, cell in enumerate(vlmevalkit_cells_of(predictions)):
        if cell is not None:
            theirs[str(pos)] = str(cell)
    changed = [key for key in candidates if theirs[key] != candidates[key]]
    if not changed:
        return VlmevalkitFigure(metrics=dict(metrics), primary=PRIMARY)
    their_metrics, their_per_key = coco_scores(refs, theirs)
    differing = [
        ReadingDifference(indices[int(key)], candidates[key], theirs[key], float(per_key.loc[key, PRIMARY]),
                          float(their_per_key.loc[key, PRIMARY]))
        for key in changed
    ]  # fmt: skip
    nan_rows = [indices[int(key)] for key in changed if theirs[key] == NAN_TEXT]
    notes = [nan_note(nan_rows, "scores the reply given")] if nan_rows else []
    notes.append("per-row scores listed are CIDEr x100 (CIDEr weighs n-grams by the whole set, so every row's "
                 "CIDEr can move a little when one caption changes)")  # fmt: skip
    return VlmevalkitFigure(metrics=their_metrics, primary=PRIMARY, differing=differing, notes=notes)
