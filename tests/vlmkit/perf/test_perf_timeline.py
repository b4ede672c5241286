"""The level's timeline (vlmkit.perf.timeline) and the thinned lag samples: bounded whatever the run's length, totals
kept when bins merge, the live in-flight maximum exact in one process, an upper bound over several; and the lazy
open-loop schedule equal to the list it replaces."""

from __future__ import annotations

from array import array

import numpy as np

from vlmkit.perf.schedule import Arrivals, arrival_offsets
from vlmkit.perf.timeline import FIRST_BIN_NS, MAX_BINS, SAMPLE_MAX, OrderedSample, Timeline


def test_in_flight_peak_is_exact_and_ends_come_before_starts() -> None:
    t = Timeline(0)
    t.started(0)
    t.started(5)
    t.ended(10, True, 3)
    t.started(10)  # one ended as another started: still 2
    t.ended(20, True, 4)
    t.ended(30, False, 0)
    assert t.peak == 2 and t.flight == 0
    series = t.series()
    assert series["completed"].sum() == 2 and series["tokens"].sum() == 7


def test_a_long_run_merges_bins_and_keeps_every_total() -> None:
    t = Timeline(0)
    n = 50_000
    for i in range(n):  # one request every 20 ms, 100 s in all: more than MAX_BINS bins of 10 ms
        start = i * 20_000_000
        t.started(start)
        t.ended(start + 5_000_000, i % 10 != 0, 2)
    series = t.series()
    assert series["completed"].size <= MAX_BINS and t.width > FIRST_BIN_NS
    assert series["completed"].sum() == n - n // 10 and series["tokens"].sum() == 2 * (n - n // 10)
    assert t.peak == 1 and series["flight_max"].max() == 1


def test_merged_timelines_add_counts_and_bound_the_peak() -> None:
    a, b = Timeline(0), Timeline(0)
    for t in (a, b):
        t.started(1_000_000)
        t.started(2_000_000)
        t.ended(3_000_000, True, 1)
        t.ended(4_000_000, True, 1)
    a.merge(b)
    assert a.series()["completed"].sum() == 4
    assert a.peak == 4  # each process had 2 at once in the same bin: the sum is the upper bound


def test_the_ordered_sample_is_bounded_spread_and_keeps_the_max() -> None:
    s = OrderedSample()
    n = SAMPLE_MAX * 5 + 3
    for i in range(n):
        s.append(i)
    values = s.values()
    assert len(values) <= SAMPLE_MAX and values[-1] == n - 1
    assert values[0] == 0 and np.all(np.diff(np.frombuffer(values, dtype=np.int64)) > 0)
    assert isinstance(values, array)


def test_the_lazy_schedule_equals_the_list_and_shares_it() -> None:
    whole = arrival_offsets(50.0, 1.0, 3, count=1000)
    lazy = Arrivals(50.0, 1.0, 3, 1000, None)
    assert list(lazy) == whole and len(lazy) == 1000
    for w in range(3):
        assert list(lazy[w::3]) == whole[w::3] and len(lazy[w::3]) == len(whole[w::3])
    timed = Arrivals(50.0, 1.0, 3, None, 2.0)
    assert list(timed) == arrival_offsets(50.0, 1.0, 3, duration=2.0)
