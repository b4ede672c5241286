"""The retry timing of API calls, called directly: how long `RetryPolicy.delay` waits and what
`parse_retry_after` reads from a Retry-After header. Every expected value is worked by hand from the documented
rule (first wait `backoff`, doubled per attempt, capped at 60 s, plus a jitter of at most a tenth; a server's
Retry-After replaces the computed wait and is capped at 120 s)."""

from __future__ import annotations

import email.utils
import time

import pytest

from vlm.api.http import MAX_BACKOFF_S, MAX_RETRY_AFTER_S, RetryPolicy, parse_retry_after


def _within(value: float, low: float, high: float) -> bool:
    return low <= value <= high


def test_the_caps_are_the_documented_ones() -> None:
    assert MAX_BACKOFF_S == 60.0 and MAX_RETRY_AFTER_S == 120.0


@pytest.mark.parametrize(
    "attempt, low, high",
    [
        (0, 1.0, 1.1),  # backoff 1 s, jitter up to 0.1 s
        (1, 2.0, 2.2),
        (2, 4.0, 4.4),  # linear growth would give 3 s, outside
        (3, 8.0, 8.8),
        (5, 32.0, 35.2),
        (6, 60.0, 66.0),  # 64 s capped at 60
        (20, 60.0, 66.0),  # 1,048,576 s capped at 60
    ],
)
def test_backoff_doubles_from_the_first_wait_and_is_capped(attempt: int, low: float, high: float) -> None:
    for seed in range(5):
        assert _within(RetryPolicy(backoff=1.0, seed=seed).delay(attempt), low, high)


def test_backoff_scales_with_the_first_wait() -> None:
    policy = RetryPolicy(backoff=0.5, seed=3)
    assert _within(policy.delay(0), 0.5, 0.55)
    assert _within(policy.delay(4), 8.0, 8.8)  # 0.5 * 2**4
    assert _within(policy.delay(7), 60.0, 66.0)  # 0.5 * 128 = 64, capped
    assert _within(RetryPolicy(backoff=0.0).delay(9), 0.0, 0.0)  # no backoff: no wait at all


def test_jitter_is_seeded_and_not_constant() -> None:
    a, b = RetryPolicy(backoff=1.0, seed=7), RetryPolicy(backoff=1.0, seed=7)
    waits_a = [a.delay(0) for _ in range(20)]
    assert waits_a == [b.delay(0) for _ in range(20)]  # the same seed, the same waits
    assert len(set(waits_a)) > 1 and all(1.0 <= w <= 1.1 for w in waits_a)
    # some jitter is added: over 20 draws the waits are not all at the bottom of the range
    assert max(waits_a) > 1.0


def test_a_servers_retry_after_replaces_the_backoff() -> None:
    policy = RetryPolicy(backoff=1.0, seed=0)
    assert policy.delay(0, retry_after=5.0) == 5.0  # not 1 s, and no jitter on a server's figure
    assert policy.delay(6, retry_after=2.5) == 2.5  # not 60 s either
    assert policy.delay(3, retry_after=0.0) == 0.0  # "retry now" is honoured
    assert policy.delay(0, retry_after=120.0) == 120.0  # at the cap: kept


def test_a_retry_after_of_a_day_is_capped() -> None:
    policy = RetryPolicy(backoff=1.0, seed=0)
    assert policy.delay(0, retry_after=86400.0) == 120.0
    assert policy.delay(0, retry_after=120.5) == 120.0
    assert policy.delay(0, retry_after=parse_retry_after("86400")) == 120.0


def test_retry_after_in_seconds() -> None:
    assert parse_retry_after("86400") == 86400.0  # parsed as given: the cap is the policy's business
    assert parse_retry_after("0") == 0.0
    assert parse_retry_after("  7 ") == 7.0
    assert parse_retry_after("2.25") == 2.25
    assert parse_retry_after("-5") == 0.0  # a negative wait is no wait
    assert parse_retry_after("") is None and parse_retry_after(None) is None
    assert parse_retry_after("in a while") is None


def test_retry_after_as_an_http_date() -> None:
    # Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 s after the epoch:
    # 16729 days (45 years from 1970 with 11 leap days, then Jan-Sep 2015 = 273 days, then 20) * 86400 + 7:28
    when = 1445412480.0
    header = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert parse_retry_after(header, now=when - 30.0) == 30.0
    assert parse_retry_after(header, now=when - 86400.0) == 86400.0
    assert parse_retry_after(header, now=when + 10.0) == 0.0  # a date in the past: retry now
    assert RetryPolicy().delay(1, retry_after=parse_retry_after(header, now=when - 86400.0)) == 120.0
    assert parse_retry_after("Wed, 99 Foo 2015 07:28:00 GMT", now=when) is None


def test_an_http_date_is_measured_from_the_clock_when_no_time_is_given() -> None:
    an_hour_ahead = email.utils.formatdate(time.time() + 3600, usegmt=True)
    wait = parse_retry_after(an_hour_ahead)  # from the current time: about 3600 s whatever the date today
    assert wait is not None and 3000.0 < wait <= 3601.0
    assert parse_retry_after(email.utils.formatdate(time.time() - 3600, usegmt=True)) == 0.0
