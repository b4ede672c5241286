"""headline_interval's choice of rows (mutation round 4): which rows a headline name selects, by names worked out
here; the Wilson interval from its textbook formula."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.common.headline_interval import headline_interval

Z = 1.959963984540054


def wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


UNITS = pd.DataFrame({"hit": [1, 1, 0, 1, 0, 0, 0], "split": ["a (b)", "a (b)", "a (b)", "c", "c", "c", "c"]})


def test_a_split_name_holding_brackets() -> None:
    ci = headline_interval(UNITS, "hit", "Overall (a (b))")
    assert ci.n == 3 and ci.estimate == pytest.approx(2 / 3)
    assert (ci.low, ci.high) == pytest.approx(wilson(2, 3))
    assert ci.metric == "Overall (a (b))" and ci.unit == "row"


def test_names_that_are_not_a_split_headline_take_every_row() -> None:
    for name in ("Overall", "Overall (c", "Overall c)", "Acc (c)"):
        ci = headline_interval(UNITS, "hit", name)
        assert ci.n == 7 and ci.estimate == pytest.approx(3 / 7) and ci.metric == name


def test_unit_row_given_explicitly_and_other_units() -> None:
    assert headline_interval(UNITS, "hit", "Overall (c)", unit="row").unit == "row"
    ci = headline_interval(UNITS, "hit", "Overall (c)", factor=10.0, unit="circular group")
    assert ci.unit == "circular group" and ci.n == 4 and ci.estimate == pytest.approx(2.5)
    assert (ci.low, ci.high) == pytest.approx(tuple(10 * v for v in wilson(1, 4)))
    assert ci.method == "wilson"


def test_numbers_as_text_are_read() -> None:
    units = pd.DataFrame({"hit": ["1", "0", "1", "1"]})
    ci = headline_interval(units, "hit", "Overall")
    assert ci.method == "wilson" and ci.estimate == pytest.approx(0.75)
