"""The perf client's timestamps are on the host's monotonic clock, so that they can be set beside a server's own:
each request's send, the server's receipt of its body, the server's first write and the client's first token come
in that order (the mock server's --stats times, matched by the tag each prompt carries)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.vlmkit.perf.conftest import ListDataset
from vlmkit.perf import PerfOptions, run_perf


@pytest.mark.parametrize("read_times", [False, True], ids=["kernel_times", "read_times"])
def test_client_and_server_times_are_on_one_clock_and_in_causal_order(mock_server, tmp_path: Path, read_times: bool) -> None:
    stats = tmp_path / "stats.jsonl"
    mock = mock_server("--ttft-ms", "5", "--itl-ms", "2", "--tokens", "3", "--stats", str(stats))
    rows = 8
    dataset = ListDataset([f"[req:{i}] hello" for i in range(rows)])
    options = PerfOptions(model="m", api_base=mock.base_url, concurrency=[2], num_requests=6, warmup=2,
                          read_times=read_times, out_dir=tmp_path / "out", plots=False, quiet=True)
    result = run_perf(dataset, options)
    level = result.levels[0]
    assert ("read by the client" in result.summary["chunk_times"]) == read_times
    mock.proc.terminate()
    mock.proc.wait(timeout=10)  # the server writes --stats as it stops
    served = {r["tag"]: r for r in map(json.loads, stats.read_text().splitlines()) if r["tag"] is not None}
    lines = [json.loads(x) for x in (tmp_path / "out" / "perf_requests.jsonl").read_text().splitlines()]
    measured = [x for x in lines if not x["warmup"]]
    assert len(measured) == 6 and all(x["ok"] for x in measured)
    assert sorted(served) == [str(i) for i in range(rows)]  # every prompt's tag reached the server once
    t0 = level["t0_monotonic_ns"]
    for x in measured:
        server = served[str(x["row"])]
        send = t0 + x["start_ms"] * 1e6
        first = send + x["ttft_ms"] * 1e6
        end = send + x["e2el_ms"] * 1e6
        received = server["arrived_kernel_ns"] or server["arrived_ns"]
        slack = 1e3  # the request lines keep times to the microsecond
        assert send - slack <= received <= server["arrived_ns"]
        assert server["arrived_ns"] <= server["first_ns"] <= server["last_ns"]
        assert server["first_ns"] <= first + slack and server["last_ns"] <= end + slack
        assert server["first_ns"] - received >= 5e6  # the injected TTFT, measured on the server's side


def test_the_first_token_echoes_the_tag_and_untagged_requests_are_recorded(mock_server, tmp_path: Path) -> None:
    import urllib.request

    stats = tmp_path / "stats.jsonl"
    mock = mock_server("--tokens", "2", "--stats", str(stats))
    for prompt in ("[req:abc-1] hi", "no tag"):
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}], "stream": True}).encode()
        request = urllib.request.Request(mock.base_url + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as resp:
            text = resp.read().decode()
        first = json.loads(text.split("data: ", 2)[1].split("\n", 1)[0])
        echoed = first["choices"][0]["delta"]["content"]
        assert echoed == ("[req:abc-1] " if prompt.startswith("[req:") else "tok ")
    mock.proc.terminate()
    mock.proc.wait(timeout=10)
    records = [json.loads(x) for x in stats.read_text().splitlines()]
    assert [r["tag"] for r in records] == ["abc-1", None]
    assert all(r["arrived_ns"] <= r["first_ns"] <= r["last_ns"] for r in records)
