"""How VLMEvalKit's VideoMMMU reads a reply (vlmeval/dataset/videommmu.py at e8e78f05, after MMMU's eval_utils):
`choice_of` for multiple-choice questions, `open_answers` and `open_right` for open ones. Written to give the same
readings, quirks included (each named where it is kept)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

__all__ = ["NO_REPLY", "NOT_FOUND", "choice_of", "choice_right", "number_strings", "normalised", "open_answers",
           "open_right"]

NO_REPLY = "API Error"  # VLMEvalKit's reading of an empty reply: the row is left out of every figure
NOT_FOUND = "No Answere Found"  # (sic) its reading of a reply naming no option
_STRIPPED = (",", ".", "!", "?", ";", ":", "'")
_COMMAS = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
_SCIENTIFIC = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")
_SIMPLE = re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])")
# the split VLMEvalKit applies after lower-casing: its "(?=[A-Z])" can then never match, so only newlines split
_SENTENCES = re.compile(r"\.\s(?=[A-Z])|\n")
_KEYS = (
    "could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ", "are ", "in total ", "total ",
    "identify ", "recognize ", "calculated as ", "counted as ", "measured as ", "observed as ", "concluded as ",
    "found to be ", "equals ", "determined to be ", "number of ", "value is ", "adds up to ", "have ", "has ",
)  # fmt: skip
_TRIVIAL = (":", ",", ".", "!", "?", ";", "'")


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def normalised(text: str) -> list[str | float]:
    """MMMU's `normalize_str`: a number rounded to 2 decimals, else the lower-cased text (one character padded with a
    space on either side, two forms, to avoid trivial matches)."""
    text = text.strip()
    if _is_number(text):
        return [round(float(text.replace(",", "")), 2)]
    text = text.lower()
    return [" " + text, text + " "] if len(text) == 1 else [text]


def number_strings(text: str) -> list[str]:
    """MMMU's `extract_numbers`: numbers with thousands commas, then scientific, then plain ones."""
    return _COMMAS.findall(text) + _SCIENTIFIC.findall(text) + _SIMPLE.findall(text)


def _key_parts(reply: str) -> list[str]:
    text = reply.strip().strip(".").lower()
    parts = _SENTENCES.split(text)
    found: list[str] = []
    for pos, part in enumerate(parts):
        keys = _KEYS + (("=",) if pos == len(parts) - 1 else ())
        shortest: str | None = None
        for key in keys:
            if key in part:
                tail = part.split(key)[-1].strip()
                if not shortest or len(tail) < len(shortest):  # an empty tail is replaced by the next one
                    shortest = tail
        if shortest and shortest.strip() not in _TRIVIAL:
            found.append(shortest)
    return found or [text]


def open_answers(reply: str) -> list[str | float] | str:
    """MMMU's `parse_open_response`: the normalised candidates of a reply (its key tails and the numbers in them), or
    NO_REPLY for an empty one."""
    if reply in (NO_REPLY, ""):
        return NO_REPLY
    parts = _key_parts(reply)
    candidates = parts + [number for part in parts for number in number_strings(part)]
    out: list[str | float] = []
    for candidate in candidates:
        for value in normalised(candidate):
            if value not in out:
                out.append(value)
    return out


def open_right(gold: str, candidates: Sequence[str | float]) -> bool:
    """MMMU's `eval_open`: a text candidate holding a normalised text answer, or a number candidate equal to it."""
    answers = normalised(gold)
    for candidate in candidates:
        if isinstance(candidate, str):
            if any(isinstance(a, str) and a in candidate for a in answers):
                return True
        elif candidate in answers:
            return True
    return False


def choice_of(reply: str, options: Sequence[str]) -> str:
    """VLMEvalKit's `parse_multi_choice_response`: the option letter a reply names, NOT_FOUND, or NO_REPLY."""
    if reply in (NO_REPLY, ""):
        return NO_REPLY
    letters = [chr(ord("A") + i) for i in range(len(options))]
    by_letter = dict(zip(letters, (str(o) for o in options)))
    for char in _STRIPPED:
        reply = reply.strip(char)
    text = f" {reply} "
    candidates: list[str] = []
    period = [c for c in letters if f"{c}." in text]
    colon = [c for c in letters if f"{c}:" in text]
    candidates = period + colon
    bracket = False
    if not candidates:
        candidates = [c for c in letters if f"({c})" in text]
        bracket = bool(candidates)
    if not candidates:
        candidates = [c for c in letters if f"{c} " in text]
    by_content = False
    if not candidates and len(text.split()) > 5:
        candidates = [c for c in letters if by_letter[c].lower() in text.lower()]
        by_content = bool(candidates)
    if not candidates:
        return NOT_FOUND
    if len(candidates) == 1:
        return candidates[0]
    if by_content:
        starts = [text.lower().rfind(by_letter[c].lower()) for c in candidates]
    elif period:
        starts = [text.rfind(f"{c}.") for c in candidates]
    elif colon:
        starts = [text.rfind(f"{c}:") for c in candidates]
    elif bracket:
        starts = [text.rfind(f"({c})") for c in candidates]
    else:
        starts = [text.rfind(f" {c} ") for c in candidates]
    return candidates[int(np.argmax(starts))]


def choice_right(gold: str, reading: str | list) -> bool:
    """MMMU's `eval_multi_choice`: the reading is the answer (a list reading, as a perception question's open
    parse gives, never is)."""
    return isinstance(reading, str) and reading == gold
