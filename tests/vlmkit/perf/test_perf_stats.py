"""vlmkit.perf.metrics called directly on hand-made records, every expected figure worked by hand: the count of
requests in flight (and the order of a start and an end at the same instant), the per-request figures' edge cases,
the goodput rules, the token sources and notes."""

from __future__ import annotations

import pytest

from vlmkit.perf.client import Record
from vlmkit.perf.metrics import DEFINITIONS, STATS, in_flight_max, output_tokens, per_request, summarize

MS = 1_000_000  # ns
T0 = 1000.0  # ms: a start of 0 means "never sent", so every hand-made time counts from here


def _rec(start: float, end: float, chunks: tuple[float, ...] = (), *, sched: float | None = None,
         output: int | None = None, prompt: int | None = None, error: str | None = None, n: int = 0) -> Record:
    """A finished request, times in ms after T0."""
    rec = Record(n, 0, 16, int((T0 + (start if sched is None else sched)) * MS))
    rec.start, rec.end = int((T0 + start) * MS), int((T0 + end) * MS)
    rec.chunks.extend(int((T0 + c) * MS) for c in chunks)
    rec.output_tokens, rec.input_tokens, rec.error = output, prompt, error
    rec.status = 200 if error is None else 500
    rec.finished = error is None
    return rec


def test_a_request_ending_as_another_starts_is_not_in_flight_with_it() -> None:
    # A 0-10 and B 10-20 touch at 10 ms; C 0-20 spans both. At 10 ms A ends as B starts: counting the end first,
    # at most two are in flight (A+C, then B+C); counting the start first would see A, B and C at once.
    records = [_rec(0, 10), _rec(10, 20), _rec(0, 20)]
    assert in_flight_max(records) == 2
    assert in_flight_max([_rec(0, 10), _rec(10, 20)]) == 1  # back to back: never two at once
    assert in_flight_max(list(reversed(records))) == 2  # whatever the records' order


def test_in_flight_counts_overlaps() -> None:
    assert in_flight_max([]) == 0
    assert in_flight_max([_rec(0, 5)]) == 1
    # 0-10, 1-9, 2-8 nested: three at once at 2 ms; then 20-30 alone
    assert in_flight_max([_rec(0, 10), _rec(1, 9), _rec(2, 8), _rec(20, 30)]) == 3
    # four that all start together
    assert in_flight_max([_rec(0, 1), _rec(0, 2), _rec(0, 3), _rec(0, 4)]) == 4


def test_achieved_concurrency_in_a_level() -> None:
    # A 0-10, B 10-20, C 0-20: duration 20 ms, 40 ms in flight in all -> mean 2; max 2 (see above)
    level = summarize([_rec(0, 10, (5,)), _rec(10, 20, (15,)), _rec(0, 20, (10,))], {})
    assert level["achieved_concurrency"] == {"mean": pytest.approx(2.0), "max": 2}
    assert level["duration_s"] == pytest.approx(0.020)
    assert level["request_throughput"] == pytest.approx(3 / 0.020)


def test_per_request_edge_cases() -> None:
    # a success with no content: E2EL only
    fig = per_request(_rec(0, 30, sched=0))
    assert (fig["ttft_ms"], fig["tpot_ms"], fig["e2el_ms"], fig["itl_ms"]) == (None, None, 30, [])
    assert (fig["output_tokens"], fig["output_tokens_source"]) == (0, "chunks")
    # one chunk holding 3 tokens by usage: TTFT 10, E2EL 40, TPOT (40 - 10) / 2 = 15, no gaps
    fig = per_request(_rec(0, 40, (10,), output=3))
    assert (fig["ttft_ms"], fig["tpot_ms"], fig["e2el_ms"], fig["itl_ms"]) == (10, 15, 40, [])
    # usage says 2 tokens over 3 chunks: usage wins; TPOT (50 - 5) / 1 = 45; ITL 5 then 30
    fig = per_request(_rec(0, 50, (5, 10, 40), output=2))
    assert (fig["tpot_ms"], fig["itl_ms"], fig["output_tokens"]) == (45, [5, 30], 2)
    # usage of 1 token: no TPOT even with several chunks
    assert per_request(_rec(0, 50, (5, 10), output=1))["tpot_ms"] is None
    # queued: from due to handed over; a request never started has no queue time
    assert per_request(_rec(12, 20, (15,), sched=4.5))["queued_ms"] == 7.5
    never = Record(9, 0, 16, 5 * MS)
    assert per_request(never)["queued_ms"] is None and per_request(never)["e2el_ms"] is None


def test_output_tokens_prefer_usage_over_chunks() -> None:
    assert output_tokens(_rec(0, 10, (1, 2, 3), output=7)) == (7, "usage")
    assert output_tokens(_rec(0, 10, (1, 2, 3), output=0)) == (0, "usage")  # a usage of 0 is still the server's
    assert output_tokens(_rec(0, 10, (1, 2, 3))) == (3, "chunks")


def test_goodput_limits_are_inclusive_and_each_one_counts() -> None:
    records = [
        _rec(0, 100, (20, 60, 100), output=3),  # TTFT 20, TPOT (100 - 20) / 2 = 40, E2EL 100
        _rec(0, 100, (30,), output=1),  # TTFT 30, no TPOT, E2EL 100
        _rec(0, 50, error="http_500"),  # failed: never good, counted in the fraction's denominator
    ]
    good = lambda slo: summarize(records, slo)["goodput"]["good_requests"]  # noqa: E731
    assert good({"ttft": 20.0}) == 1 and good({"ttft": 30.0}) == 2 and good({"ttft": 19.9}) == 0
    assert good({"tpot": 40.0}) == 2 and good({"tpot": 39.9}) == 1  # no TPOT meets the limit
    assert good({"e2el": 100.0}) == 2 and good({"e2el": 99.9}) == 0
    assert good({"ttft": 25.0, "e2el": 100.0}) == 1
    level = summarize(records, {"ttft": 30.0})
    assert level["goodput"]["fraction"] == pytest.approx(2 / 3)
    assert level["goodput"]["per_s"] == pytest.approx(2 / 0.100)
    assert summarize(records, {})["goodput"] is None
    # a success without content has no TTFT: it misses any TTFT limit
    assert summarize([_rec(0, 10)], {"ttft": 1e9})["goodput"]["good_requests"] == 0
    assert summarize([_rec(0, 10)], {"e2el": 1e9})["goodput"]["good_requests"] == 1


def test_token_sources_and_notes() -> None:
    usage = [_rec(0, 10, (5,), output=4, prompt=3), _rec(0, 20, (5,), output=6, prompt=5)]
    level = summarize(usage, {})
    assert level["tokens"] == {"input_total": 8, "output_total": 10, "output_source": "usage"}
    assert level["input_token_throughput"] == pytest.approx(8 / 0.020)
    assert level["output_token_throughput"] == pytest.approx(10 / 0.020)
    assert level["notes"] == []
    chunks = [_rec(0, 10, (2, 4)), _rec(0, 20, (5, 6, 7))]
    level = summarize(chunks, {})
    assert level["tokens"] == {"input_total": None, "output_total": 5, "output_source": "chunks"}
    assert level["input_token_throughput"] is None
    assert len(level["notes"]) == 1 and "sent no usage" in level["notes"][0]
    level = summarize([_rec(0, 10, (2,), output=4, prompt=3), _rec(0, 10)], {})
    assert level["tokens"]["output_source"] == "mixed" and level["tokens"]["input_total"] == 3
    assert any("1 successful request(s) streamed no content" in note for note in level["notes"])
    assert any("1 of 2 successful requests came without usage" in note for note in level["notes"])


def test_cancelled_and_unsent_requests_are_in_no_figure() -> None:
    unsent = Record(5, 0, 16, 0)  # never handed to the client: start 0
    records = [_rec(10, 30, (20,), output=1), _rec(15, 500, error="cancelled"), unsent]
    level = summarize(records, {})
    assert level["requests"] == {"measured": 1, "successful": 1, "failed": 0, "errors_by_kind": {}, "cancelled": 1}
    assert level["duration_s"] == pytest.approx(0.020)  # the cancelled request's 500 ms end is not in it
    assert level["e2el_ms"]["n"] == 1 and level["e2el_ms"]["max"] == 20
    errors = summarize([_rec(0, 5, error="timeout"), _rec(0, 5, error="timeout"), _rec(0, 5, error="dropped")], {})
    assert errors["requests"]["errors_by_kind"] == {"dropped": 1, "timeout": 2}
    assert list(errors["requests"]["errors_by_kind"]) == ["dropped", "timeout"]  # sorted by kind
    assert errors["request_throughput"] == 0 and errors["e2el_ms"]["n"] == 0


def test_a_level_of_zero_duration_has_no_rates() -> None:
    level = summarize([_rec(5, 5)], {"e2el": 1.0})
    assert level["duration_s"] == 0
    assert level["request_throughput"] is None and level["achieved_concurrency"]["mean"] is None
    assert level["goodput"]["per_s"] is None and level["goodput"]["good_requests"] == 1


def test_every_statistic_and_figure_is_defined() -> None:
    assert STATS == ("mean", "median", "p90", "p95", "p99", "max")
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "queued_ms", "achieved_concurrency", "goodput", "stats"):
        assert DEFINITIONS[key].strip()


def test_an_end_takes_exactly_one_request_out_of_flight() -> None:
    # 0-1 alone, then 2-5 and 3-6 overlap: two at once, whatever came and went before
    assert in_flight_max([_rec(0, 1), _rec(2, 5), _rec(3, 6)]) == 2


def test_durations_are_nanoseconds_to_seconds_exactly() -> None:
    level = summarize([_rec(0, 10, (5,)), _rec(10, 20, (15,)), _rec(0, 20, (10,))], {})
    assert level["duration_s"] == pytest.approx(0.020, rel=1e-12)
    assert level["achieved_concurrency"]["mean"] == pytest.approx(2.0, rel=1e-12)
    assert level["request_throughput"] == pytest.approx(150.0, rel=1e-12)


def test_missing_input_tokens_count_zero_and_the_notes_are_whole_sentences() -> None:
    level = summarize([_rec(0, 10, (5,), output=4, prompt=None), _rec(0, 10, (5,), output=2, prompt=6)], {})
    assert level["tokens"]["input_total"] == 6  # a usage without prompt_tokens adds nothing
    level = summarize([_rec(0, 10, (2, 4)), _rec(0, 20, (5, 6, 7))], {})
    assert level["notes"] == [
        "the server sent no usage (stream_options.include_usage was asked for): input token throughput is unknown "
        "and output tokens are counted as content chunks, an estimate"
    ]
    level = summarize([_rec(0, 10, (2,), output=4, prompt=3), _rec(0, 10, (3,))], {})
    assert level["notes"] == [
        "1 of 2 successful requests came without usage: their output tokens are counted as content chunks and "
        "their input tokens are missing from the input throughput"
    ]


def test_goodput_of_a_level_with_nothing_sent() -> None:
    goodput = summarize([], {"ttft": 1.0})["goodput"]
    assert goodput == {"slo_ms": {"ttft": 1.0}, "good_requests": 0, "per_s": None, "fraction": None}
