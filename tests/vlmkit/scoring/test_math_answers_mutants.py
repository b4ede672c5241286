"""vlmkit.scoring.common.math_answers, the judged math scorers' answer readers, on values worked by hand and against
Python's own arithmetic on random expressions (the oracle: `eval` of an expression this test generated, numbers and
operators only), plus the per-row Tally (issue 31, mutation testing)."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from vlmkit.scoring.common.math_answers import (
    METHODS,
    BadRow,
    Tally,
    arithmetic_value,
    casefold_trim,
    choice_list,
    last_boxed,
    latex_value,
    letters_for,
    math_equal,
    math_value,
    read_list,
    show,
    target_letter,
    to_number,
    where,
)
from vlmkit.scoring.scales import PERCENT


def test_where_names_the_row_index_and_field() -> None:
    assert where(3, "q7", "answer") == "row 3 (index q7), field answer"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("14", 14.0), (" -0.5 ", -0.5), ("+3", 3.0), ("1,000", 1000.0), ("12,345,678.5", 12345678.5), ("2.", 2.0),
        (".5", 0.5), ("-.5e2", -50.0), ("1e3", 1000.0), ("1E-2", 0.01), ("007", 7.0), (3, 3.0), (2.5, 2.5),
    ],
)  # fmt: skip
def test_to_number_reads_plain_numbers(text, expected) -> None:
    assert to_number(text) == expected


@pytest.mark.parametrize(
    "text", ["1,00", "1,0000", "1e", "--1", "", "  ", "abc", "1 2", "1/2", "e5", ".", "1.2.3", "0x10", None,
             float("nan"), float("inf"), True],
)  # fmt: skip
def test_to_number_refuses_the_rest(text) -> None:
    assert to_number(text) is None


def test_read_list() -> None:
    assert read_list("[2007, 2008]") == ["2007", "2008"]
    assert read_list(" [1.0, 2.5, null] ") == ["1", "2.5", ""]  # JSON, integral floats without .0
    assert read_list("['a', \"b\"]") == ["a", "b"]  # a Python literal
    assert read_list("[(1, 2)]") == ["(1, 2)"]
    assert read_list("[a, 'b' , \"c\"]") == ["a", "b", "c"]  # neither: split on commas, quotes dropped
    assert read_list("[a]") == ["a"] and read_list("[aX, 'Xb']") == ["aX", "Xb"]
    assert read_list("[]") == [] and read_list("[ ]") == []
    assert read_list("[1, 2") is None and read_list("1, 2]") is None and read_list("12") is None
    assert read_list(None) is None and read_list(float("nan")) is None
    deep = "[" * 3000 + "]" * 3000  # too deep for json and for the literal reader: split as text
    assert read_list(deep) == ["[" * 2999 + "]" * 2999]


def test_choice_list() -> None:
    assert choice_list(None, "row 0") is None and choice_list("  ", "row 0") is None
    assert choice_list(["a", None, 2.0], "row 0") == ["a", "", "2"]
    assert choice_list(("x",), "row 0") == ["x"]
    assert choice_list(" ['1', 2.0, None] ", "row 0") == ["1", "2", ""]
    assert choice_list('["a", "b"]', "row 0") == ["a", "b"]
    assert choice_list("('a', 'b')", "row 0") == ["a", "b"]
    with pytest.raises(BadRow) as err:
        choice_list("3", "row 4 (index 9), field choices")
    assert str(err.value) == "row 4 (index 9), field choices: '3' is not a list of options"
    with pytest.raises(BadRow) as err:
        choice_list("x" * 100, "here")
    assert str(err.value) == f"here: {'x' * 80!r} is not a list of options"
    with pytest.raises(BadRow):
        choice_list('{"a": 1}', "here")
    assert issubclass(BadRow, ValueError)


def test_letters_for() -> None:
    assert letters_for(["x", "y"]) == {"A": "x", "B": "y"}
    letters = letters_for([str(i) for i in range(30)])
    assert list(letters) == [chr(c) for c in range(ord("A"), ord("Z") + 1)] and letters["Z"] == "25"
    assert letters_for([]) == {}


def test_target_letter() -> None:
    options = {"A": "3", "B": "4 cm", "C": "E", "D": "seven"}
    assert target_letter("B", options) == "B"
    assert target_letter(" (b). ", options) == "B"
    assert target_letter("b)", options) == "B"
    assert target_letter("E", options) == "C"  # not an option letter: the option whose text is `E`
    assert target_letter("4 cm", options) == "B"
    assert target_letter(" 4 CM. ", options) == "B"  # case, spaces and a final period aside
    assert target_letter("Seven", options) == "D"
    assert target_letter("eight", options) is None
    assert target_letter(None, options) is None and target_letter(float("nan"), options) is None
    assert target_letter(3.0, options) == "A"
    assert target_letter("BB", options) is None
    # MathVista: the answer is an option's text, which may be a letter
    letters = {"A": "B", "B": "C"}
    assert target_letter("B", letters) == "B"
    assert target_letter("B", letters, text_first=True) == "A"
    assert target_letter("Z", letters, text_first=True) is None
    # two options with the same text: no text match; the letter (if any) stands
    twins = {"A": "x", "B": "x", "C": "X "}
    assert target_letter("x", twins) is None
    assert target_letter("c", twins, text_first=True) == "C"
    assert target_letter("X", {"A": "x ", "B": " x"}) is None  # the case-blind match is not unique either
    assert target_letter("x", {"A": "x", "B": "x "}) is None  # `x ` equals `x` stripped: two exact matches
    assert target_letter("x", {"A": "X", "B": "x "}) == "B"  # one exact match first


def test_casefold_trim() -> None:
    assert casefold_trim('  "3.5  CM."  ') == "3.5 cm"
    assert casefold_trim("Straße。") == "strasse"
    assert casefold_trim("`a` .") == "a`"
    assert casefold_trim("'x'") == "x" and casefold_trim("x.y") == "x.y"
    assert casefold_trim(".") == "" and casefold_trim(12) == "12"
    assert casefold_trim("a ,b") == "a ,b"


def test_last_boxed() -> None:
    assert last_boxed("\\boxed{1} then \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert last_boxed("\\boxed{a} and \\boxed{b") == "a"  # the last is unclosed: the one before
    assert last_boxed("\\boxed{{x}}") == "{x}" and last_boxed("\\boxed{}") == ""
    assert last_boxed("no box") is None and last_boxed("\\boxed{open") is None
    assert last_boxed("\\boxed 5") is None
    assert last_boxed("x}\\boxed{y}}") == "y"
    assert last_boxed("\\boxed{a} \\boxed{b} \\boxed{c") == "b"  # the nearest closed one before


def _python_value(expr: str) -> float | None:
    """Python's own value of a generated expression of numbers and operators, with the reader's limits: floats,
    no complex results, exponents within 1000."""
    try:
        value = eval(expr, {"__builtins__": {}, "float": float}, {})  # noqa: S307 - text this test generated
    except (ZeroDivisionError, OverflowError, TypeError):  # TypeError: a complex value met `%`
        return None
    if isinstance(value, complex) or not math.isfinite(value):
        return None
    return float(value)


def _expression(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        number = rng.choice(["0", "1", "2", "3", "7", "0.5", "2.5", "10"])
        return rng.choice(["", "-", "+"]) + number if rng.random() < 0.3 else number
    op = rng.choice(["+", "-", "*", "/", "%", "**"])
    left, right = _expression(rng, depth - 1), _expression(rng, depth - 1)
    if op == "**":
        right = rng.choice(["2", "3", "-1", "0.5", "0"])
    return f"({left}) {op} ({right})"


def test_arithmetic_equals_python_on_random_expressions() -> None:
    rng = random.Random(2026)
    seen_none = seen_value = 0
    for _ in range(1500):
        expr = _expression(rng, 3)
        # every number a float, as the reader makes them
        expected = _python_value(" ".join(f"float({t})" if _is_number(t) else t for t in _tokens(expr)))
        got = arithmetic_value(expr)
        if expected is None:
            assert got is None, expr
            seen_none += 1
        else:
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), expr
            seen_value += 1
    assert seen_none > 20 and seen_value > 500


def _tokens(expr: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(expr):
        if expr.startswith("**", i):
            out.append("**")
            i += 2
        elif expr[i].isdigit() or expr[i] == ".":
            j = i
            while j < len(expr) and (expr[j].isdigit() or expr[j] == "."):
                j += 1
            out.append(expr[i:j])
            i = j
        else:
            out.append(expr[i])
            i += 1
    return out


def _is_number(token: str) -> bool:
    return token[0].isdigit() or token[0] == "."


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1 + 2 * 3", 7.0), ("(1 + 2) * 3", 9.0), ("7 % 3", 1.0), ("2 ** -1", 0.5), ("-3", -3.0), ("+3", 3.0),
        ("--3", 3.0), ("2 * -3", -6.0), ("sqrt(16)", 4.0), ("sqrt(2) ** 2", 2.0000000000000004), ("pi", math.pi),
        ("2 * pi", 2 * math.pi), ("1 / 4", 0.25), ("2 ** 1000", 2.0**1000), ("2 ** -1000", 2.0**-1000),
        ("10 - 4 - 3", 3.0), ("sqrt(0)", 0.0), ("sqrt(0.25)", 0.5), ("1e2", 100.0), (" 5 ", 5.0),
    ],
)  # fmt: skip
def test_arithmetic_values(text: str, expected: float) -> None:
    assert arithmetic_value(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "", "  ", "1 / 0", "1 % 0", "2 ** 1001", "2 ** -1001", "10 ** 400", "1e308 * 10", "(-8) ** (1 / 3)",
        "sqrt(-1)", "sqrt(4, 2)", "sqrt(x=4)", "abs(3)", "e", "True", "True + 1", "'a'", "1 < 2", "[1]", "x",
        "1 +", "__import__('os')", "math.sqrt(4)", "sqrt", "not 1", "~1", "1 // 2", "1 & 1", "2j",
    ],
)  # fmt: skip
def test_arithmetic_refuses_what_is_not_plain_arithmetic(text: str) -> None:
    assert arithmetic_value(text) is None


def test_expression_length_cap() -> None:
    at_cap = "10" + "+1" * 99  # 200 characters
    assert len(at_cap) == 200 and arithmetic_value(" " + at_cap + " ") == 109.0
    assert arithmetic_value("100" + "+1" * 99) is None  # 201
    assert latex_value("10" + "+1" * 99) == 109.0
    assert latex_value("100" + "+1" * 99) is None
    assert latex_value(" 1\\cdot 2" + " " * 300) == 2.0  # the cap is on the stripped text
    # ... and on the text as given, before `$` and the like are dropped
    assert latex_value("$" + "1" * 198 + "$") == float("1" * 198)
    assert latex_value("$" + "1" * 199 + "$") is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("\\frac{1}{2}", 0.5), ("\\dfrac12", 0.5), ("\\tfrac{1}{4}", 0.25), ("\\frac {3} {4}", 0.75),
        ("\\frac{\\frac{1}{2}}{4}", 0.125), ("\\sqrt{9}", 3.0), ("\\sqrt[3]{8}", 2.0), ("\\sqrt 4", 2.0),
        ("2^{10}", 1024.0), ("2^3", 8.0), ("{1+2}*3", 9.0), ("30^\\circ", 30.0), ("30^{\\circ}", 30.0),
        ("30°", 30.0), ("2\\sqrt{3}", 2 * math.sqrt(3)), ("6\\pi", 6 * math.pi), ("\\pi 2", 2 * math.pi),
        ("\\pi\\pi", math.pi**2), ("\\pi(2)", 2 * math.pi), ("\\pi \\sqrt{4}", 2 * math.pi),
        ("2 \\sqrt{4}", 4.0), ("2.5\\pi", 2.5 * math.pi), ("(1+1)(2)", 4.0), ("(2)3", 6.0), ("(2) 3", 6.0),
        ("3 (2)", 6.0), ("\\left( 1+1 \\right)", 2.0), ("$5$", 5.0), ("3 \\cdot 4", 12.0), ("3\\times4", 12.0),
        ("8 \\div 2", 4.0), ("1\\,000", 1000.0), ("\\displaystyle 2", 2.0), ("1\\!2\\;3\\:4\\ 5~6", 123456.0),
        ("\\(3\\)", 3.0), ("\\[3\\]", 3.0), ("1+\\frac{1}{2}", 1.5), ("\\sqrt[3]{8}+\\sqrt[2]{4}", 4.0), ("\\frac{\\sqrt{16}}{2^{1}}", 2.0), ("\\sqrt[2]{\\frac{1}{4}}", 0.5),
    ],
)  # fmt: skip
def test_latex_values(text: str, expected: float) -> None:
    assert latex_value(text) == pytest.approx(expected, rel=1e-12)
    assert math_value(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "", "\\frac{1}", "\\frac 1", "\\frac{1}{2", "\\frac{\\foo}{2}", "\\frac{2}{\\foo}", "\\sqrt[3{8}",
        "\\sqrt[\\foo]{8}", "\\sqrt", "\\sqrt{\\foo}", "2^", "2^{\\foo}", "\\alpha", "x + 1", "\\frac{1}{0}",
        "\\sqrt{-4}", "\\frac", "1 \\\n+ 2",
    ],
)  # fmt: skip
def test_latex_refuses_what_it_cannot_read(text: str) -> None:
    assert latex_value(text) is None


def test_math_value_tries_arithmetic_first() -> None:
    assert math_value("1+1") == 2.0 and math_value("2**3") == 8.0  # `**` is not LaTeX
    assert math_value("\\frac{1}{2}") == 0.5 and math_value("x") is None


def test_math_equal() -> None:
    assert math_equal("ABC", " abc ")
    assert math_equal("0.5", "\\frac{1}{2}") and math_equal(1, 1.0) and math_equal("2\\sqrt{4}", "4")
    assert math_equal("0", "0.0000009") and not math_equal("0", "0.000001")  # |a - b| < 1e-6
    assert not math_equal("1", "2") and not math_equal("2", "x")
    assert math_equal("x+1", " X + 1 ")  # spaces dropped in the LaTeX text
    assert math_equal("\\dfrac{x}{2}", "\\frac{x}{2}") and math_equal("\\tfrac{x}{2}", "\\frac { x } {2}")
    assert math_equal("\\left(x\\right)", "(x)") and math_equal("x.", "x") and math_equal("$x$", "x")
    assert not math_equal("x+1", "1+x")
    assert not math_equal("", "$")  # an empty reply is not an answer whose LaTeX text is empty
    assert math_equal("", "") and math_equal("", " ")
    assert not math_equal(None, "1") and not math_equal("1", float("nan")) and not math_equal(None, None)
    assert not math_equal(float("nan"), "nan") and not math_equal(None, "None") and not math_equal("None", None)


def test_show() -> None:
    assert show(None) is None and show(14.0) == "14" and show(14.5) == "14.5" and show(-2.0) == "-2"
    assert show([2007, 2008.0]) == "[2007, 2008.0]" and show(("a",)) == "[a]" and show([]) == "[]"
    assert show("x") == "x" and show(3) == "3"


def test_tally_starts_empty_and_records_rows() -> None:
    tally = Tally(indices=[10, 11, 12])
    frame = tally.per_sample()
    assert list(frame.columns) == ["index", "extracted", "method", "hit", "prefetch", "judge"]
    assert frame["index"].tolist() == [10, 11, 12]
    assert frame["method"].tolist() == ["", "", ""] and frame["hit"].tolist() == [False] * 3
    assert frame["extracted"].tolist() == [None] * 3 and frame["judge"].tolist() == [None] * 3
    assert frame["prefetch"].tolist() == [False] * 3
    assert frame["extracted"].dtype == object and frame["judge"].dtype == object

    tally.set(0, "rule", 14.0, 1)
    tally.set(1, "judge", [1, 2], False, reply="the judge said")
    tally.set(1, "judge_unread", "x")  # no reply given: the earlier one stays
    tally.prefetch[0] = True
    frame = tally.per_sample()
    assert frame["method"].tolist() == ["rule", "judge_unread", ""]
    assert frame["extracted"].tolist() == ["14", "x", None]
    assert frame["hit"].tolist() == [True, False, False] and frame["hit"].map(type).tolist() == [bool] * 3
    assert frame["judge"].tolist() == [None, "the judge said", None]
    assert tally.counts() == {
        "total": 3, "scored": 3, "hits": 1, "by_rule": 1, "by_judge": 0, "unread": 1, "judge_errors": 0,
        "inference_errors": 0, "prefetch": 1,
    }  # fmt: skip


def test_tally_keeps_lists_it_is_given_and_counts_every_method() -> None:
    tally = Tally(
        indices=list(range(6)),
        methods=list(METHODS) + ["judge"],
        extracted=["a", None, None, None, None, "b"],
        hits=[True, True, False, False, False, True],
        replies=[None, "r", None, None, None, "s"],
        prefetch=[True, False, False, False, False, True],
    )
    assert METHODS == ("rule", "judge", "judge_unread", "judge_error", "inference_error")
    assert tally.counts() == {
        "total": 6, "scored": 6, "hits": 3, "by_rule": 1, "by_judge": 2, "unread": 1, "judge_errors": 1,
        "inference_errors": 1, "prefetch": 2,
    }  # fmt: skip
    assert tally.per_sample()["judge"].tolist() == [None, "r", None, None, None, "s"]


def test_tally_table_counts_each_label() -> None:
    tally = Tally(indices=[1, 2, 3, 4], hits=[True, False, True, True], prefetch=[True, False, False, True])
    labels = [{"a", "all"}, {"b", "all"}, {"a", "all"}, {"all"}]
    table = tally.table(labels, ["all", "a", "b", "c"], "Subject")
    assert list(table.columns) == ["Subject", "tot", "prefetch", "hit", "prefetch_rate", "acc"]
    assert table["Subject"].tolist() == ["all", "a", "b", "c"]
    assert table["tot"].tolist() == [4, 2, 1, 0]
    assert table["prefetch"].tolist() == [2, 1, 0, 0]
    assert table["hit"].tolist() == [3, 2, 0, 0]
    assert table["prefetch_rate"].tolist()[:3] == [50.0, 50.0, 0.0] and math.isnan(table["prefetch_rate"][3])
    assert table["acc"].tolist()[:3] == [75.0, 100.0, 0.0] and math.isnan(table["acc"][3])
    empty = Tally(indices=[]).table([], ["all"], "Subject")
    assert empty["tot"].tolist() == [0]
    no_rows = tally.table(labels, [], "Subject")
    assert list(no_rows.columns) == ["Subject", "tot", "prefetch", "hit", "prefetch_rate", "acc"] and no_rows.empty


def test_tally_result() -> None:
    tally = Tally(indices=[5])
    tally.set(0, "rule", "7", True)
    table = pd.DataFrame({"x": [1]})
    result = tally.result("mathvision", {"Overall": 100.0}, table, tally.counts(), ["a note"])
    assert result.scorer == "mathvision" and result.primary == "Overall" and result.metrics == {"Overall": 100.0}
    assert result.table is table and result.table_suffix == "score" and result.notes == ["a note"]
    assert result.counts["hits"] == 1 and result.scale is not None and result.scale.kind == PERCENT
    assert result.per_sample["extracted"].tolist() == ["7"]
