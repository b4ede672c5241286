"""Several servers behind one perf run (`--api-base A,B`): requests spread by least-in-flight, each server's counts
and figures in the summary and on each request's line, and a server killed midway: its requests count as its
errors, the other carries on, the run ends and every count adds up."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.vlmkit.perf.conftest import ListDataset
from vlmkit.perf import PerfOptions, run_perf
from vlmkit.perf.api import target_for
from vlmkit.perf.balance import DOWN_AFTER, Balancer
from vlmkit.perf.client import Record
from vlmkit.perf.options import PerfInputError

REQUESTS = 80


def _kill_when(mock, bodies: int, killed: list[int]) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 120  # a guard for a broken run, not a measurement
        while time.monotonic() < deadline:
            if len(mock.bodies()) >= bodies:
                mock.proc.kill()
                killed.append(len(mock.bodies()))
                return
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_server_killed_midway_counts_its_errors_and_the_run_goes_on(mock_server, tmp_path: Path) -> None:
    a = mock_server("--ttft-ms", "20", "--itl-ms", "20", "--tokens", "8")
    b = mock_server("--ttft-ms", "20", "--itl-ms", "20", "--tokens", "8")
    killed: list[int] = []
    watcher = _kill_when(b, 1 + 8, killed)  # the probe and 8 measured requests, then SIGKILL
    options = PerfOptions(model="m", api_base=f"{a.base_url}, {b.base_url}", concurrency=[4], num_requests=REQUESTS,
                          out_dir=tmp_path / "out", plots=False, quiet=True)
    result = run_perf(ListDataset([f"q {i}" for i in range(10)]), options)
    watcher.join(timeout=5)
    assert killed, "server B was never killed"

    assert result.summary["status"] == "complete"
    assert result.summary["target"]["urls"] == [a.base_url + "/chat/completions", b.base_url + "/chat/completions"]
    level = result.levels[0]
    total = level["requests"]
    assert total["measured"] == REQUESTS
    first, second = level["servers"]
    assert (first["server"], second["server"]) == (0, 1) and first["url"].startswith(a.base_url)
    for key in ("measured", "successful", "failed"):
        assert first["requests"][key] + second["requests"][key] == total[key], key
    # A never failed; B served some before it died, and what it got after is its errors, of a dead server's kinds
    assert first["requests"]["failed"] == 0 and first["requests"]["successful"] == first["requests"]["measured"]
    assert second["requests"]["successful"] >= 1 and second["requests"]["failed"] >= 1
    assert set(second["requests"]["errors_by_kind"]) <= {"dropped", "connection"}
    assert total["errors_by_kind"] == second["requests"]["errors_by_kind"]
    assert first["e2el_ms"]["n"] == first["requests"]["successful"]
    # B is backed off after DOWN_AFTER failures in a row: A carries most of the run
    assert first["requests"]["measured"] > REQUESTS / 2

    lines = [json.loads(x) for x in (tmp_path / "out" / "perf_requests.jsonl").read_text().splitlines()]
    assert sorted(line["n"] for line in lines) == list(range(REQUESTS))
    per_server = Counter(line["server"] for line in lines)
    assert per_server == {0: first["requests"]["measured"], 1: second["requests"]["measured"]}
    ok = Counter(line["server"] for line in lines if line["ok"])
    assert ok[0] == first["requests"]["successful"] and ok[1] == second["requests"]["successful"]


def _done(balancer: Balancer, server: int, error: str | None) -> None:
    rec = Record(0, 0, 1, 0)
    rec.start, rec.end, rec.error = 1, 2, error
    balancer.ended(server, rec, True)


def test_least_in_flight_and_the_back_off() -> None:
    b = Balancer(["http://a", "http://b", "http://c"], {})
    picks = []
    for _ in range(3):
        i = b.pick()
        b.started(i)
        picks.append(i)
    assert picks == [0, 1, 2]  # an even spread from nothing in flight
    _done(b, 1, None)
    assert b.pick() == 1  # the one with the fewest in flight
    for _ in range(DOWN_AFTER):
        b.started(2)
        _done(b, 2, "connection")
    b.servers[0].in_flight = b.servers[1].in_flight = 50
    assert b.pick() in (0, 1)  # c backs off, however idle it looks
    b.servers[2].down_until = 0  # its back-off over: it is tried again, and one success clears it
    assert b.pick() == 2
    b.started(2)
    _done(b, 2, None)
    assert b.servers[2].failures == 0 and b.servers[2].down_until == 0
    _done(b, 0, "http_500")  # a server that answers is up
    assert b.servers[0].failures == 0


def test_api_base_names_servers_as_vlmkit_run_reads_it(tmp_path: Path) -> None:
    def urls(api_base: str) -> list[str]:
        target = target_for(PerfOptions(model="m", api_base=api_base, out_dir=tmp_path / "o", quiet=True))
        return target.urls or [target.url]

    assert urls("http://a/v1") == ["http://a/v1/chat/completions"]
    assert urls(" http://a/v1 , http://b/v1,") == ["http://a/v1/chat/completions", "http://b/v1/chat/completions"]
    listed = tmp_path / "servers.txt"
    listed.write_text("# replicas\nhttp://a/v1\n\nhttp://b/v1/chat/completions\n")
    assert urls(str(listed)) == ["http://a/v1/chat/completions", "http://b/v1/chat/completions"]
    with pytest.raises(PerfInputError, match="--api-base"):
        urls("127.0.0.1:8000")


def test_a_server_down_at_the_start_is_named_in_one_line(mock_server, tmp_path: Path) -> None:
    a = mock_server("--tokens", "2")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    options = PerfOptions(model="m", api_base=f"{a.base_url},{dead}", concurrency=[1], num_requests=2,
                          out_dir=tmp_path / "out", plots=False, quiet=True)
    with pytest.raises(PerfInputError) as caught:
        run_perf(ListDataset(["q"]), options)
    assert str(caught.value).startswith(f"cannot reach {dead}/chat/completions") and "\n" not in str(caught.value)
