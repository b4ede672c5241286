"""The perf timeline: rates over a sliding window (steady load draws a flat line, not a zig-zag of bins),
requests/s and tokens/s on axes of their own, and requests in flight as a step function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vlmkit.perf.plots import in_flight, rolling_rate, timeline


def test_a_steady_rate_is_flat_where_the_window_is_full():
    ends = np.arange(0.05, 10.0, 0.1)  # 10 completions a second for 10 s, between any fixed bin edges
    grid = np.linspace(1.0, 10.0, 91)  # from the first full window on
    assert np.allclose(rolling_rate(ends, grid, 1.0), 10.0)
    assert np.allclose(rolling_rate(ends, grid, 1.0, weights=np.full(ends.size, 16)), 160.0)


def test_the_window_counts_what_ended_in_it_and_nothing_else():
    ends = [0.2, 0.4, 2.5, 2.6, 2.7]
    # at t = 1.0 the window (0, 1] holds 2 ends; at 2.65 the window (1.65, 2.65] holds 2; at 5 none
    assert list(rolling_rate(ends, [1.0, 2.65, 5.0], 1.0)) == [2.0, 2.0, 0.0]
    assert list(rolling_rate(ends, [0.4], 0.5)) == [4.0]  # (−0.1, 0.4]: both ends, an end exactly at t counts


def test_in_flight_counts_ends_before_starts_at_one_instant():
    xs, levels = in_flight(starts=[0.0, 1.0, 1.0], ends=[1.0, 2.0, 3.0])
    # at 1.0 the first request ends as two start: never 3 in flight
    assert max(levels) == 2 and levels[-1] == 0
    assert list(zip(xs, levels)) == [(0.0, 0), (0.0, 1), (1.0, 0), (1.0, 1), (1.0, 2), (2.0, 1), (3.0, 0)]


def test_the_timeline_draws_three_panels(tmp_path: Path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from vlmkit.perf.client import Record

    t0 = 1_000_000_000
    records = []
    for i in range(40):
        record = Record(n=i, row=i, max_tokens=8, sched=t0 + int(i * 1e8))
        record.start, record.end, record.output_tokens = t0 + int(i * 1e8), t0 + int(i * 1e8 + 5e8), 8
        records.append(record)
    timeline(tmp_path / "t.png", "c=4", records, t0)
    with Image.open(tmp_path / "t.png") as drawn:
        assert drawn.size == (1000, 900)  # 10 x 9 inches at 100 dpi: three panels one above the other
