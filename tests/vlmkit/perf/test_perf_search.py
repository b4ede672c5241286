"""`--slo ... --search-rate`: the targets' syntax, the verdict rule worked by hand, the search converging on a
simulated service whose latency grows with the rate (exact threshold known), and end to end against the mock server
whose first-token delay grows with the streams it is answering."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from vlmkit.perf.cli import main
from vlmkit.perf.options import PerfInputError
from vlmkit.perf.search import RateSearch, SearchSettings, Target, judge, parse_target


def _level(p99: float | None, *, failed: int = 0, measured: int = 100, duration: float = 10.0,
           median_e2el: float = 100.0) -> dict:
    stats = {"mean": p99, "median": p99, "p90": p99, "p95": p99, "p99": p99, "max": p99, "n": measured}
    return {"label": "x", "requests": {"measured": measured, "failed": failed}, "duration_s": duration,
            "ttft_ms": stats, "tpot_ms": stats, "itl_ms": stats, "e2el_ms": {**stats, "median": median_e2el}}


@pytest.mark.parametrize("text, target", [
    ("ttft_p99<=500ms", Target("ttft", "p99", 500.0)), ("TPOT_P50 <= 0.05s", Target("tpot", "median", 50.0)),
    ("e2el_max<=2000", Target("e2el", "max", 2000.0)),
])
def test_targets(text: str, target: Target) -> None:
    assert parse_target(text) == target


@pytest.mark.parametrize("text", ["ttft<=5", "ttft_p99<5ms", "foo_p99<=5", "ttft_p42<=5", "ttft_p99<=-1ms",
                                  "ttft_p99<=0"])
def test_bad_targets(text: str) -> None:
    with pytest.raises(PerfInputError, match="--slo"):
        parse_target(text)


def test_the_verdict_rule() -> None:
    targets = [Target("ttft", "p99", 500.0)]
    assert judge(_level(499.0), targets, span_s=9.0) == (True, [])
    assert judge(_level(501.0), targets, span_s=9.0)[1] == ["ttft_p99 501 ms > 500 ms"]
    assert judge(_level(None), targets, span_s=9.0)[1] == ["ttft_p99: no value"]
    assert judge(_level(1.0, failed=1), targets, span_s=9.0)[0]  # 1% is allowed
    assert "2 of 100 requests failed" in judge(_level(1.0, failed=2), targets, span_s=9.0)[1][0]
    # steady: duration <= (span + median E2EL) / 0.9: (9 + 0.1) / 0.9 = 10.11 s
    assert judge(_level(1.0, duration=10.1), targets, span_s=9.0)[0]
    assert "not steady" in judge(_level(1.0, duration=10.2), targets, span_s=9.0)[1][0]


def _simulate(threshold: float, settings: SearchSettings) -> RateSearch:
    """A service that meets ttft_p99<=100ms exactly below `threshold` req/s."""
    search = RateSearch(settings, [Target("ttft", "p99", 100.0)])
    while (rate := search.next_rate()) is not None:
        search.record(rate, _level(50.0 if rate <= threshold else 500.0, duration=9.0), span_s=9.0)
    return search


@pytest.mark.parametrize("threshold", [1.7, 13.0, 99.0, 500.0])
def test_the_search_converges_on_the_threshold(threshold: float) -> None:
    settings = SearchSettings(min_rate=1.0, max_rate=1024.0, precision=0.05, max_probes=30)
    search = _simulate(threshold, settings)
    found = search.result()
    best = found["max_sustainable_rate"]
    assert best <= threshold and best >= threshold / (1 + settings.precision)
    lowest_miss = min(p["rate"] for p in search.probes if not p["passed"])
    assert (lowest_miss - best) / best <= settings.precision and lowest_miss > threshold
    # doubling first: 1, 2, 4, ... up to the first miss
    doubling = int(math.floor(math.log2(threshold))) + 2
    assert [p["rate"] for p in search.probes[:doubling]] == [2.0 ** i for i in range(doubling)]


def test_the_ends_of_the_search() -> None:
    settings = SearchSettings(min_rate=2.0, max_rate=16.0, precision=0.05)
    none = _simulate(1.0, settings).result()
    assert none["max_sustainable_rate"] is None and "already misses" in none["verdict"]
    assert len(none["probes"]) == 1
    top = _simulate(1000.0, settings).result()
    assert top["max_sustainable_rate"] == 16.0 and top["at_least"] and "at least 16/s" in top["verdict"]
    capped = _simulate(13.0, SearchSettings(min_rate=1.0, max_rate=1024.0, precision=0.001, max_probes=6))
    assert len(capped.probes) == 6


def _run(mock, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "out"
    code = main(["perf", "--model", "m", "--api-base", mock.base_url, "--out", str(out), "--max-tokens", "4",
                 "--synthetic-image", "4x4", *extra])
    return code, json.loads((out / "perf_summary.json").read_text()) if code == 0 else {}


def test_search_against_a_server_slowing_with_load(mock_server, tmp_path: Path) -> None:
    # each stream in flight adds 15 ms to the next first token; 4 tokens 10 ms apart: the TTFT p99 climbs with the rate
    mock = mock_server("--tokens", "4", "--itl-ms", "10", "--ttft-per-running-ms", "15")
    code, summary = _run(mock, tmp_path, "--slo", "ttft_p99<=100ms", "--search-rate", "--search-min-rate", "10",
                         "--search-max-rate", "640", "--search-precision", "0.3", "--search-requests", "30",
                         "--search-probe-s", "0.1")
    assert code == 0
    search = summary["slo_search"]
    probes = search["probes"]
    assert [lv["search"]["rate"] for lv in summary["levels"]] == [p["rate"] for p in probes]
    assert all(lv["requests"]["measured"] == 30 for lv in summary["levels"])
    best = search["max_sustainable_rate"]
    passed = sorted(p["rate"] for p in probes if p["passed"])
    missed = sorted(p["rate"] for p in probes if not p["passed"])
    # converged, whatever this machine's load made of each probe: the answer is the highest passing rate and a rate
    # within 30% above it missed; or the first rate missed and the search stopped there; or 640/s passed
    if best is None:
        assert [p["rate"] for p in probes] == [10.0] and "already misses" in search["verdict"]
    elif search["at_least"]:
        assert best == 640.0 and not missed
    else:
        assert best == passed[-1] and (min(r for r in missed if r > best) - best) / best <= 0.3
    for probe in probes:  # each verdict is the rule applied to its own figures
        assert probe["passed"] == (not probe["reasons"])
        assert probe["passed"] or probe["reasons"]
    assert (tmp_path / "out" / "plots" / "slo_search.png").is_file()


def test_search_flags_are_checked(mock_server, tmp_path: Path, capsys) -> None:
    mock = mock_server()
    assert _run(mock, tmp_path, "--search-rate")[0] == 2
    assert "--search-rate needs targets" in capsys.readouterr().err
    assert _run(mock, tmp_path, "--search-rate", "--slo", "ttft_p99<=5", "--concurrency", "2")[0] == 2
    assert "chooses the request rates itself" in capsys.readouterr().err
    assert _run(mock, tmp_path, "--search-rate", "--slo", "ttft_p99<=5", "--search-max-rate", "0.5")[0] == 2
    assert "--search-max-rate must be at least" in capsys.readouterr().err
