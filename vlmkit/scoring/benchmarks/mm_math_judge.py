"""MM-Math's answer check, as VLMEvalKit's AutoScoringJudge makes it (vlmeval/dataset/mmmath.py at e8e78f05): is the
reply's answer the same as the reference answer, as text, as a number (within 0.01, also x100 and /100), as a
sympy expression parsed from LaTeX, as an interval, or as an equation.

Steps (`same_answer(answer, reply)`):
1. Both texts: the contents of their `\\boxed{...}`s joined by commas (unbalanced braces: not the same); with none,
   the `$...$` pieces of the last line; else the whole text. Then units and marks removed or replaced (cm, 米, `$`,
   `\\left`, `\\right`, full-width punctuation, `\\infty` -> oo, degrees, ...), a trailing `m` dropped, the part after
   `\\in ` kept, `\\sin30` -> `\\sin((30/180)\\pi)`, end punctuation stripped, `\\mathrm{x}`/`\\mathbf{x}` -> x.
2. Equal texts: the same. Otherwise Chinese characters are removed (unless the text is all Chinese), `a<x<b` becomes
   `(a, b)`, both are split at top-level commas, `\\pm` doubles an item (+ and -); lists of different lengths are
   not the same; else every reference item must pair with a distinct reply item that `is_equal` accepts.
3. `is_equal`: equal non-empty texts; both intervals whose ends and items match; numerically equal; equal sympy
   expressions (after `=`, the right side; pi as a number; numbers within 0.01, expressions whose difference
   simplifies below 1e-3; not when both are equations); equations whose sides' differences are integer multiples.
   VLMEvalKit gives up on a pair after 30 seconds (timeout_decorator); vlmkit does the same with a timer signal
   where it can (the main thread of a POSIX process) and otherwise waits.

LaTeX parsing is sympy's (`sympy.parsing.latex.parse_latex`), which needs antlr4-python3-runtime 4.11 (`pip install
'vlmkit[math]'`); the check is written against sympy's behaviour, so the same versions give the same verdicts.
"""

from __future__ import annotations

import contextlib
import math
import re
import signal
import threading
from collections.abc import Iterator
from typing import Any

INSTALL_HINT = "pip install 'vlmkit[math]'"
PRECISION = 1e-2
TIMEOUT_S = 30
SPECIAL = (("\\left", ""), ("\\right", ""), ("厘米", ""), ("，", ","), ("$", ""), ("（", "("), ("）", ")"),
           ("\\infty", "oo"), ("\\colon ", ":"), ("＋", "+"), ("\\, ", ""), ("\\,", ""), ("^\\circ", ""),
           ("^{\\circ}", ""))  # fmt: skip
UNITS = ("\\text{cm}^2", "\\text{cm}", "\\,cm", "\\text{ cm}", "cm", "\\text{分米}^2", "cm^{2}", "60 \\text{ cm}^2",
         "\\ \\text{m}", "\\text{米}")  # fmt: skip
_CHINESE = re.compile(r"[\u4e00-\u9fff]+")
_TRIG = re.compile(r"(\\sin|\\cos|\\tan)(\d+)")
_FONT = re.compile(r"\\(?:mathrm|mathbf)\{~?([^}]*)\}")
_DOLLARS = re.compile(r"\$(.*?)\$")


def missing_library() -> str | None:
    """One line saying what to install for MM-Math's check, or None when sympy parses LaTeX here."""
    try:
        from sympy.parsing.latex import parse_latex

        parse_latex("x")
    except ImportError as exc:
        return f"MM-Math's answer check parses LaTeX with sympy, which needs antlr4-python3-runtime 4.11 ({exc}): " \
               f"{INSTALL_HINT}"
    return None


class _Timeout(BaseException):
    """A pair's time ran out: not caught by the checks' own `except Exception`, so the pair ends at once."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _Timeout after `seconds` (a timer signal), where one can be set; otherwise no limit."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def boxed_contents(text: str) -> str:
    """The `\\boxed{}` contents joined by `,` (each followed by one); else the `$..$` pieces of the last line; else the
    text. Unbalanced braces: ValueError."""
    found = ""
    for match in re.finditer(r"\\boxed{", text):
        end, depth = match.end(), 1
        while depth > 0 and end < len(text):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        if depth:
            raise ValueError("Mismatched braces in LaTeX string.")
        found += text[match.end():end - 1] + ","
    if found:
        return found
    pieces = _DOLLARS.findall(text.strip().split("\n")[-1])
    return "".join(p + "," for p in pieces) if pieces else text


def replace_symbols(text: str) -> str:
    for unit in UNITS:
        text = text.replace(unit, "")
    text = re.sub(r"(.+)m$", r"\1", text.strip())
    if "\\in " in text:
        text = text.split("\\in ")[1]
    for old, new in SPECIAL:
        text = text.replace(old, new)
    text = _TRIG.sub(r"\1((\2/180)\\pi)", text)
    text = text.strip("\n,.:;^_=+`!@#%^&*~，。")
    return _FONT.sub(r"\1", text)


def split_top_level(text: str) -> list[str]:
    depth, start, out = 0, 0, []
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    if start < len(text):
        out.append(text[start:].strip())
    return out


def plus_minus(items: list[str]) -> list[str]:
    out = []
    for item in items:
        out += [item.replace("\\pm", "+"), item.replace("\\pm", "-")] if "\\pm" in item else [item]
    return out


def _drop_chinese(text: str) -> str:
    return text if _CHINESE.fullmatch(text) else _CHINESE.sub("", text)


def _as_interval(text: str) -> str:
    if len(re.findall("<", text)) == 2:
        parts = text.split("<")
        return "(" + parts[0] + ", " + parts[-1] + ")"
    return text


def same_answer(answer: Any, reply: Any, precision: float = PRECISION) -> bool:
    """VLMEvalKit's judge(answer, reply): the module docstring's steps 1-2."""
    try:
        gold, mine = (replace_symbols(boxed_contents(x)) for x in (answer, reply))
    except (ValueError, TypeError, AttributeError):
        return False
    if gold == mine:
        return True
    golds = plus_minus(split_top_level(_as_interval(_drop_chinese(gold))))
    mines = plus_minus(split_top_level(_as_interval(_drop_chinese(mine))))
    if len(golds) != len(mines):
        return False
    precisions = [precision] * len(golds)
    index = -1
    while golds:
        index = (index + 1) % len(golds)
        item, tolerance = golds[index], precisions[index]
        for candidate in mines:
            try:
                with _time_limit(TIMEOUT_S):
                    equal = is_equal(item, candidate, tolerance)
            except (_Timeout, Exception):  # VLMEvalKit logs any failure of the pair (its timeout too), tries the next
                continue
            if equal:
                golds.remove(item)
                mines.remove(candidate)
                precisions.remove(tolerance)
                break
        else:
            return False
    return True


def is_equal(gold: str, mine: str, precision: float = PRECISION) -> bool:
    if gold == mine and gold != "" and mine != "":
        return True
    if gold.startswith(("(", "[")) and gold.endswith((")", "]")) and mine.startswith(("(", "[")) and mine.endswith(
            (")", "]")):  # fmt: skip
        try:
            if interval_equal(gold, mine, precision):
                return True
        except Exception:  # VLMEvalKit: any failure comparing intervals ends the pair
            return False
    for check in (numerical_equal, _expression_not_equations, equation_equal):
        try:
            if check(gold, mine, precision):
                return True
        except Exception:  # VLMEvalKit: a check that fails is passed over
            pass
    return False


def numerical_equal(gold: str, mine: str, precision: float = PRECISION) -> bool:
    reference, prediction = float(gold), float(mine)
    return any(abs(value - prediction) <= precision * 1.01 for value in (reference / 100, reference, reference * 100))


def _expression_not_equations(gold: str, mine: str, precision: float) -> bool:
    return expression_equal(gold, mine, precision) and not ("=" in gold and "=" in mine)


def _computable(expr: Any) -> bool:
    from sympy import Pow

    if not isinstance(expr, Pow):
        return True
    base, exponent = expr.as_base_exp()
    return bool(base.is_number and exponent.is_number and abs(exponent.evalf()) <= 1000)


def expression_equal(gold: str, mine: str, precision: float = PRECISION) -> bool:
    import sympy
    from sympy.parsing.latex import parse_latex

    gold, mine = (e.split("=")[1].strip() if "=" in e else e.strip() for e in (gold, mine))
    too_long = len(gold) > 300 or len(mine) > 300
    first, second = sympy.sympify(parse_latex(gold)), sympy.sympify(parse_latex(mine))
    if first == second:
        return True
    pi = parse_latex("\\pi")
    first, second = first.subs(pi, math.pi), second.subs(pi, math.pi)
    if first.has(sympy.Symbol) != second.has(sympy.Symbol):
        return False
    if not first.has(sympy.Symbol):
        try:
            if not (_computable(first) and _computable(second)) or too_long:
                return False
            return bool(abs(first.evalf() - second.evalf()) <= precision * 1.01)
        except Exception:  # VLMEvalKit: not the same when the numbers cannot be compared
            return False
    if too_long:
        return False
    try:
        return bool(abs(sympy.simplify(first - second).evalf()) < 1e-3)
    except Exception:  # VLMEvalKit: not the same when the difference cannot be simplified
        return False


def equation_equal(gold: str, mine: str, precision: float = PRECISION) -> bool:
    import sympy
    from sympy.parsing.latex import parse_latex

    def reduced(equation: str) -> Any:
        left, right = equation.split("=")
        eq = sympy.Eq(parse_latex(left), parse_latex(right))
        return sympy.simplify(eq.lhs - eq.rhs)

    first, second = reduced(gold), reduced(mine)
    one, two = sympy.simplify(first / second), sympy.simplify(second / first)
    return bool((one.is_Integer and one != 0) or (two.is_Integer and two != 0))


def interval_equal(gold: str, mine: str, precision: float = PRECISION) -> bool:
    if gold == mine:
        return True
    golds, mines = gold.split("\\cup"), mine.split("\\cup")
    if len(golds) != len(mines):
        return False
    for one, two in zip(golds, mines):
        if one[0] != two[0] or one[-1] != two[-1]:
            return False
        for a, b in zip(one.strip("[]()").split(","), two.strip("[]()").split(",")):
            if not expression_equal(a, b, precision):
                return False
    return True
