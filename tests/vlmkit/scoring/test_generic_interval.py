"""EvalResult.with_generic_interval: a scorer that computes no interval gets one where its headline is the plain mean
of its rows (or circular groups), checked against the headline; none where the headline is built otherwise.
Expected values worked by hand (the Wilson interval of 3 of 4: docs/error_bars.md's formula)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.common.intervals import Interval
from vlmkit.scoring.result import EvalResult

Z = 1.959963984540054


def wilson_by_hand(hits: int, n: int) -> tuple[float, float]:
    p, z2 = hits / n, Z * Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return centre - half, centre + half


def result(per_sample: pd.DataFrame, value: float, **kwargs) -> EvalResult:
    return EvalResult("some_kind", {"Overall": value}, "Overall", per_sample, **kwargs).with_generic_interval()


def test_a_mean_of_hits_gets_wilson_on_its_scale() -> None:
    rows = pd.DataFrame({"index": [1, 2, 3, 4], "hit": [True, True, False, True]})
    low, high = wilson_by_hand(3, 4)
    fraction = result(rows, 0.75).primary_interval
    assert fraction is not None and fraction.method == "wilson" and fraction.n == 4
    assert (fraction.low, fraction.high) == (pytest.approx(low), pytest.approx(high))
    percent = result(rows, 75.0).primary_interval
    assert (percent.low, percent.high) == (pytest.approx(100 * low), pytest.approx(100 * high))


def test_graded_scores_get_a_bootstrap_and_a_named_column_counts() -> None:
    rows = pd.DataFrame({"index": [1, 2, 3], "Overall": [0.5, 1.0, 0.0]})  # text QA names its column as the metric
    ci = result(rows, 0.5).primary_interval
    assert ci is not None and ci.method == "bootstrap_percentile" and ci.low <= 0.5 <= ci.high


def test_circular_groups_are_the_units() -> None:
    rows = pd.DataFrame({"index": [1, 1000001, 2, 1000002], "hit": [True, True, True, False],
                         "group": [1, 1, 2, 2], "group_hit": [True, True, False, False]})
    ci = result(rows, 50.0).primary_interval  # one of two groups right
    low, high = wilson_by_hand(1, 2)
    assert ci is not None and ci.n == 2 and ci.unit == "circular group"
    assert (ci.low, ci.high) == (pytest.approx(100 * low), pytest.approx(100 * high))


def test_no_interval_where_the_headline_is_not_the_mean_of_the_rows() -> None:
    rows = pd.DataFrame({"index": [1, 2, 3, 4], "hit": [True, True, False, True]})
    assert result(rows, 0.5).interval is None  # e.g. a mean of categories, or errors counted as misses
    assert result(pd.DataFrame({"index": [1], "read": ["x"]}), 1.0).interval is None  # no per-row outcome
    own = Interval("Overall", 0.75, 0.1, 0.9, 0.2, "wilson", 4)
    kept = result(rows, 0.75, interval=own)
    assert kept.interval is own  # a scorer's own interval is never replaced
