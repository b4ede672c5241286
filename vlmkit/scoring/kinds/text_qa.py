"""Free-text QA scoring for custom datasets: normalised exact match and contains by default; BLEU-1..4 and
ROUGE-1/2/L (R, P, F) on request. All figures are x100 (VLMEvalKit's VQA scale); the primary metric is
`exact_match` (when requested, else the first metric asked for).

- Normalisation (exact match, contains): Unicode NFKC, case-folded, punctuation (Unicode category P*) removed,
  English articles a/an/the dropped, whitespace collapsed; spaces between CJK characters are removed, so
  `北京 。` equals `北京`. `exact_match` = normalised prediction equals a normalised reference; `contains` = a
  normalised reference occurs in the normalised prediction (an empty reference never counts).
- BLEU (as EvalScope: nltk's sentence_bleu with individual weights, so `bleu-2` is the bigram precision alone,
  not cumulative BLEU-2): `bleu-n` = BP x clipped n-gram precision; BP = 1 when the prediction is longer than the
  closest reference, else exp(1 - r/c); no smoothing (a prediction with no matching n-gram scores 0).
- ROUGE-1/2: n-gram overlap recall/precision/F1; ROUGE-L: longest common subsequence recall/precision/F1 (plain
  F1; the `rouge`/`rouge_chinese` packages weight ROUGE-L F by P/R, so their F can differ slightly; R and P match).
  With several references the best one per metric is taken.
- Tokens for BLEU/ROUGE: lower-cased; each CJK character is one token (or jieba words when segmenter is "jieba",
  or "auto" and jieba is installed - it is never required); other text splits into runs of letters/digits;
  punctuation is dropped.

Rows whose `answer` is missing are not scored (counted as `no_target`); a missing prediction is an inference
error and scores 0. `answer` may be one string or a list of acceptable strings (a JSON list in the data).

VLMEvalKit has no scorer for custom free-text QA, so the result carries no VLMEvalKit figure (`vlmevalkit` None).
"""

from __future__ import annotations

import importlib.util
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing, listed
from vlmkit.scoring.common.breakdown import require_columns, split_series
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text

QA_METRICS = ("em", "contains", "bleu", "rouge")
DEFAULT_QA_METRICS = ("em", "contains")
SEGMENTERS = ("auto", "char", "jieba")
BLEU_ORDERS = (1, 2, 3, 4)
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]|[^\W{_CJK}_]+")
_CJK_SPACE_RE = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_HAS_CJK_RE = re.compile(rf"[{_CJK}]")
_ARTICLES = frozenset({"a", "an", "the"})


# -- normalisation and per-row metrics --------------------------------------------------------------------------
# ASCII text (most answers) drops its punctuation through one str.translate; other text is read per character.
_ASCII_PUNCTUATION = {c: " " for c in range(128) if unicodedata.category(chr(c)).startswith("P")}


def bare_words(text: str) -> str:
    """The text's bare words, the form exact match and contains compare: NFKC, case-folded, every punctuation mark
    and the articles a/an/the removed, spaces between CJK characters dropped (`The cat's-toy!` -> `cat s toy`).
    Stricter than vlmkit.scoring.common.math_answers.casefold_trim, which keeps punctuation inside the text."""
    text = str(text)
    if text.isascii():  # NFKC leaves ASCII as it is, casefold is lower, and there is no CJK to join
        return " ".join(w for w in text.lower().translate(_ASCII_PUNCTUATION).split() if w not in _ARTICLES)
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    words = [w for w in text.split() if w not in _ARTICLES]
    return _CJK_SPACE_RE.sub("", " ".join(words))


def exact_match_bare_words(prediction: str, references: Sequence[str]) -> float:
    """1.0 when the prediction's bare words equal some reference's (the `exact_match` metric). Looser than VQA's
    `exact` (vlmkit.scoring.kinds.vqa.exact_match_ignoring_case), which keeps punctuation and articles."""
    return _exact(bare_words(prediction), [bare_words(r) for r in references])


def contains_bare_words(prediction: str, references: Sequence[str]) -> float:
    """1.0 when some non-empty reference's bare words occur in the prediction's (the `contains` metric)."""
    return _contains(bare_words(prediction), [bare_words(r) for r in references])


def _exact(pred: str, refs: Sequence[str]) -> float:  # both normalised
    return 1.0 if pred in refs else 0.0


def _contains(pred: str, refs: Sequence[str]) -> float:  # both normalised; an empty reference never counts
    return 1.0 if any(ref and ref in pred for ref in refs) else 0.0


@lru_cache(maxsize=1)
def jieba_available() -> bool:
    return importlib.util.find_spec("jieba") is not None


def effective_segmenter(segmenter: str) -> str:
    """"char" or "jieba": what a requested segmenter means on this machine."""
    if segmenter not in SEGMENTERS:
        raise ValueError(f"QA scoring: unknown segmenter {segmenter!r}; choose one of {', '.join(SEGMENTERS)}")
    if segmenter == "jieba" and not jieba_available():
        raise ValueError("QA scoring: segmenter 'jieba' asked for, but jieba is not installed (pip install jieba)")
    if segmenter == "auto":
        return "jieba" if jieba_available() else "char"
    return segmenter


def tokenize(text: str, segmenter: str = "char") -> list[str]:
    """Tokens for BLEU/ROUGE (segmenter "char" or "jieba"; see the module docstring)."""
    text = unicodedata.normalize("NFKC", str(text)).lower()
    if segmenter == "jieba" and _HAS_CJK_RE.search(text):
        import jieba  # optional; only when installed and asked for

        return [tok for piece in jieba.lcut(text) for tok in _TOKEN_RE.findall(piece) if tok.strip()]
    return _TOKEN_RE.findall(text)


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu(prediction: Sequence[str], references: Sequence[Sequence[str]]) -> dict[int, float]:
    """Individual n-gram BLEU for n = 1..4 over token lists (0..1)."""
    c = len(prediction)
    if c == 0 or not references:
        return {n: 0.0 for n in BLEU_ORDERS}
    r = min((len(ref) for ref in references), key=lambda length: (abs(length - c), length))
    bp = 1.0 if c > r else math.exp(1 - r / c)
    out = {}
    for n in BLEU_ORDERS:
        cand = _ngrams(prediction, n)
        total = sum(cand.values())
        if total == 0:
            out[n] = 0.0
            continue
        best: Counter = Counter()
        for ref in references:
            for gram, count in _ngrams(ref, n).items():
                best[gram] = max(best[gram], count)
        clipped = sum(min(count, best[gram]) for gram, count in cand.items())
        out[n] = bp * clipped / total
    return out


def _prf(overlap: int, n_ref: int, n_pred: int) -> tuple[float, float, float]:
    recall = overlap / n_ref if n_ref else 0.0
    precision = overlap / n_pred if n_pred else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return recall, precision, f1


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge(prediction: Sequence[str], reference: Sequence[str]) -> dict[str, tuple[float, float, float]]:
    """ROUGE-1, -2 and -L as (recall, precision, F1) over token lists (0..1)."""
    out = {}
    for n in (1, 2):
        pred, ref = _ngrams(prediction, n), _ngrams(reference, n)
        overlap = sum(min(count, ref[gram]) for gram, count in pred.items())
        out[f"rouge-{n}"] = _prf(overlap, sum(ref.values()), sum(pred.values()))
    out["rouge-l"] = _prf(_lcs(prediction, reference), len(reference), len(prediction))
    return out


# -- the table --------------------------------------------------------------------------------------------------
def references(value: Any) -> list[str]:
    if type(value) is str:  # the usual cell
        return [value] if value.strip() else []
    if isinstance(value, (list, tuple, np.ndarray)):
        return [t for t in (cell_text(v) for v in value) if t is not None and t.strip()]
    text = cell_text(value)
    return [text] if text is not None and text.strip() else []


def metric_names(metrics: Sequence[str]) -> list[str]:
    names: list[str] = []
    for metric in metrics:
        if metric == "em":
            names.append("exact_match")
        elif metric == "contains":
            names.append("contains")
        elif metric == "bleu":
            names += [f"bleu-{n}" for n in BLEU_ORDERS]
        else:
            names += [f"rouge-{k}-{m}" for k in ("1", "2", "l") for m in ("r", "p", "f")]
    return names


def _row_scores(pred: str, refs: list[str], metrics: Sequence[str], segmenter: str) -> dict[str, float]:
    scores: dict[str, float] = {}
    if "em" in metrics or "contains" in metrics:
        pred_n, refs_n = bare_words(pred), [bare_words(r) for r in refs]  # once for both
        if "em" in metrics:
            scores["exact_match"] = _exact(pred_n, refs_n)
        if "contains" in metrics:
            scores["contains"] = _contains(pred_n, refs_n)
    if "bleu" in metrics or "rouge" in metrics:
        pred_tokens = tokenize(pred, segmenter)
        ref_tokens = [tokenize(r, segmenter) for r in refs]
        if "bleu" in metrics:
            scores.update({f"bleu-{n}": v for n, v in bleu(pred_tokens, ref_tokens).items()})
        if "rouge" in metrics:
            per_ref = [rouge(pred_tokens, ref) for ref in ref_tokens]
            for kind in ("rouge-1", "rouge-2", "rouge-l"):
                r, p, f = max((x[kind] for x in per_ref), key=lambda t: (t[2], t[0]))
                scores.update({f"{kind}-r": r, f"{kind}-p": p, f"{kind}-f": f})
    return scores


def score_text_qa(
    df: pd.DataFrame, metrics: Sequence[str] = DEFAULT_QA_METRICS, *, segmenter: str = "auto"
) -> EvalResult:
    """Score free-text answers. Columns: `index`, `prediction` (None/NaN = inference error), `answer` (missing =
    not scored), optional `split`. The summary table has one row per split and one column per metric (x100)."""
    metrics = tuple(dict.fromkeys(metrics))
    unknown = [m for m in metrics if m not in QA_METRICS]
    if unknown or not metrics:
        choices = ", ".join(QA_METRICS)
        raise ValueError(f"QA scoring: unknown metric(s) {unknown or '(none given)'}; choose from {choices}")
    seg = effective_segmenter(segmenter) if ("bleu" in metrics or "rouge" in metrics) else None
    require_columns(df, ("index", "prediction", "answer"), "QA scoring")
    names = metric_names(metrics)
    rows: list[dict[str, Any]] = []
    no_target: list[Any] = []
    errors = 0
    splits = split_series(df).tolist()
    for idx, pred, answer, split in zip(df["index"].tolist(), df["prediction"].tolist(), df["answer"].tolist(), splits):
        refs = references(answer)
        if not refs:
            no_target.append(idx)
            continue
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            errors += 1
            scores = {name: 0.0 for name in names}
        else:
            scores = _row_scores(str(pred), refs, metrics, seg or "char")
        rows.append({"index": idx, "split": split, **scores})
    data = pd.DataFrame(rows, columns=["index", "split", *names])
    per_sample = data.drop(columns="split")
    counts = {"total": len(df), "scored": len(rows), "no_target": len(no_target), "inference_errors": errors}
    notes: list[str] = []
    if no_target:
        notes.append(f"{len(no_target)} row(s) have no reference answer and are not scored: index {listed(no_target)}")
    if seg is not None:
        how = "jieba words" if seg == "jieba" else "one token per CJK character (jieba not used)"
        notes.append(f"BLEU/ROUGE tokens: {how}; BLEU-n is the individual n-gram score, as EvalScope reports it")
    primary = "exact_match" if "exact_match" in names else names[0]
    if not rows:
        notes.append("no row has a reference answer: nothing scored")
        metrics_out = {name: float("nan") for name in names}
        return EvalResult("text_qa", metrics_out, primary, per_sample, None, "acc", counts, notes, Scale(PERCENT))
    counts["hits"] = int(data["exact_match"].sum()) if "exact_match" in data else 0
    metrics_out = {name: float(data[name].mean()) * 100 for name in names}
    table = data.groupby("split", sort=True)[names].mean().mul(100).reset_index()
    return EvalResult(
        scorer="text_qa",
        metrics=metrics_out,
        primary=primary,
        per_sample=per_sample,
        table=table,
        table_suffix="acc",
        counts=counts,
        notes=notes,
        scale=Scale(PERCENT),
        also=tuple(name for name in names if name != primary),
    )

