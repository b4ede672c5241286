"""vlmkit.scoring.common.headline_interval: the interval of `Overall` or one split's `Overall (<split>)` from that
split's rows alone; the Wilson interval worked with its textbook formula here (z = 1.959963984540054)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.common.headline_interval import headline_interval

Z = 1.959963984540054


def _wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


UNITS = pd.DataFrame({
    "hit": [1, 0, 1, 1, 0, 0, 1, 1, 1, 0],
    "split": ["dev"] * 6 + ["test"] * 4,
})


def test_overall_takes_every_row():
    ci = headline_interval(UNITS, "hit", "Overall")
    low, high = _wilson(6, 10)
    assert (ci.n, ci.method, ci.unit) == (10, "wilson", "row")
    assert ci.estimate == pytest.approx(0.6) and ci.low == pytest.approx(low) and ci.high == pytest.approx(high)


def test_a_split_headline_takes_that_splits_rows_only_and_the_factor_scales_it():
    ci = headline_interval(UNITS, "hit", "Overall (test)", factor=100.0, unit="question pair")
    low, high = _wilson(3, 4)
    assert (ci.n, ci.unit, ci.metric) == (4, "question pair", "Overall (test)")
    assert ci.estimate == pytest.approx(75.0)
    assert (ci.low, ci.high) == (pytest.approx(100 * low), pytest.approx(100 * high))
    dev = headline_interval(UNITS, "hit", "Overall (dev)")
    assert dev.n == 6 and dev.estimate == pytest.approx(3 / 6)


def test_graded_scores_get_a_bootstrap_and_text_scores_are_refused():
    graded = pd.DataFrame({"score": [0.5, 1.0, 0.25, 0.0, 0.75]})
    ci = headline_interval(graded, "score", "Overall")
    assert ci.method == "bootstrap_percentile" and ci.estimate == pytest.approx(0.5) and ci.low <= 0.5 <= ci.high
    with pytest.raises(ValueError):
        headline_interval(pd.DataFrame({"score": ["x", "1"]}), "score", "Overall")
