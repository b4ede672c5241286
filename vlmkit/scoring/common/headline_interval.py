"""The interval of a headline that is a mean over units, `Overall` or one split's `Overall (<split>)`
(vlmkit.scoring.common.breakdown.split_headline): the units of that split only, Wilson for 0/1 hits, a bootstrap for
graded scores (vlmkit.scoring.common.intervals.mean_interval)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from vlmkit.scoring.common.breakdown import split_series
from vlmkit.scoring.common.intervals import Interval, mean_interval


def headline_interval(units: pd.DataFrame, value_col: str, primary: str, *, factor: float = 1.0,
                      unit: str = "row") -> Interval:
    """The interval of `primary` (`Overall` or `Overall (<split>)`) over `units[value_col]` (on the unit scale; the
    metric is that mean times `factor`)."""
    values = pd.to_numeric(units[value_col]).astype(float)
    if primary.startswith("Overall (") and primary.endswith(")"):
        values = values[(split_series(units) == primary[len("Overall ("):-1]).to_numpy()]
    ci = mean_interval(values.to_numpy(), primary, factor=factor)
    return replace(ci, unit=unit)
