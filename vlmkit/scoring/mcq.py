"""Multiple-choice scoring: answer-letter extraction and (circular) accuracy.

Extraction (`extract_choice`) tries, in order, and never guesses at random:

1. exact    - the stripped prediction is just a letter: `B`, `b`, `(B)`, `[B]`, `B.`, `B)`, `B:`; or the letter with
              a separator followed by that same option's text (`B. cat`, `(B) cat`). `B) dog` where option B is
              not "dog" is not exact; it falls through to the later steps.
2. marker   - the last `Answer:` / `answer is` / `答案` / `答案是` / `答案为` marker (English case-insensitive,
              optional `option`, brackets, `**`) directly followed by an upper-case letter that is an option.
              `answer is not A` has no letter after the marker and does not count.
3. cue      - VLMEvalKit's option inference: replace `.()[],:;!*#{}` with spaces and split; exactly one distinct
              option letter occurs as a token and its first occurrence is among the last tokens (VLMEvalKit's
              test `position > n_tokens - 5`, i.e. one of the last four tokens). Letters inside words never count.
4. option_text - VLMEvalKit's text inference: the prediction is at most twice the total option-text length and
              exactly one option text (lower-cased) is a substring of the lower-cased prediction.
5. fuzzy    - only when asked: the smallest Levenshtein distance between the prediction and `L`, the option text
              or `L. text`; ties go to the alphabetically first letter. Not part of VLMEvalKit; counted apart.

Otherwise `(None, "unparsed")`. Empty predictions, VLMEvalKit's refusal phrases and its API-failure marker are
unparsed without trying fuzzy matching. Only letters whose option text is present and non-empty count.

Differences from VLMEvalKit's exact matching (deliberate, reported per run in `counts["differs_from_vlmevalkit"]`):
steps 1 and 2 run before option inference (so `The answer is A, not B` gives A where VLMEvalKit finds two letters
and gives up), a lone lower-case letter is accepted, a refusal or a stray `Z` token does not stop the search, and
fuzzy matching exists at all.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein

from vlmkit.cells import is_missing, listed
from vlmkit.scoring.breakdown import (
    MMBENCH_ABBREVIATIONS,
    group_means,
    require_columns,
    split_category_table,
)
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text

METHODS = ("exact", "marker", "cue", "option_text", "fuzzy", "unparsed")
INFERENCE_ERROR = "inference_error"  # the `method` of a row whose prediction is missing (per_sample only)
CIRCULAR_BASE = 1_000_000
_LETTERS = frozenset(string.ascii_uppercase)

_EXACT_RE = re.compile(r"[(\[（]?\s*([A-Za-z])\s*[)\]）]?\s*[.:：。]?")
_EXACT_WITH_TEXT_RE = re.compile(r"[(\[（]?([A-Z])(?:[)\]）]|[.:：])+\s*(.+)", re.S)
_MARKER_RE = re.compile(
    r"(?:(?i:answer)\s*(?:(?i:is)\b|[:：])|答案\s*(?:是|为|為)?)"
    r"[\s:：]*(?:\*\*|__)?[\s:：]*(?:(?i:option|choice)\s*|选项\s*)?[(\[（【]?\s*([A-Z])(?![A-Za-z])"
)
_CUE_PUNCT = str.maketrans({c: " " for c in ".()[],:;!*#{}"})
_REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_REFUSAL_RE = re.compile("|".join(map(re.escape, _REFUSALS)))  # any(r in pred for r in _REFUSALS), in one scan


def clean_options(options: Mapping[str, Any]) -> dict[str, str]:
    """Keep single upper-case letters whose text is present and non-empty, in letter order."""
    out: dict[str, str] = {}
    for key in sorted(options):
        if key not in _LETTERS:
            continue
        text = cell_text(options[key])
        if text is not None and text.strip():
            out[key] = text
    return out


def _norm_option_text(text: str) -> str:
    return text.strip().rstrip(".。").strip().lower()


def _exact(pred: str, options: dict[str, str]) -> str | None:
    m = _EXACT_RE.fullmatch(pred)
    if m:
        letter = m.group(1).upper()
        return letter if letter in options else None
    m = _EXACT_WITH_TEXT_RE.fullmatch(pred)
    if m and m.group(1) in options:
        if _norm_option_text(m.group(2)) == _norm_option_text(options[m.group(1)]):
            return m.group(1)
    return None


def _marker(pred: str, options: dict[str, str]) -> str | None:
    found = None
    for m in _MARKER_RE.finditer(pred):
        if m.group(1) in options:
            found = m.group(1)
    return found


def _cue(pred: str, options: dict[str, str]) -> str | None:
    tokens = pred.translate(_CUE_PUNCT).split()
    present = [c for c in options if c in tokens]
    if len(present) == 1 and tokens.index(present[0]) > len(tokens) - 5:
        return present[0]
    return None


def _option_text(pred: str, options: dict[str, str]) -> str | None:
    low = pred.lower()
    if len(low) > 2 * sum(len(t) for t in options.values()):
        return None
    cands = [c for c, t in options.items() if t.lower() in low]
    return cands[0] if len(cands) == 1 else None


def _fuzzy(pred: str, options: dict[str, str]) -> str | None:
    best: tuple[int, str] | None = None
    for letter, text in options.items():
        dist = min(Levenshtein.distance(pred, cand) for cand in (letter, text, f"{letter}. {text}"))
        if best is None or (dist, letter) < best:
            best = (dist, letter)
    return best[1] if best else None


def _extract(prediction: str, options: dict[str, str], fuzzy: bool) -> tuple[str | None, str]:
    letter, method, _ = _extract_both(prediction.strip(), options, fuzzy)
    return letter, method


_UNSET: Any = object()


def _extract_both(pred: str, options: dict[str, str], fuzzy: bool) -> tuple[str | None, str, str | None]:
    """(letter, method) of `_extract` and the letter of `_vlmevalkit` for one stripped prediction, sharing the
    work the two have in common (the refusal checks, the cue tokens, the option-text search)."""
    if not pred or not options or VLMEVALKIT_FAIL_MARKER in pred or _REFUSAL_RE.search(pred):
        return None, "unparsed", None
    tokens = pred.translate(_CUE_PUNCT).split()
    present = [c for c in options if c in tokens]
    cue = None
    text_letter = _UNSET
    if len(present) == 1:
        if tokens.index(present[0]) > len(tokens) - 5:
            cue = present[0]
        vlm = cue
    elif not present and "Z" in tokens:
        vlm = None
    else:
        vlm = text_letter = _option_text(pred, options)
    letter = _exact(pred, options)
    if letter is not None:
        return letter, "exact", vlm
    letter = _marker(pred, options)
    if letter is not None:
        return letter, "marker", vlm
    if cue is not None:
        return cue, "cue", vlm
    if text_letter is _UNSET:
        text_letter = _option_text(pred, options)
    if text_letter is not None:
        return text_letter, "option_text", vlm
    if fuzzy:
        letter = _fuzzy(pred, options)
        if letter is not None:
            return letter, "fuzzy", vlm
    return None, "unparsed", vlm


def extract_choice(prediction: str, options: Mapping[str, str], fuzzy: bool = False) -> tuple[str | None, str]:
    """(letter or None, method); method is one of METHODS. See the module docstring for the rules."""
    if is_missing(prediction):
        return None, "unparsed"
    return _extract(str(prediction), clean_options(options), fuzzy)


def vlmevalkit_choice(prediction: str, options: Mapping[str, str]) -> str | None:
    """VLMEvalKit's own exact matching (option inference, then text inference), for comparison only.
    Its refusal answer `Z` and its stray-`Z` rule are returned as None (a miss either way)."""
    if is_missing(prediction):
        return None
    return _vlmevalkit(str(prediction).strip(), clean_options(options))


def _vlmevalkit(pred: str, options: dict[str, str]) -> str | None:
    if not options or VLMEVALKIT_FAIL_MARKER in pred or any(r in pred for r in _REFUSALS):
        return None
    tokens = pred.translate(_CUE_PUNCT).split()
    present = [c for c in options if c in tokens]
    if len(present) == 1:
        return present[0] if tokens.index(present[0]) > len(tokens) - 5 else None
    if not present and "Z" in tokens:
        return None
    return _option_text(pred, options)


def _normalise_target(value: Any) -> str | None:
    text = cell_text(value)
    if text is None:
        return None
    m = _EXACT_RE.fullmatch(text.strip())
    return m.group(1).upper() if m else text.strip()



def _option_texts(values: list[Any]) -> list[str | None]:
    """One option column as `clean_options` keeps it: the cell's text, or None when missing or blank."""
    out: list[str | None] = []
    for value in values:
        text = value if type(value) is str else cell_text(value)
        out.append(text if text is not None and text.strip() else None)
    return out


def _integer_indices(indices: list[Any]) -> np.ndarray:
    out = np.empty(len(indices), dtype=np.int64)
    for pos, idx in enumerate(indices):
        try:
            as_float = float(idx)
            if not as_float.is_integer():
                raise ValueError
            out[pos] = int(as_float)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(
                f"circular MCQ: row {pos}, field `index`: {idx!r} is not an integer "
                f"(circular groups are index % {CIRCULAR_BASE})"
            ) from None
    return out


def score_mcq(df: pd.DataFrame, *, circular: bool, fuzzy: bool = False) -> EvalResult:
    """Score MCQ predictions. Figures are fractions (0..1) as VLMEvalKit reports MCQ accuracy.

    Columns: `index`, `prediction` (None/NaN = inference error), `answer` (a letter), option columns A..Z,
    optional `split`, `category`, `l2-category`. Circular: group = index % 1e6; a group is a hit only if every
    row of it is right; figures are over groups, with the main row's (index == group) split and categories.
    """
    what = "circular MCQ" if circular else "MCQ"
    require_columns(df, ("index", "prediction", "answer"), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    letters = sorted(c for c in df.columns if isinstance(c, str) and c in _LETTERS)
    option_columns = [_option_texts(df[letter].tolist()) for letter in letters]
    indices = df["index"].tolist()
    preds = df["prediction"].tolist()
    targets = df["answer"].tolist()

    n = len(df)
    extracted: list[str | None] = [None] * n
    methods: list[str] = [""] * n
    hits = np.zeros(n, dtype=bool)
    invalid: list[Any] = []
    differs = 0
    target_of: dict[str, str | None] = {}  # _normalise_target of each distinct text answer
    rows = zip(*option_columns) if option_columns else iter(lambda: (), None)
    for i, texts in zip(range(n), rows):
        options = {letter: text for letter, text in zip(letters, texts) if text is not None}
        raw = targets[i]
        if type(raw) is str:
            target = target_of.get(raw, _UNSET)
            if target is _UNSET:
                target = target_of[raw] = _normalise_target(raw)
        else:
            target = _normalise_target(raw)
        if target is None or target not in options:
            invalid.append(indices[i])
            target = None
        pred = preds[i]
        if type(pred) is not str:
            if is_missing(pred):
                methods[i] = INFERENCE_ERROR
                continue
            pred = str(pred)
        if VLMEVALKIT_FAIL_MARKER in pred:
            methods[i] = INFERENCE_ERROR
            continue
        letter, method, vlm = _extract_both(pred.strip(), options, fuzzy)
        extracted[i], methods[i] = letter, method
        hits[i] = target is not None and letter == target
        if letter != vlm:
            differs += 1

    per_sample = pd.DataFrame(
        {"index": indices, "extracted": pd.Series(extracted, dtype=object), "method": methods, "hit": hits}
    )
    counts: dict[str, int] = {"total": n}
    tally = Counter(methods)
    for method in (*METHODS, INFERENCE_ERROR):
        key = "inference_errors" if method == INFERENCE_ERROR else method
        counts[key] = tally[method]
    counts["invalid_target"] = len(invalid)
    counts["differs_from_vlmevalkit"] = differs
    notes: list[str] = []
    if invalid:
        notes.append(
            f"{len(invalid)} row(s) have an answer that is not one of their options (scored as misses): "
            f"index {listed(invalid)}"
        )
    if counts["fuzzy"]:
        notes.append(f"{counts['fuzzy']} prediction(s) matched only by fuzzy (Levenshtein) matching, not in VLMEvalKit")
    if differs:
        notes.append(
            f"vlmkit's extraction gives a different letter than VLMEvalKit's exact matching for {differs} row(s) "
            "(answer markers checked first; see vlmkit.scoring.mcq)"
        )

    keep = [c for c in ("split", "l2-category", "category") if c in df.columns]
    units = pd.DataFrame({c: df[c].to_numpy() for c in keep})
    units["hit"] = hits
    if circular:
        ints = _integer_indices(indices)
        dup = pd.Series(ints).duplicated()
        if dup.any():
            repeated = sorted(set(ints[dup.to_numpy()].tolist()))
            raise ValueError(f"circular MCQ: duplicate `index` value(s): {listed(repeated)}")
        groups = ints % CIRCULAR_BASE
        per_sample["group"] = groups
        group_hit = pd.Series(hits).groupby(groups).all().reindex(groups).to_numpy(dtype=bool)
        per_sample["group_hit"] = group_hit
        is_main = ints == groups
        units = units.loc[is_main].reset_index(drop=True)
        units["hit"] = group_hit[is_main]
        counts["groups"] = len(units)
        orphan = sorted(set(groups.tolist()) - set(groups[is_main].tolist()))
        if orphan:
            n_orphan = int(np.isin(groups, orphan).sum())
            counts["orphan_rows"] = n_orphan
            notes.append(
                f"{n_orphan} row(s) belong to circular groups without a main row (index == group) and are not "
                f"reported: group {listed(orphan)}"
            )
    counts["scored"] = len(units)
    counts["hits"] = int(units["hit"].sum())
    if len(units) == 0:
        raise ValueError(f"{what}: no main rows (index < {CIRCULAR_BASE}) to report")

    table = split_category_table(units, "hit", groups=("l2-category", "category"), rename=MMBENCH_ABBREVIATIONS)
    metrics = group_means(units, "hit", groups=("l2-category", "category"), rename=MMBENCH_ABBREVIATIONS)
    return EvalResult(
        scorer="mcq_circular" if circular else "mcq",
        metrics=metrics,
        primary="Overall",
        per_sample=per_sample,
        table=table,
        table_suffix="acc",
        counts=counts,
        notes=notes,
        scale=Scale(FRACTION),
    )
