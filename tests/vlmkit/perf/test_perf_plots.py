"""The perf timeline: rates over a sliding window (steady load draws a flat line, not a zig-zag of bins),
requests/s and tokens/s on axes of their own, and the most requests in flight per timeline bin as a step function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vlmkit.perf.plots import rolling_rate, timeline
from vlmkit.perf.timeline import Timeline


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


def test_the_timeline_draws_three_panels(tmp_path: Path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    t0 = 1_000_000_000
    course = Timeline(t0)
    for i in range(40):  # a request every 0.1 s, each 0.5 s long with 8 tokens
        course.started(t0 + int(i * 1e8))
        course.ended(t0 + int(i * 1e8 + 5e8), True, 8)
    timeline(tmp_path / "t.png", "c=4", course)
    with Image.open(tmp_path / "t.png") as drawn:
        assert drawn.size == (1000, 900)  # 10 x 9 inches at 100 dpi: three panels one above the other
