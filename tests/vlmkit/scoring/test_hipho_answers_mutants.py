"""HiPhO's cell and answer readers, rule by rule (issue 31, mutation round 4): expectations worked by hand from
VLMEvalKit's hipho.py / hipho_verifier.py at e8e78f05 (its _safe_parse_json_field, _safe_parse_points_field,
last_n_boxed_strings, _extract_score_from_response, count_decimal_places, are_equal_under_sympy)."""

from __future__ import annotations

import pytest

from vlmkit.scoring.benchmarks.hipho_answers import (
    boxed_answers,
    grader_score,
    list_cell,
    numbers_equal,
    points_cell,
    reference_answer,
    rule_match,
)
from vlmkit.scoring.benchmarks import hipho_answers


@pytest.mark.parametrize(("cell", "items"), [
    (["a", 1], ["a", 1]),
    (None, []), (float("nan"), []), ("", []), ("  ", []), ("nan", []), (" nan ", []),
    ('["a", "b"]', ["a", "b"]),
    ("['a', 'b']", ["a", "b"]),  # a Python literal
    (" [1, [2, 3]] ", [1, [2, 3]]),
    ("[not a list", ["[not a list"]),
    ("[a, b]", ["[a, b]"]),  # neither JSON nor Python: one item
    ("[}", ["[}"]),
    ('{"a": 1}', ['{"a": 1}']),
    ("[1, 2", ["[1, 2"]),
    ("1, 2]", ["1, 2]"]),
    ("  v = 4 ", ["v = 4"]),
    (3.5, ["3.5"]),
])  # fmt: skip
def test_list_cell(cell, items):
    assert list_cell(cell) == items


def test_a_bracketed_value_that_is_not_a_list_is_one_item():
    # brackets at both ends but neither JSON nor a Python literal: `[1] + [2]` and `[1][0]` are expressions
    assert list_cell("[1][0]") == ["[1][0]"]
    assert list_cell("[1] + [2]") == ["[1] + [2]"]


@pytest.mark.parametrize(("cell", "points"), [
    (2, [2.0]), (0.5, [0.5]), (float("nan"), [0.0]), (None, [0.0]), ("", [0.0]),
    ("[1, 0.5]", [1.0, 0.5]), ("[1, null, 2]", [1.0, 2.0]), ("3", [3.0]), ([1, None], [1.0]),
    ("['0.4', '0.6']", [0.4, 0.6]),
])  # fmt: skip
def test_points_cell(cell, points):
    assert points_cell(cell) == points
    assert all(type(p) is float for p in points_cell(cell))


def test_points_cell_refuses_text_that_is_no_number():
    with pytest.raises(ValueError, match="'abc' is not a number or a list of numbers"):
        points_cell("abc")
    with pytest.raises(ValueError, match="not a number"):
        points_cell('["x"]')


def test_a_boolean_is_not_read_as_a_number_of_points():
    with pytest.raises(ValueError):
        points_cell(True)


@pytest.mark.parametrize(("text", "n", "found"), [
    ("\\boxed{1}", 1, ["1"]),
    ("\\boxed{a}\\boxed{b}\\boxed{c}", 2, ["b", "c"]),
    ("\\boxed{a}\\boxed{b}", 3, ["", "a", "b"]),
    ("\\boxed{x^{2}+{y}}", 1, ["x^{2}+{y}"]),
    ("\\fbox{7}", 1, [""]),  # an fbox group reads as ""
    ("\\boxed{5} and \\fbox{7}", 2, ["", "5"]),  # a \\boxed anywhere comes before a later \\fbox, cut off
    ("\\fbox{7} and \\boxed{5}", 1, ["5"]),
    ("\\boxed{unclosed", 1, [""]),  # no closing brace: no group
    ("\\boxed{1} \\boxed{unclosed", 1, ["1"]),
    ("\\boxed{1} \\boxed{unclosed", 2, ["", "1"]),
    ("\\boxed 3", 1, [""]),  # no braces at all
    ("text", 2, ["", ""]),
    ("", 1, [""]),
    ("\\boxed{1}", 0, []),
])  # fmt: skip
def test_boxed_answers(text: str, n: int, found: list[str]):
    assert boxed_answers(text, n) == found


def test_reference_answer():
    assert reference_answer("v = \\boxed{4} m/s and \\boxed{5}") == "5"
    assert reference_answer("v = 4") == "v = 4"
    assert reference_answer("\\fbox{4}") == ""
    assert reference_answer("\\boxed{}") == ""


@pytest.mark.parametrize(("reply", "score"), [
    ("", 0.0), ("   ", 0.0),
    ("\\boxed{ 0.5 }", 0.5),
    ("\\boxed{0.5} then \\boxed{ }", 0.5),  # an empty box is skipped
    ("\\boxed{abc} \\boxed{0.2}", 0.2),
    ("\\boxed{0.2} \\boxed{abc}", 0.2),  # the last box has no number: the one before
    ("\\boxed{1.5 of 2.5}", 2.5),  # the last number in the box
    ("\\boxed{7.}", 7.0),
    ("BOXED{0.6}", 0.6),  # any case
    ("\\Boxed{0.6} 9", 0.6),
    ("boxed{0.7} 9", 0.7),  # the second pattern still before the reply's last number
    ("score .5", 0.5),
    ("3 then 4.125", 4.12),  # rounded to 2 decimals (4.125 is 4.12499... as a float)
    ("\\boxed{2.346}", 2.35),
    ("\\boxed{x 2.346}", 2.35),
    ("2.346", 2.35),
    ("1e3", 3.0),  # the unsigned-number pattern reads 1 then 3
])  # fmt: skip
def test_grader_score(reply: str, score: float):
    assert grader_score(reply) == score


@pytest.mark.parametrize(("pred", "gold", "same"), [
    ("\\text{ A }", "A", True),
    ("\\text{A} \\text{B}", "A B", False),  # not one enclosing \text{}: only the spaces go
    ("\\tfrac{1}{3}", "\\frac{1}{3}", True),
    ("\\dfrac{1}{3}", "\\frac{1}{3}", True),
    ("\\left( x \\right)", "(x)", True),
    ("a\\!b\\,c\\;d\\:e", "abcde", True),
    ("x\n\ty", "xy", True),
    ("$x$.", "x", True),
    ("x..", "x", True),
    ("  ", "", False),
    ("\\text{}", "", False),
    ("A", "B", False),
    ("1/2", "0.5", True),
    ("2", "x", False),
    ("x", "2", False),
])  # fmt: skip
def test_rule_match_normalising(pred: str, gold: str, same: bool):
    assert rule_match(pred, gold) is same


@pytest.mark.parametrize(("x", "places"), [
    (3.0, 0), (3.2, 1), (3.25, 2), (0.001, 3), (1e-7, 1), (0.1234567, 6), (100.0, 0), (2.5e-5, 6), (12.3456, 4),
])  # fmt: skip
def test_decimal_places_as_vlmevalkit_counts_them(x: float, places: int):
    assert hipho_answers._decimals(x) == places


@pytest.mark.parametrize(("pred", "gold", "same"), [
    (3.2, 3.2, True),
    (3.25, 3.2, True),  # rounded to 1 decimal: 3.2 (banker's) = 3.2
    (3.36, 3.3, False),  # 3.4 vs 3.3
    (100.2, 100.0, True),  # 0 decimals: 100 = 100
    (1.002, 1.0, True),  # 0 decimals
    (1.2, 1.0, True),  # 0 decimals: round(1.2) = 1
    (1.6, 1.0, False),  # 2 vs 1, and 1.60e0 vs 1.00e0
    (0.0, 0.0, True),
    (0.001, 0.0, False),  # gold 0: no relative check; 1.00e-3 vs 0.00e0
    (2.004, 2.0, True),
    (1000.0, 1002.0, True),  # relative 0.002 <= 0.00202
    (1000.0, 1003.0, True),  # relative 0.003, but 1.00e3 vs 1.00e3
    (81.0, 80.0, True),  # 8.10e1 vs 8.00e1 at 0 decimals: 8 = 8
    (86.0, 80.0, False),  # 8.60e1 vs 8.00e1 at 0 decimals: 9 vs 8
    (8.1e5, 8.0e5, True),
    (8.1e5, 8.0e4, False),  # different exponents
    (1.23e-5, 1.2345e-5, True),  # both 6 decimals: 1.2e-5 each
    (1.5e-5, 1.2e-5, False),
    (-3.2, -3.2, True),
    (-3.25, -3.2, True),
])  # fmt: skip
def test_numbers_equal(pred: float, gold: float, same: bool):
    assert numbers_equal(pred, gold) is same


def test_the_relative_tolerance_is_2e_3_times_1_01():
    # integers: 0 decimals, so rounding changes nothing; the scientific check differs at 3 significant figures
    assert numbers_equal(100202.0, 100000.0) is True  # 0.00202 relative; 1.00e5 = 1.00e5 too
    assert numbers_equal(1002.0, 1000.0) is True
    assert numbers_equal(10020.0, 10000.0) is True
    assert hipho_answers.PRECISION == 2e-3
    # relative 0.00203 > 0.00202 but 1.02e3 vs 1.00e3 apart by 0.02 > 0.00202
    assert numbers_equal(1002.03, 1000.0) is True  # 0 decimals: round(1002.03) = 1002 -> 0.002
    assert numbers_equal(1021.0, 1000.0) is True  # 1.02e3 vs 1.0e3 compared at 0 decimals
    assert numbers_equal(1021.0, 1010.0) is False  # 1.02 vs 1.01 at 2 decimals


def test_scientific_comparison_uses_the_fewer_decimals_of_the_bases():
    # 4.56e2 vs 4.50e2 (456 vs 450: 1.3% apart): bases 4.56 (2 decimals) and 4.5 (1): round(4.56, 1) = 4.6 != 4.5
    assert hipho_answers._scientific_equal(456.0, 450.0) is False
    # 4.54e2 vs 4.50e2: round(4.54, 1) = 4.5 = 4.5
    assert hipho_answers._scientific_equal(454.0, 450.0) is True
    assert hipho_answers._scientific_equal(454.0, 45.0) is False
    assert hipho_answers._scientific_equal(4.002, 4.0) is True  # 4.00e0 vs 4.00e0


def _second_grader_score(reply: str) -> float:
    """VLMEvalKit's _extract_score_from_response written again (with its own loops) for the property below."""
    import re

    reply = reply.strip()
    if not reply:
        return 0.0
    for pat in (r"\\boxed\{([^}]+)\}", r"boxed\{([^}]+)\}"):
        for m in re.findall(pat, reply, re.IGNORECASE)[::-1]:
            m = m.strip()
            if m:
                try:
                    return round(float(m), 2)
                except ValueError:
                    nums = re.findall(r"\d+\.?\d*", m)
                    if nums:
                        return round(float(nums[-1]), 2)
    nums = re.findall(r"[0-9]*\.?[0-9]+", reply)
    return round(float(nums[-1]), 2) if nums else 0.0


def test_grader_score_agrees_with_a_second_reading():
    pieces = ["\\boxed{0.4}", "boxed{1}", "\\boxed{a}", "\\boxed{ }", " 2.5 ", "x", "\\boxed{3 pts}", "-0.1", ".75"]
    for a in pieces:
        for b in pieces:
            for c in pieces:
                reply = a + b + c
                assert grader_score(reply) == _second_grader_score(reply), reply


def test_dfrac_and_tfrac_are_frac_in_symbolic_answers():
    assert rule_match("\\dfrac{a}{b}", "\\frac{a}{b}") is True
    assert rule_match("\\tfrac{m}{2}", "\\frac{m}{2}") is True
    assert rule_match("\\dfrac{a}{b}", "\\tfrac{a}{b}") is True


def test_only_trailing_dots_are_dropped():
    assert rule_match("AX", "A") is False and rule_match("A..", "A") is True


def test_an_fbox_group_reads_empty_whatever_its_length():
    assert boxed_answers("\\fbox{123}", 1) == [""]
    assert reference_answer("\\fbox{12345}") == ""


def test_a_python_list_with_a_trailing_comment_is_one_text():
    assert list_cell("[1] # note") == ["[1] # note"]


def test_relative_check_after_rounding_to_the_fewer_decimals():
    # 0.0999 (4 decimals) and 0.1 (1): both 0.1 at 1 decimal; exponents e-2 and e-1, so only the first check holds
    assert numbers_equal(0.0999, 0.1) is True
    # 0.1001 vs 0.0999 at 4 decimals: 0.0002 / 0.0999 = 0.002002 <= 0.00202; 0.1002: 0.003 > 0.00202
    assert numbers_equal(0.1001, 0.0999) is True
    assert numbers_equal(0.1002, 0.0999) is False


def test_a_long_points_text_is_cut_to_60_characters_in_the_message():
    with pytest.raises(ValueError) as caught:
        points_cell("y" * 70)
    assert str(caught.value) == f"{'y' * 60!r} is not a number or a list of numbers"
