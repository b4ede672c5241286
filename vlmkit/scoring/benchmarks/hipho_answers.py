"""Reading HiPhO's cells and replies (VLMEvalKit's hipho.py / hipho_verifier.py at e8e78f05): the list cells
(`answer`, `marking`, `points`), the boxed answers of a solution, a grader's score, and vlmkit's rule check of an
answer against the reference.

- List cells: a JSON list, or a Python list literal (what pandas writes for a list; VLMEvalKit would keep that text
  as one item), else the text as one item; blank or `nan` is no item. `points`: numbers, blank = [0.0] (as
  VLMEvalKit's _safe_parse_points_field).
- Boxed answers (VLMEvalKit's last_n_boxed_strings / remove_boxed / get_answer_str): the last n `\\boxed{...}` (or
  `\\fbox{...}`) groups by brace matching, in reading order, missing ones filled with "" at the front; an `\\fbox`
  group is read as "" (VLMEvalKit's remove_boxed gives None there and its grading then fails the whole row).
  The reference is its last boxed group, or the whole text without one.
- Grader's score (VLMEvalKit's _extract_score_from_response): the last `\\boxed{x}` (then `boxed{x}`) whose content
  float() reads, or whose last unsigned number does; else the last unsigned number of the reply; else 0.0; rounded
  to 2 decimals. A minus sign is never read.
- Rule check (vlmkit's, standing in for VLMEvalKit's mathd / sympy / math_verify chain, which needs sympy parsing,
  math_verify and pylatexenc): the two answers equal after normalising (spaces, `$`, `\\left`/`\\right`, `\\!`, `\\,`,
  an enclosing `\\text{}`, `\\dfrac`/`\\tfrac`, a trailing `.`), or both read as numbers (vlmkit's math_value:
  plain numbers, fractions, roots, pi, scientific notation) and equal as VLMEvalKit's are_equal_under_sympy compares
  numbers: both rounded to the fewer significant decimals of the two, then a relative difference within 2e-3 x 1.01.
  What the rules do not match goes to the xverify judge (VLMEvalKit's last step), which is told to accept answers
  that are mathematically equivalent.
"""

from __future__ import annotations

import ast
import json
import re
from decimal import Decimal, localcontext
from typing import Any

from vlmkit.core.cells import is_blank
from vlmkit.scoring.common.math_answers import math_value

PRECISION = 2e-3  # VLMEvalKit's are_equal_under_sympy default precision
_BOXED = (re.compile(r"\\boxed\{([^}]+)\}", re.I), re.compile(r"boxed\{([^}]+)\}", re.I))
_DIGITS = re.compile(r"\d+\.?\d*")
_NUMBER = re.compile(r"[0-9]*\.?[0-9]+")
_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")
_DROPPED = ("\\left", "\\right", "\\!", "\\,", "\\;", "\\:", "$", " ", "\n", "\t")


def list_cell(value: Any) -> list[Any]:
    """A list cell (`answer`, `marking`, `answer_type`, `unit`) as a list (module docstring)."""
    if isinstance(value, list):
        return value
    if is_blank(value):
        return []
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        for read in (json.loads, ast.literal_eval):
            try:
                parsed = read(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(parsed, list):
                return parsed
        return [text]
    return [text] if text != "nan" else []


def points_cell(value: Any) -> list[float]:
    """VLMEvalKit's _safe_parse_points_field: the points of each answer (blank: [0.0]). A ValueError for text that
    is no number or list of numbers."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [0.0] if value != value else [float(value)]
    if is_blank(value):
        return [0.0]
    items = list_cell(value)
    try:
        return [float(p) for p in items if p is not None]
    except (TypeError, ValueError):
        raise ValueError(f"{str(value)[:60]!r} is not a number or a list of numbers") from None


def _last_groups(text: str, n: int) -> list[str]:
    groups: list[str] = []
    work = text
    while work and len(groups) < n:
        idx = work.rfind("\\boxed")
        if idx < 0:
            idx = work.rfind("\\fbox")
        if idx < 0:
            break
        depth, end = 0, None
        for i in range(idx, len(work)):
            if work[i] == "{":
                depth += 1
            elif work[i] == "}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end is not None:
            groups.append(work[idx:end + 1])
        work = work[:idx]
    groups.reverse()
    return groups


def _unboxed(group: str) -> str | None:
    head = "\\boxed{"
    return group[len(head):-1] if group.startswith(head) and group.endswith("}") else None


def boxed_answers(text: str, n: int) -> list[str]:
    """The contents of the last n boxed groups of a solution, in reading order, "" for each missing one (front)."""
    found = [_unboxed(g) or "" for g in _last_groups(text, n)]
    return [""] * (n - len(found)) + found


def reference_answer(text: str) -> str:
    """The reference: its last boxed group's content, or the whole text when it has none."""
    groups = _last_groups(text, 1)
    if not groups:
        return text
    return _unboxed(groups[0]) or ""


def grader_score(reply: str) -> float:
    """VLMEvalKit's _extract_score_from_response (module docstring)."""
    text = reply.strip()
    if not text:
        return 0.0
    for pattern in _BOXED:
        for match in reversed(pattern.findall(text)):
            match = match.strip()
            if not match:
                continue
            try:
                return round(float(match), 2)
            except ValueError:
                numbers = _DIGITS.findall(match)
                if numbers:
                    return round(float(numbers[-1]), 2)
    numbers = _NUMBER.findall(text)
    return round(float(numbers[-1]), 2) if numbers else 0.0


def _normalised(answer: str) -> str:
    text = answer.strip()
    enclosed = _TEXT.search(text)
    if enclosed:
        text = enclosed.group("text").strip()
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    for dropped in _DROPPED:
        text = text.replace(dropped, "")
    return text.rstrip(".")


def _decimals(x: float, tol: float = 1e-6) -> int:
    """VLMEvalKit's count_decimal_places: the decimals of x up to the first that leaves it within tol."""
    with localcontext() as ctx:
        ctx.prec = 20
        fixed = format(Decimal(str(x)).normalize(), "f")
    if "." not in fixed:
        return 0
    decimals = fixed.split(".")[1]
    for i in range(len(decimals)):
        if abs(x - round(x, i + 1)) <= tol:
            return i + 1
    return len(decimals)


def numbers_equal(pred: float, gold: float) -> bool:
    """VLMEvalKit's are_equal_under_sympy on two numbers (its first, numeric, comparison)."""
    if pred == gold:
        return True
    places = min(_decimals(gold), _decimals(pred))
    p, g = round(pred, places), round(gold, places)
    if g != 0 and abs((p - g) / g) <= PRECISION * 1.01:  # VLMEvalKit divides by zero where g is 0
        return True
    return _scientific_equal(pred, gold)


def _scientific_equal(pred: float, gold: float) -> bool:
    """VLMEvalKit's second numeric comparison: both written `b.bbe±x`; the same exponent and the bases, rounded to
    the fewer decimals of the two, within 2e-3 x 1.01 (absolute): about 3 significant figures (80 matches 81)."""
    (base_p, exp_p), (base_g, exp_g) = (f"{x:.2e}".split("e") for x in (pred, gold))
    if int(exp_p) != int(exp_g):
        return False
    bp, bg = float(base_p), float(base_g)
    places = min(_decimals(bg), _decimals(bp))
    return abs(round(bp, places) - round(bg, places)) <= PRECISION * 1.01


def rule_match(pred: str, gold: str) -> bool:
    """vlmkit's rule check of an answer against the reference (module docstring)."""
    if not pred.strip():
        return False
    if _normalised(pred) == _normalised(gold):
        return True
    p, g = math_value(pred), math_value(gold)
    return p is not None and g is not None and numbers_equal(p, g)
