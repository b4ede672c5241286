"""VCR (Visual Caption Restoration) scoring: exact match and Jaccard of each masked span, as VLMEvalKit scores them.

A VCR row's `answer` is the list of the texts masked in its image (a JSON or Python list literal). For each span,
VLMEvalKit (vlmeval/dataset/vcr.py) takes the reply after its last `Assistant: `, tokenises reply and span
(spaCy; see vlmkit.scoring.benchmarks.vcr_tokens for vlmkit's tokens), and among the reply's n-grams as long as the span
(in tokens) that share at least one token with it, picks the one whose text (tokens joined by a space for English,
by nothing for Chinese) has the highest difflib ratio to the span (the first such n-gram on ties; none when every
ratio is 0). Then:
- exact_match: 1 when that n-gram's tokens equal the span's tokens, else 0;
- jaccard: |n-gram tokens & span tokens| / |n-gram tokens | span tokens| (as sets);
- both 0 when no n-gram qualifies, and for every span of a reply that reads as a refusal (`I can't`, `I cannot`,
  `sorry` in any case, `无法`, `抱歉`).
`Exact_Match` and `Jaccard` are means over all spans of all rows (fractions, 0..1, as VLMEvalKit reports them).

Where vlmkit differs, on purpose: a missing prediction (inference failed) scores 0 on its spans and is counted
(`inference_errors`; VLMEvalKit stops with an AttributeError); a reply's reasoning (`<think>...</think>`) is never
read; `answer` cells are parsed, never evaluated as code, and a plain text cell is one span (VLMEvalKit requires a
list); an empty span scores 0 (VLMEvalKit's n-gram search is undefined for it).

VLMEvalKit's figure (EvalResult.vlmevalkit): the same spans scored on the reply as VLMEvalKit reads it, reasoning
included (a `<think>` block written into the reply is searched for n-grams and for refusal words there), with the
same tokens (vlmkit's spaCy-like rules, or spaCy itself with `tokenizer_backend="spacy"`); rows whose exact-match
score differs are listed. A failed call is a miss on both sides. Not computed (None, and a note says why) where
VLMEvalKit stops: a reply its xlsx round trip turns into NaN or a number (an empty reply, `None`, `N/A`...), which
its scorer splits without str().
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from difflib import SequenceMatcher

import numpy as np
import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.core.reasoning import answer_part
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.common.text_norm import parse_answer_list
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, not_text
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure
from vlmkit.scoring.benchmarks.vcr_tokens import LANGUAGES, tokenizer

__all__ = ["SpanMatch", "best_match", "is_refusal", "reply_text", "score_vcr"]

ASSISTANT_MARKER = "Assistant: "
INFERENCE_ERROR = "inference_error"
REFUSAL = "refusal"


@dataclass(frozen=True)
class SpanMatch:
    span: str  # the masked text
    best: str  # the reply n-gram that matched it best ("" when none)
    similarity: float  # difflib ratio of best to span
    exact_match: float  # 1.0 or 0.0
    jaccard: float


def reply_text(prediction: str) -> str:
    """The part of a reply VLMEvalKit reads: its answer (reasoning dropped) after the last `Assistant: `."""
    return answer_part(prediction).split(ASSISTANT_MARKER)[-1]


def is_refusal(text: str) -> bool:
    """VLMEvalKit's rough_filter, negated: the reply declines (then every span of the row scores 0)."""
    return "I can't" in text or "I cannot" in text or "sorry" in text.lower() or "无法" in text or "抱歉" in text


def best_match(span: str, reply: str, language: str, tokenizer_backend: str = "rules") -> SpanMatch:
    """The reply n-gram that restores span best and its scores (module docstring)."""
    tokenize = tokenizer(language, tokenizer_backend)
    return _best(span, tokenize(span), tokenize(reply), language)


def _best(span: str, span_tokens: list[str], reply_tokens: list[str], language: str) -> SpanMatch:
    n = len(span_tokens)
    if n == 0 or len(reply_tokens) < n:
        return SpanMatch(span, "", 0.0, 0.0, 0.0)
    joiner = "" if language == "zh" else " "
    wanted = set(span_tokens)
    best_ratio, best_text, best_gram = 0.0, "", None
    for start in range(len(reply_tokens) - n + 1):
        gram = reply_tokens[start : start + n]
        if wanted.isdisjoint(gram):
            continue
        text = joiner.join(gram)
        ratio = SequenceMatcher(None, text, span).ratio()
        if ratio > best_ratio:
            best_ratio, best_text, best_gram = ratio, text, gram
    if best_gram is None:
        return SpanMatch(span, "", 0.0, 0.0, 0.0)
    got = set(best_gram)
    union = got | wanted
    jaccard = len(got & wanted) / len(union) if union else 0.0
    return SpanMatch(span, best_text, best_ratio, float(best_gram == span_tokens), jaccard)


def score_vcr(df: pd.DataFrame, *, language: str, tokenizer_backend: str = "rules") -> EvalResult:
    """Score VCR predictions. Columns: `index`, `prediction` (None/NaN = inference error), `answer` (the list of
    masked texts). `language`: `en` or `zh` (the tokens and how an n-gram's text is joined)."""
    if language not in LANGUAGES:
        raise ValueError(f"VCR: language {language!r}; choose one of {', '.join(LANGUAGES)}")
    tokenize = tokenizer(language, tokenizer_backend)  # a missing backend fails here, before any row
    require_columns(df, ("index", "prediction", "answer"), "VCR")
    if len(df) == 0:
        raise ValueError("VCR: the predictions table has no rows")
    indices = df["index"].tolist()
    exact_all: list[float] = []
    jaccard_all: list[float] = []
    rows: list[dict[str, object]] = []
    span_scores: list[tuple[list[float], list[float]]] = []
    no_spans: list[object] = []
    methods: list[str] = []
    for idx, pred, answer in zip(indices, df["prediction"].tolist(), df["answer"].tolist()):
        spans = parse_answer_list(answer) or []
        if not spans:
            no_spans.append(idx)
        if failed_call(pred):
            method, matches = INFERENCE_ERROR, [SpanMatch(s, "", 0.0, 0.0, 0.0) for s in spans]
        else:
            method, matches = _matches(reply_text(str(pred)), spans, tokenize, language)
        methods.append(method)
        exact = [m.exact_match for m in matches]
        jacc = [m.jaccard for m in matches]
        span_scores.append((exact, jacc))
        exact_all += exact
        jaccard_all += jacc
        rows.append({
            "index": idx,
            "method": method,
            "spans": len(matches),
            "score": float(np.mean(exact)) if exact else 0.0,
            "jaccard": float(np.mean(jacc)) if jacc else 0.0,
            "matched": [m.best for m in matches],
        })  # fmt: skip
    if not exact_all:
        raise ValueError("VCR: no row has a masked text in `answer`; nothing to score")
    metrics = {"Exact_Match": float(np.mean(exact_all)), "Jaccard": float(np.mean(jaccard_all))}
    counts = {
        "total": len(df),
        "spans": len(exact_all),
        "exact_spans": int(sum(exact_all)),
        "refusals": methods.count(REFUSAL),
        "inference_errors": methods.count(INFERENCE_ERROR),
        "rows_without_spans": len(no_spans),
        "scored": len(df),
    }
    notes: list[str] = []
    if no_spans:
        notes.append(f"{len(no_spans)} row(s) have no masked text in `answer` (they add no span): index "
                     f"{listed(no_spans)}")
    if counts["inference_errors"]:
        notes.append(f"{counts['inference_errors']} row(s) have no prediction (inference failed); their spans score 0 "
                     "(VLMEvalKit stops on such a row)")
    figure, why_not = vcr_vlmevalkit_figure(df, rows, span_scores, tokenize, language)
    if why_not:
        notes.append(why_not)
    return EvalResult(
        scorer="vcr",
        metrics=metrics,
        primary="Exact_Match",
        per_sample=pd.DataFrame(rows),
        table=pd.DataFrame([metrics]),
        table_suffix="score",
        counts=counts,
        notes=notes,
        scale=Scale(FRACTION),
        vlmevalkit=figure,
    )


def _matches(reply: str, spans: list[str], tokenize: Callable[[str], list[str]],
             language: str) -> tuple[str, list[SpanMatch]]:
    """(method, one SpanMatch per span) for the text of a reply that is read."""
    if is_refusal(reply):
        return REFUSAL, [SpanMatch(s, "", 0.0, 0.0, 0.0) for s in spans]
    reply_tokens = tokenize(reply)
    return "match", [_best(s, tokenize(s), reply_tokens, language) for s in spans]


def vcr_vlmevalkit_figure(
    df: pd.DataFrame, rows: list[dict[str, object]], span_scores: list[tuple[list[float], list[float]]],
    tokenize: Callable[[str], list[str]], language: str,
) -> tuple[VlmevalkitFigure | None, str | None]:
    """(VLMEvalKit's figure, None) or (None, why it stops) (module docstring). `span_scores`: vlmkit's (exact
    match, Jaccard) per span of each row."""
    predictions = df["prediction"].tolist()
    stops = [idx for idx, stop in zip(df["index"].tolist(), not_text(predictions)) if stop]
    if stops:
        return None, (f"VLMEvalKit's figure not computed: {len(stops)} reply(ies) come back from its xlsx as NaN or a "
                      f"number (empty, 'None', 'N/A'...) and its scorer stops on them; index {listed(stops)}")
    exact_all: list[float] = []
    jaccard_all: list[float] = []
    differing: list[ReadingDifference] = []
    for row, mine, pred, answer in zip(rows, span_scores, predictions, df["answer"].tolist()):
        spans = parse_answer_list(answer) or []
        if failed_call(pred):
            exact, jacc = [0.0] * len(spans), [0.0] * len(spans)
        else:
            theirs = str(pred).split(ASSISTANT_MARKER)[-1]
            if theirs == reply_text(str(pred)):  # the text vlmkit read: the same scores
                exact, jacc = mine
            else:
                _, matches = _matches(theirs, spans, tokenize, language)
                exact, jacc = [m.exact_match for m in matches], [m.jaccard for m in matches]
                mean = float(np.mean(exact)) if exact else 0.0
                if mean != row["score"] or jacc != mine[1]:
                    differing.append(ReadingDifference(row["index"], row["matched"], [m.best for m in matches],
                                                       row["score"], mean))  # type: ignore[arg-type]
        exact_all += exact
        jaccard_all += jacc
    metrics = {"Exact_Match": float(np.mean(exact_all)), "Jaccard": float(np.mean(jaccard_all))}
    notes = ["the reply as VLMEvalKit reads it: reasoning included; tokens as vlmkit's (spaCy's rules)"]
    return VlmevalkitFigure(metrics=metrics, primary="Exact_Match", differing=differing, notes=notes), None
