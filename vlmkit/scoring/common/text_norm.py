"""Text helpers shared by the scorers: cell -> text, answer lists, and the standard VQA
punctuation / number-word / article / contraction normalisation (the GT-Vision-Lab VQA evaluation rules that
VLMEvalKit also uses, reproduced quirks included so that scores match).
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from typing import Any

from vlmkit.core.cells import is_missing

# A string VLMEvalKit stores as the prediction when an API call failed. vlmkit never writes it, but prediction
# files made by VLMEvalKit contain it; such rows count as inference errors.
VLMEVALKIT_FAIL_MARKER = "Failed to obtain answer via API"


def cell_text(value: Any) -> str | None:
    """A table cell as text, or None when missing. Integral floats (pandas reads an int column with gaps as
    float) print without the `.0`, so an option `3` stays `3`."""
    if is_missing(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_answer_list(value: Any) -> list[str] | None:
    """An `answer` cell as a list of strings: a list, a JSON list or a Python list literal
    (e.g. `"['a', 'b']"`), or one plain string. None when the cell is missing. Never evaluates code."""
    if is_missing(value):
        return None
    if isinstance(value, (list, tuple)):
        return [t for t in (cell_text(v) for v in value) if t is not None]
    text = cell_text(value)
    assert text is not None
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        parsed: Any = None
        try:
            parsed = json.loads(stripped)
        except (ValueError, RecursionError):  # a list nested too deep for json is text too
            try:
                parsed = ast.literal_eval(stripped)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                parsed = None
        if isinstance(parsed, list):
            return [t for t in (cell_text(v) for v in parsed) if t is not None]
    return [text]


# --- VQA normalisation (official VQA eval rules) -------------------------------------------------------------

_PUNCT = [";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!"]
_COMMA_BETWEEN_DIGITS = re.compile(r"(\d)(,)(\d)")
# The official pattern is "(?!<=\d)(\.)(?!\d)" - a mistyped look-behind, so it removes every period not followed
# by a digit - and it is applied with `re.UNICODE` passed as the *count* argument, i.e. at most 32 periods are
# removed. Both quirks are kept on purpose: scores must match the published ones.
_PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)")
_PERIOD_MAX_SUBS = 32

_NUMBER_WORDS = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}  # fmt: skip
_ARTICLES = frozenset({"a", "an", "the"})

# Canonical contractions of the official map; every key of that map (as reachable after lower-casing) is one of
# these with exactly one apostrophe removed.
_CANONICAL_CONTRACTIONS = (
    "ain't aren't can't could've couldn't didn't doesn't don't hadn't hasn't haven't he'd he's how'd how'll how's "
    "isn't it'd it'll ma'am mightn't might've mustn't must've needn't not've o'clock oughtn't shan't should've "
    "shouldn't somebody'll somebody's someone'd someone'll someone's something'd something'll that's there'd "
    "there're there's they'd they'll they're they've 'twas wasn't we've weren't what'll what're what's what've "
    "when's where'd where's where've who'd who'll who's who've why'll why're why's won't would've wouldn't y'all "
    "you'd you'll you're you've couldn't've hadn't've he'd've it'd've mightn't've she'd've shouldn't've "
    "somebody'd've someone'd've something'd've there'd've they'd've we'd've who'd've wouldn't've y'all'll "
    "you'd've 'ow's'at y'all'd've"
)


@lru_cache(maxsize=1)
def _contractions() -> dict[str, str]:
    table: dict[str, str] = {}
    for canon in _CANONICAL_CONTRACTIONS.split():
        for pos, ch in enumerate(canon):
            if ch == "'":
                table[canon[:pos] + canon[pos + 1 :]] = canon
    table["somebody'd"] = "somebodyd"  # a reversed entry in the official map, kept for identical results
    return table


# VLMEvalKit's own copy (vlmeval/smp/misc.py at e8e78f05) has the look-behind right: a period right after a digit
# stays (`5.` is kept, where the official rule gives `5`). Its figure uses this one (vlmevalkit_punctuation).
_PERIOD_VLMEVALKIT = re.compile(r"(?<!\d)\.(?!\d)")


def process_punctuation(text: str) -> str:
    """The VQA punctuation rule: each mark is deleted when it touches a space somewhere in the text (or the text
    has a digit,digit comma), else replaced by a space; then periods not followed by a digit are removed."""
    return _punctuation(text, _PERIOD)


def vlmevalkit_punctuation(text: str) -> str:
    """VLMEvalKit's copy of the rule: the same, except that a period after a digit stays (`5.`)."""
    return _punctuation(text, _PERIOD_VLMEVALKIT)


def _punctuation(text: str, period: re.Pattern[str]) -> str:
    out = text
    has_digit_comma = _COMMA_BETWEEN_DIGITS.search(text) is not None
    for p in _PUNCT:
        if p not in out:
            continue
        if has_digit_comma or (p + " ") in text or (" " + p) in text:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return period.sub("", out, _PERIOD_MAX_SUBS)


def process_digit_article(text: str) -> str:
    """Lower-case, number words -> digits, drop articles, restore contractions (`dont` -> `don't`)."""
    contractions = _contractions()
    words = []
    for word in text.lower().split():
        word = _NUMBER_WORDS.get(word, word)
        if word in _ARTICLES:
            continue
        words.append(contractions.get(word, word))
    return " ".join(words)
