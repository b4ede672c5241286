"""The Prometheus text parser against what servers send and against hostile text: a bad line is skipped and counted,
never an exception; a good one is read exactly (values worked by hand)."""

from __future__ import annotations

import math

import pytest

from vlmkit.perf.promtext import LINE_LIMIT, Sample, parse, parse_line, totals
from vlmkit.perf.server_metrics import Summary, reduce

VLLM = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 2.0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.75
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000.0
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 250.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 12.0
"""


def test_a_vllm_exposition() -> None:
    parsed = parse(VLLM)
    assert parsed.skipped == 0 and len(parsed.samples) == 7
    assert parsed.samples[0] == Sample("vllm:num_requests_running", (("engine", "0"), ("model_name", "m")), 3.0)
    # sums over label sets, fractions averaged: running 3+2, KV (0.25+0.75)/2
    assert reduce(VLLM) == {"running": 5.0, "kv_cache_usage": 0.5, "prefix_cache_queries": 1000.0,
                            "prefix_cache_hits": 250.0}


@pytest.mark.parametrize("line, sample", [
    ('a{b="x\\"y",c="}{,"} 1', Sample("a", (("b", 'x"y'), ("c", "}{,")), 1.0)),
    ('a{b="back\\\\slash\\nnew",} 2 1700000000000', Sample("a", (("b", "back\\slash\nnew"),), 2.0)),
    ("a_b:c 1e3", Sample("a_b:c", (), 1000.0)),
    ("a { } -Inf", None),  # a space between the name and its labels: not a sample
    ("a{} +Inf", Sample("a", (), math.inf)),
    ("  a{ x = \"1\" } 4  ", None),  # spaces around = are not the format
])
def test_lines(line: str, sample: Sample | None) -> None:
    assert parse_line(line) == sample


@pytest.mark.parametrize("line", [
    "a{b=\"unterminated} 1", "a{b=x} 1", "a{=\"x\"} 1", "a{b=\"\\q\"} 1", "a", "a 1 2 3", "a one", "1a 2",
    "a{b=\"x\"}1 2 x", "a{b=\"x\" c=\"y\"} 1", "a" * (LINE_LIMIT + 1) + " 1", "\x00\x01 1", "a{b=\"x\"",
])
def test_hostile_lines_are_skipped(line: str) -> None:
    assert parse_line(line) is None
    parsed = parse("ok 1\n" + line + "\n# comment\n\nok 2\n")
    assert parsed.skipped == 1 and [s.value for s in parsed.samples if s.name == "ok"] == [1.0, 2.0]


def test_bytes_that_are_not_utf8_and_nan() -> None:
    parsed = parse(b"x{l=\"\xff\xfe\"} 1\ny NaN\nz 3\n")
    assert parsed.samples[0].labels == (("l", "\ufffd\ufffd"),)
    assert math.isnan(parsed.samples[1].value)
    assert totals(parsed) == {"x": (1.0, 1), "z": (3.0, 1)}  # NaN is no figure


def test_summary_counts_increases_and_thins() -> None:
    summary = Summary()
    for i in range(1500):
        summary.add(float(i), {"running": float(i % 4), "prefix_cache_queries": 100.0 * i,
                               "prefix_cache_hits": 30.0 * i, "prompt_tokens": 10.0 * i})
    result = summary.result("http://x/metrics")
    assert result["gauges"]["running"] == {"min": 0.0, "mean": 1.5, "max": 3.0}
    assert result["prefix_cache_hit_rate"] == pytest.approx(0.3)
    assert result["per_s"] == {"prompt_tokens": pytest.approx(10.0)}
    assert result["span_s"] == 1499.0
    assert len(result["series"]["rows"]) < 600  # bounded, whatever the length
