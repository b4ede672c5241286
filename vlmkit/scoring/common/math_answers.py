"""What the judged math scorers (MathVista, MathVerse, MathVision) share: reading answers as values (plain numbers,
list literals, choice lists, arithmetic and the common LaTeX forms, VLMEvalKit's `is_equal`, all without eval()) and
the per-row record they keep (`Tally`).

VLMEvalKit's MathVision scorer calls Python's eval() on the model's and the judge's text (code execution, a defect
listed in the facts) and latex2sympy2 (an extra package) under a 30 s timeout. vlmkit reads the same answers with a
small evaluator of its own: numbers, `+ - * / ** %`, parentheses, `sqrt(...)` and `pi`, with float arithmetic, a
length cap and an exponent cap, so nothing can run or hang. LaTeX is rewritten into that syntax first (`\\frac`,
`\\dfrac`, `\\sqrt[n]{}`, `^{}`, `\\pi`, `\\cdot`, `\\times`, `\\left`/`\\right`, degrees, implicit products such as
`2\\sqrt{3}`). What it cannot read as a number is compared as normalised text (so a symbolic answer matches only
when written the same way; latex2sympy could also prove e.g. `x+1` equal to `1+x`).

`Tally` is the per-row record the three judged math scorers share: each row's method (rule, judge, judge_unread,
judge_error, inference_error), what was read, hit, the judge's last reply and whether it was prefetched; from it
the per-sample frame, the counts and VLMEvalKit's tot / prefetch / hit / prefetch_rate / acc table.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, is_missing
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.text_norm import cell_text

TOLERANCE = 1e-6  # VLMEvalKit's is_equal: |a - b| < 1e-6
MAX_EXPRESSION = 200  # characters: longer text is not read as arithmetic
MAX_EXPONENT = 1000.0


class BadRow(ValueError):
    """A benchmark row the scorer cannot use; the text names the row, its index and the field."""


def where(pos: int, index: Any, field: str) -> str:
    return f"row {pos} (index {index}), field {field}"


# -- numbers and lists ---------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?|[+-]?\.\d+(?:[eE][+-]?\d+)?")


def to_number(text: Any) -> float | None:
    """A plain number (`14`, `-0.5`, `1,000`, `2.`, `1e3`; surrounding white space allowed) as a float, else None."""
    if is_missing(text):
        return None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text) if math.isfinite(float(text)) else None
    s = str(text).strip()
    return float(s.replace(",", "")) if _NUMBER.fullmatch(s) else None


def _literal(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # a list nested too deep for json is no list
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def read_list(text: Any) -> list[str] | None:
    """`[2007, 2008]`, `['a', 'b']` or `[a, b]` (the whole stripped text in brackets) as a list of element texts;
    None when the text is not a bracketed list."""
    if is_missing(text):
        return None
    s = str(text).strip()
    if not (s.startswith("[") and s.endswith("]")):
        return None
    parsed = _literal(s)
    if isinstance(parsed, (list, tuple)):
        return [cell_text(v) or "" for v in parsed]
    inner = s[1:-1].strip()
    return [part.strip().strip("'\"") for part in inner.split(",")] if inner else []


def choice_list(value: Any, place: str) -> list[str] | None:
    """A `choices` cell (a JSON or Python list literal of option texts) as texts; None for an empty cell. BadRow
    naming `place` when the cell holds something else."""
    if is_blank(value):
        return None
    if isinstance(value, (list, tuple)):
        return [cell_text(v) or "" for v in value]
    parsed = _literal(str(value).strip())
    if not isinstance(parsed, (list, tuple)):
        raise BadRow(f"{place}: {str(value)[:80]!r} is not a list of options")
    return [cell_text(v) or "" for v in parsed]


def letters_for(choices: list[str]) -> dict[str, str]:
    """Options A, B, ... for a list of option texts (VLMEvalKit's list_to_dict)."""
    return {chr(65 + i): text for i, text in enumerate(choices[:26])}


def target_letter(answer: Any, options: dict[str, str], *, text_first: bool = False) -> str | None:
    """The option letter an answer names: the letter itself (`B`, `(B)`), or the one option whose text equals it;
    `text_first` tries the option texts first (MathVista's answer is the choice's text, which may be a letter)."""
    text = cell_text(answer)
    if text is None:
        return None
    s = text.strip()
    m = re.fullmatch(r"\(?([A-Za-z])\)?\.?", s)
    letter = m.group(1).upper() if m and m.group(1).upper() in options else None
    if letter is not None and not text_first:
        return letter
    for same in ([k for k, v in options.items() if v.strip() == s],
                 [k for k, v in options.items() if casefold_trim(v) == casefold_trim(s)]):
        if len(same) == 1:
            return same[0]
    return letter


def casefold_trim(text: Any) -> str:
    """Case-folded, white space collapsed, surrounding quotes and a final period dropped; punctuation inside is kept
    (`"3.5 cm."` -> `3.5 cm`), since math answers differ by it. text_qa's `bare_words` removes all punctuation."""
    s = " ".join(str(text).split()).casefold()
    s = s.strip().strip("'\"`").strip()
    return s[:-1].rstrip() if s.endswith((".", "。")) else s


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (braces balanced), or None. (VLMEvalKit's MathVision takes the first,
    and stops at the first `}`, so `\\boxed{\\frac{1}{2}}` gives `\\frac{1`.)"""
    start = text.rfind("\\boxed{")
    while start >= 0:
        depth, i = 0, start + len("\\boxed")
        for j in range(i, len(text)):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    return text[i + 1:j]
        start = text.rfind("\\boxed{", 0, start)
    return None


# -- arithmetic without eval ---------------------------------------------------------------------------------------

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id == "pi":
        return math.pi
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError("exponent too large")
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, complex) or not math.isfinite(result):
            raise ValueError("not a real number")
        return float(result)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt"
            and len(node.args) == 1 and not node.keywords):
        inner = _value(node.args[0])
        if inner < 0:
            raise ValueError("square root of a negative number")
        return math.sqrt(inner)
    raise ValueError(f"not arithmetic: {type(node).__name__}")


def arithmetic_value(text: str) -> float | None:
    """The value of a short arithmetic expression (numbers, + - * / ** %, parentheses, sqrt(), pi), else None."""
    s = text.strip()
    if not s or len(s) > MAX_EXPRESSION:
        return None
    try:
        return _value(ast.parse(s, mode="eval"))
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError, MemoryError):
        return None


# -- LaTeX to arithmetic -------------------------------------------------------------------------------------------

_DROP = re.compile(r"\\left|\\right|\\displaystyle|\\[!,;: ]|~|\$|\\\(|\\\)|\\\[|\\\]")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°")
_WORDS = {"\\cdot": "*", "\\times": "*", "\\div": "/", "\\pi": "pi", "\\dfrac": "\\frac", "\\tfrac": "\\frac"}


def _group(text: str, i: int) -> tuple[str, int] | None:
    """The argument at text[i]: a balanced {...} group or one character; (content, index after it)."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text):
        return None
    if text[i] != "{":
        return text[i], i + 1
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
    return None


def _rewrite(text: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("\\frac", i):
            num = _group(text, i + 5)
            den = _group(text, num[1]) if num else None
            if not num or not den:
                return None
            a, b = _rewrite(num[0]), _rewrite(den[0])
            if a is None or b is None:
                return None
            out.append(f"(({a})/({b}))")
            i = den[1]
        elif text.startswith("\\sqrt", i):
            j = i + 5
            root = None
            if j < len(text) and text[j] == "[":
                close = text.find("]", j)
                if close < 0:
                    return None
                root, j = _rewrite(text[j + 1:close]), close + 1
                if root is None:
                    return None
            arg = _group(text, j)
            inner = _rewrite(arg[0]) if arg else None
            if inner is None or arg is None:
                return None
            out.append(f"sqrt({inner})" if root is None else f"(({inner})**(1/({root})))")
            i = arg[1]
        elif text[i] == "^":
            arg = _group(text, i + 1)
            inner = _rewrite(arg[0]) if arg else None
            if inner is None or arg is None:
                return None
            out.append(f"**({inner})")
            i = arg[1]
        elif text[i] == "\\":
            return None  # a command this reader does not know
        else:
            out.append({"{": "(", "}": ")"}.get(text[i], text[i]))
            i += 1
    return "".join(out)


_IMPLICIT = (
    (re.compile(r"(?<=[\d.)])\s*(?=\(|pi|sqrt)"), "*"),
    (re.compile(r"(?<=pi)\s*(?=[\d(]|pi|sqrt)"), "*"),
    (re.compile(r"(?<=\))\s*(?=\d)"), "*"),
)


def latex_value(text: str) -> float | None:
    """The value of a numeric LaTeX expression (`\\frac{1}{2}`, `2\\sqrt{3}`, `6\\pi`, `30^\\circ`), else None."""
    s = text.strip()
    if not s or len(s) > MAX_EXPRESSION:
        return None
    s = _DEGREES.sub("", _DROP.sub("", s))
    for word, repl in _WORDS.items():
        s = s.replace(word, repl)
    rewritten = _rewrite(s)
    if rewritten is None:
        return None
    for pattern, repl in _IMPLICIT:
        rewritten = pattern.sub(repl, rewritten)
    return arithmetic_value(rewritten)


def _latex_text(text: str) -> str:
    s = _DROP.sub("", text.strip().lower())
    for word in ("\\dfrac", "\\tfrac"):
        s = s.replace(word, "\\frac")
    return "".join(s.split()).removesuffix(".")


def math_value(text: str) -> float | None:
    """`arithmetic_value`, else `latex_value`."""
    value = arithmetic_value(text)
    return value if value is not None else latex_value(text)


def math_equal(prediction: Any, answer: Any) -> bool:
    """VLMEvalKit's MathVision `is_equal`, without eval: equal lower-cased stripped texts; else both read as numbers
    (arithmetic, else LaTeX) within 1e-6; else equal normalised LaTeX texts (spaces, `\\left`/`\\right`, `\\dfrac`)."""
    if is_missing(prediction) or is_missing(answer):
        return False
    a, b = str(prediction).lower().strip(), str(answer).lower().strip()
    if a == b:
        return True
    va, vb = math_value(a), math_value(b)
    if va is not None and vb is not None:
        return abs(va - vb) < TOLERANCE
    return bool(a) and _latex_text(a) == _latex_text(b)


# -- the rows' record ----------------------------------------------------------------------------------------------

METHODS = ("rule", "judge", "judge_unread", "judge_error", "inference_error")


def show(value: Any) -> str | None:
    """What was read, as text for predictions.jsonl: `14` for 14.0, `[2007, 2008]` for a list."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


@dataclass
class Tally:
    """Per row: method (one of METHODS), what was read, hit, the judge's last raw reply, prefetched or not."""

    indices: list[Any]
    methods: list[str] = field(default_factory=list)
    extracted: list[str | None] = field(default_factory=list)
    hits: list[bool] = field(default_factory=list)
    replies: list[str | None] = field(default_factory=list)
    prefetch: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.indices)
        self.methods = self.methods or [""] * n
        self.extracted = self.extracted or [None] * n
        self.hits = self.hits or [False] * n
        self.replies = self.replies or [None] * n
        self.prefetch = self.prefetch or [False] * n

    def set(self, pos: int, method: str, read: Any = None, hit: bool = False, reply: str | None = None) -> None:
        self.methods[pos], self.extracted[pos], self.hits[pos] = method, show(read), bool(hit)
        if reply is not None:
            self.replies[pos] = reply

    def per_sample(self) -> pd.DataFrame:
        return pd.DataFrame({
            "index": self.indices,
            "extracted": pd.Series(self.extracted, dtype=object),
            "method": self.methods,
            "hit": self.hits,
            "prefetch": self.prefetch,
            "judge": pd.Series(self.replies, dtype=object),
        })

    def result(self, scorer: str, metrics: dict[str, float], table: pd.DataFrame, counts: dict[str, int],
               notes: list[str]) -> EvalResult:
        """The scorer's EvalResult: `Overall` first, VLMEvalKit's `_score.csv` table, figures in percent."""
        return EvalResult(scorer=scorer, metrics=metrics, primary="Overall", per_sample=self.per_sample(), table=table,
                          table_suffix="score", counts=counts, notes=notes, scale=Scale(PERCENT))

    def counts(self) -> dict[str, int]:
        """total, scored (every row counts, a miss unless right), hits, by_rule, by_judge, unread, judge_errors,
        inference_errors, prefetch."""
        methods = self.methods
        return {
            "total": len(methods),
            "scored": len(methods),
            "hits": int(sum(self.hits)),
            "by_rule": methods.count("rule"),
            "by_judge": methods.count("judge"),
            "unread": methods.count("judge_unread"),
            "judge_errors": methods.count("judge_error"),
            "inference_errors": methods.count("inference_error"),
            "prefetch": int(sum(self.prefetch)),
        }

    def table(self, labels: Sequence[set[str]], order: Sequence[str], first: str) -> pd.DataFrame:
        """VLMEvalKit's tot / prefetch / hit / prefetch_rate / acc (percent) table: one row per label in `order`, a
        row counting under each label of `labels[pos]`."""
        rows = []
        for label in order:
            member = [label in row for row in labels]
            tot = sum(member)
            fetched = sum(p for p, m in zip(self.prefetch, member) if m)
            hit = sum(h for h, m in zip(self.hits, member) if m)
            rows.append({first: label, "tot": tot, "prefetch": fetched, "hit": hit,
                         "prefetch_rate": fetched / tot * 100 if tot else float("nan"),
                         "acc": hit / tot * 100 if tot else float("nan")})
        return pd.DataFrame(rows, columns=[first, "tot", "prefetch", "hit", "prefetch_rate", "acc"])
