"""vlmkit.perf.groups.KeyedTally: requests, successes, TTFT and prompt tokens per group of a level's requests, merged
across processes; figures worked by hand."""

from __future__ import annotations

import pytest

from vlmkit.perf.groups import KeyedTally


def _tally(events: list[tuple[int, bool, float | None, int | None]]) -> KeyedTally:
    tally = KeyedTally()
    for event in events:
        tally.add(*event)
    return tally


EVENTS = [
    (1, True, 10.0, 100),
    (1, True, 30.0, None),  # no usage: not in the token mean
    (1, False, 99.0, 500),  # a failed request: counted as sent, nothing else
    (1, True, None, 300),  # no first token time
    (0, True, 5.0, 40),
    (0, False, None, None),
]


def test_each_key_counts_its_own_requests_and_only_successes_give_figures():
    tally = _tally(EVENTS)
    one = tally.row(1)
    assert (one["requests"], one["successful"]) == (4, 3)
    assert one["ttft_ms"]["n"] == 2 and one["ttft_ms"]["mean"] == pytest.approx(20.0)
    assert one["ttft_ms"]["median"] == pytest.approx(20.0) and one["ttft_ms"]["max"] == pytest.approx(30.0)
    assert one["prompt_tokens_mean"] == pytest.approx((100 + 300) / 2)
    zero = tally.row(0)
    assert (zero["requests"], zero["successful"], zero["prompt_tokens_mean"]) == (2, 1, 40.0)
    assert zero["ttft_ms"]["n"] == 1 and zero["ttft_ms"]["max"] == pytest.approx(5.0)


def test_a_key_never_seen_or_without_usage_has_no_figures():
    empty = KeyedTally().row(7)
    assert (empty["requests"], empty["successful"], empty["prompt_tokens_mean"]) == (0, 0, None)
    assert empty["ttft_ms"]["n"] == 0 and empty["ttft_ms"]["mean"] is None
    assert _tally([(2, True, 1.0, None)]).row(2)["prompt_tokens_mean"] is None


def test_merging_two_processes_tallies_equals_one_tally_of_every_request():
    whole = _tally(EVENTS)
    first, second = _tally(EVENTS[:3]), _tally(EVENTS[3:])
    first.merge(second)
    assert sorted(first.groups) == [0, 1]
    for key in (0, 1):
        assert first.row(key) == whole.row(key)
    # the other side is left as it was
    assert second.row(1)["requests"] == 1 and second.row(0)["requests"] == 2
