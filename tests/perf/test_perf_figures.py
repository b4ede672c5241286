"""The figures against a server whose delays are known (the mock server, its own process, on 127.0.0.1).

Tolerances are generous on purpose (a loaded 2-core CI machine): they check the computation, not speed.
The mock sends token k at received + TTFT + k * ITL (absolute deadlines), so TPOT and the ITL median are close
to the injected value even when the machine is busy; TTFT and E2EL carry the request's transport and any
scheduling delay, hence the wider band.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.perf.conftest import ListDataset
from vlmkit.perf import PerfOptions, run_perf

TTFT, ITL, TOKENS = 50.0, 25.0, 6
WIDE, NARROW = 15.0, 5.0


def _options(mock, tmp_path: Path, **kw) -> PerfOptions:
    return PerfOptions(model="m", api_base=mock.base_url, out_dir=tmp_path / "out", plots=False, quiet=True, **kw)


def test_figures_match_injected_delays(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", str(TTFT), "--itl-ms", str(ITL), "--tokens", str(TOKENS))
    dataset = ListDataset([f"question {i}" for i in range(12)])
    result = run_perf(dataset, _options(mock, tmp_path, concurrency=[4]))
    level = result.levels[0]
    assert level["requests"]["successful"] == 12 and level["requests"]["failed"] == 0
    assert abs(level["ttft_ms"]["median"] - TTFT) <= WIDE and abs(level["ttft_ms"]["mean"] - TTFT) <= WIDE
    assert abs(level["itl_ms"]["median"] - ITL) <= NARROW
    assert level["itl_ms"]["n"] == 12 * (TOKENS - 1)
    assert abs(level["tpot_ms"]["mean"] - ITL) <= NARROW and level["tpot_ms"]["n"] == 12
    expected_e2el = TTFT + (TOKENS - 1) * ITL
    assert abs(level["e2el_ms"]["median"] - expected_e2el) <= WIDE
    # token counts are the server's usage: completion = tokens sent, prompt = body bytes // 4 in the mock
    bodies = [len(json.dumps(b, ensure_ascii=False, separators=(",", ":")).encode()) for b in mock.bodies()[1:]]
    assert level["tokens"]["output_total"] == 12 * TOKENS and level["tokens"]["output_source"] == "usage"
    assert level["tokens"]["input_total"] == sum(n // 4 for n in bodies)
    assert level["output_token_throughput"] == level["tokens"]["output_total"] / level["duration_s"]
    assert level["request_throughput"] == 12 / level["duration_s"]
    assert level["achieved_concurrency"]["max"] == 4
    # the definitions are in the file, once each
    summary = json.loads((tmp_path / "out" / "perf_summary.json").read_text())
    assert {"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "goodput"} <= set(summary["definitions"])


def test_errors_are_counted_by_kind_and_left_out_of_the_figures(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "20", "--itl-ms", "20", "--tokens", "5", "--faults")
    faults = ["[mock:http500]", "[mock:drop]", "[mock:malformed]", "[mock:hang]", "[mock:error]"]
    prompts = [f"good {i}" for i in range(6)] + faults
    result = run_perf(ListDataset(prompts), _options(mock, tmp_path, concurrency=[6], timeout=1.5))
    level = result.levels[0]
    assert level["requests"]["errors_by_kind"] == {
        "dropped": 1, "http_500": 1, "malformed_sse": 1, "stream_error": 1, "timeout": 1,
    }
    assert level["requests"]["successful"] == 6 and level["requests"]["measured"] == 11
    # latency figures over the 6 successes only: the hung request's 1.5 s is nowhere
    assert level["ttft_ms"]["n"] == 6 and level["e2el_ms"]["n"] == 6 and level["tpot_ms"]["n"] == 6
    assert level["e2el_ms"]["max"] < 1000
    assert abs(level["tpot_ms"]["mean"] - 20) <= NARROW
    lines = [json.loads(x) for x in (tmp_path / "out" / "perf_requests.jsonl").read_text().splitlines()]
    by_error = {line["error"]: line for line in lines}
    assert by_error["http_500"]["status"] == 500 and "injected failure" in by_error["http_500"]["message"]
    assert by_error["timeout"]["ttft_ms"] is None and by_error["timeout"]["e2el_ms"] is None


def test_a_server_without_usage_is_noted_and_chunks_are_counted(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--tokens", "4", "--no-usage")
    result = run_perf(ListDataset(["a", "b", "c"]), _options(mock, tmp_path, concurrency=[2]))
    level = result.levels[0]
    assert level["input_token_throughput"] is None
    assert level["tokens"]["output_total"] == 12 and level["tokens"]["output_source"] == "chunks"
    assert any("no usage" in note for note in level["notes"])
    assert result.summary["probe"]["usage"] is False


def test_goodput_counts_requests_within_every_slo(mock_server, tmp_path: Path) -> None:
    mock = mock_server("--ttft-ms", "20", "--itl-ms", "10", "--tokens", "3", "--faults")
    prompts = ["fast"] * 4 + ["[mock:http500]"] * 2
    slo = {"ttft": 1000.0, "tpot": 1000.0, "e2el": 5000.0}
    level = run_perf(ListDataset(prompts), _options(mock, tmp_path, concurrency=[2], slo=slo)).levels[0]
    assert level["goodput"]["good_requests"] == 4
    assert level["goodput"]["fraction"] == 4 / 6
    strict = run_perf(ListDataset(prompts), _options(mock, tmp_path, concurrency=[2], slo={"ttft": 1.0})).levels[0]
    assert strict["goodput"]["good_requests"] == 0
