"""Mean Relative Accuracy (MRA) and the number reading the spatial benchmarks share (VSI-Bench and its family,
SPBench, SparBench, ...), as VLMEvalKit computes them at e8e78f05
(vlmeval/dataset/utils/spatial_bench/cal_scores.py `mean_relative_accuracy`, matching_func.py `can_match_na`).

MRA of a numeric answer: the share of confidence thresholds t in {0.50, 0.55, ..., 0.95} for which the relative
error |pred - answer| / |answer| is at most 1 - t (the absolute error when the answer is 0). VLMEvalKit builds the
thresholds with `np.linspace(0.5, 0.95, int((0.95 - 0.5) / 0.05 + 2))` (10 points); they are rebuilt here with the
same float arithmetic, so a prediction exactly on a boundary scores as it does there.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from typing import Any


def _linspace(start: float, stop: float, count: int) -> tuple[float, ...]:
    """numpy.linspace's values for a scalar range: i * step + start, the last one set to `stop`."""
    if count == 1:
        return (start,)
    step = (stop - start) / (count - 1)
    values = [i * step + start for i in range(count)]
    values[-1] = stop
    return tuple(values)


def mra_thresholds(start: float = 0.5, end: float = 0.95, interval: float = 0.05) -> tuple[float, ...]:
    """VLMEvalKit's confidence thresholds: `int((end - start) / interval + 2)` points from start to end."""
    return _linspace(start, end, int((end - start) / interval + 2))


VLMEVALKIT_THRESHOLDS: tuple[float, ...] = mra_thresholds()


def relative_error(prediction: float, answer: float) -> float:
    """|prediction - answer| / |answer|; the absolute error when the answer is 0 (VLMEvalKit's abs_dist_norm)."""
    if answer == 0.0:
        return abs(prediction - answer)
    return abs((prediction - answer) / answer)


def mean_relative_accuracy(prediction: float, answer: float,
                           thresholds: Sequence[float] = VLMEVALKIT_THRESHOLDS) -> float:
    """Share of thresholds t with relative_error(prediction, answer) <= 1 - t; 0.0 when either is NaN."""
    if not thresholds:
        raise ValueError("mean_relative_accuracy needs at least one threshold")
    error = relative_error(float(prediction), float(answer))
    return sum(1.0 for t in thresholds if error <= 1 - t) / len(thresholds)


# ---- number reading (VLMEvalKit's can_match_na) ----

_ZERO_WIDTH = re.compile(r"[\u200b\u200c\u200d\ufeff]")
_NUMBER = r"[-+]?(?:\d*\.\d+|\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_TAGGED_NUMBER = re.compile(
    rf"<\s*answer\b[^>]*>\s*({_NUMBER})(?:[^\d<][^<]*)?<\s*/\s*answer\s*>",
    flags=re.IGNORECASE | re.DOTALL,
)
# num2words(0..20), the words VLMEvalKit turns into digits before reading
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                 "twenty")
_NUMBER_WORD_RE = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", flags=re.IGNORECASE)
_THINK_END = re.compile(r"</\s*think\s*>", flags=re.IGNORECASE)
_THINK_START = re.compile(r"<\s*think\s*>", flags=re.IGNORECASE)


def _digits_for_words(text: str) -> str:
    return _NUMBER_WORD_RE.sub(lambda m: str(_NUMBER_WORDS.index(m.group(1).lower())), text)


def _after_think(text: str) -> str:
    for pattern in (_THINK_END, _THINK_START):
        matches = list(pattern.finditer(text))
        if matches:
            return text[matches[-1].end():].strip()
    return text


def _candidate(value: Any) -> str | None:
    """The text VLMEvalKit reads: a list's first item, a list literal's first item, else the text itself;
    None where VLMEvalKit's reader fails (a bracketed text that is not a Python literal)."""
    if isinstance(value, list):
        return str(value[0]) if value else None
    text = str(value)
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            parsed = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if isinstance(parsed, list) and parsed:
            return str(parsed[0])
    return text


def to_number(text: Any) -> float | None:
    """The number a reply states, read as VLMEvalKit's can_match_na reads it, or None.

    Order: English number words zero..twenty become digits; a number leading an <answer>...</answer> block; else
    the last number after the last </think> (or <think>); else, when that tail holds none, the only distinct
    number of the whole text or its last one.
    """
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    raw = _candidate(text)
    if raw is None:
        return None
    body = _digits_for_words(_ZERO_WIDTH.sub("", raw.strip()))
    tagged = _TAGGED_NUMBER.search(body)
    if tagged:
        return float(tagged.group(1))
    tail_numbers = _NUMBER_RE.findall(_after_think(body))
    if tail_numbers:
        return float(tail_numbers[-1])
    numbers = _NUMBER_RE.findall(body)
    if not numbers:
        return None
    distinct = sorted(set(numbers))
    return float(distinct[0]) if len(distinct) == 1 else float(numbers[-1])
