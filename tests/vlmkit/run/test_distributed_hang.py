"""torchrun never hangs: real `torchrun` launches (CPU, gloo) of `vlmkit run` against a real local server.

Two ranks on one host split the rows and rank 0 scores (vlmkit's own flags need no `--` before them); a host whose
rank is killed (kill -9 of its whole torchrun) leaves rank 0 waiting at most --barrier-timeout, after which it names
the missing rank and scores nothing; two hosts that do not share the work dir each say so in one line at start."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.run_helpers import chat_only, chat_requests, row_of, run_served, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlmkit.cli import exit_codes

pytest.importorskip("torch.distributed.run")

N_ROWS = 10
TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]  # the `torchrun` script of this environment


def odd_says_yes(request: Recorded) -> Reply:
    return chat_reply("Yes" if row_of(request) % 2 else "No")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def vlmkit_args(api_base: str, work: Path, *extra: str) -> list[str]:
    return ["-m", "vlmkit.cli", "run", "--data", "MyYN", "--model", "served", "--api-base", api_base,
            "--work-dir", str(work), "--retries", "0", *extra]


def launch(cmd: list[str], lmu: Path) -> subprocess.Popen:
    """A torchrun in a session of its own."""
    env = {**os.environ, "LMUData": str(lmu), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def host(node_rank: int, port: int, args: list[str], lmu: Path) -> subprocess.Popen:
    """One of two simulated hosts: `torchrun --nnodes 2 --node-rank R --nproc-per-node 1` meeting on port."""
    return launch([*TORCHRUN, "--nnodes", "2", "--node-rank", str(node_rank), "--nproc-per-node", "1",
                   "--master-addr", "127.0.0.1", "--master-port", str(port), *args], lmu)


def descendants(pid: int) -> list[int]:
    """Every process below pid (Linux /proc): torchrun starts its workers in sessions of their own."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            children = [int(c) for c in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
        except OSError:
            children = []
        found += children
        todo += children
    return found


def kill_host(proc: subprocess.Popen) -> None:
    """kill -9 of a whole simulated host: its torchrun and every worker below it."""
    for pid in [*descendants(proc.pid), proc.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            kill_host(proc)
            proc.communicate()


def test_two_ranks_under_torchrun_split_the_rows_and_rank_0_scores(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N_ROWS)
    work = tmp_path / "out"
    with FaultServer(chat_only(odd_says_yes)) as server:
        # --api-nproc, not --nproc: torchrun reads any --nproc as an abbreviation of its own --nproc-per-node
        proc = launch([*TORCHRUN, "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port",
                       str(free_port()), *vlmkit_args(server.base_url, work, "--api-nproc", "2")], lmu_root)
        out, err = finish(proc)
        asked = Counter(row_of(r) for r in chat_requests(server.requests))
    assert proc.returncode == 0, err
    assert sorted(asked) == list(range(N_ROWS)) and set(asked.values()) == {1}
    run_dir = work / "served" / "MyYN"
    for rank in (0, 1):
        lines = (run_dir / f"journal.rank{rank}.jsonl").read_text().splitlines()
        assert json.loads(lines[0])["__shard__"] == [rank, 2]
        assert sorted(json.loads(x)["index"] for x in lines[1:]) == list(range(rank, N_ROWS, 2))
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "success" and results["scoring"]["metrics"]["Overall"] == pytest.approx(50.0)


def test_a_killed_host_is_named_by_rank_0_within_the_barrier_timeout(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N_ROWS)
    held_row = 7  # rank 1 takes rows 1, 3, 5, 7, 9: the server holds row 7 until rank 1's host is killed
    release = threading.Event()

    def responder(request: Recorded) -> Reply:
        if row_of(request) == held_row:
            release.wait(timeout=120)
        return odd_says_yes(request)

    work = tmp_path / "out"
    port = free_port()
    with FaultServer(chat_only(responder)) as server:
        args = vlmkit_args(server.base_url, work, "--api-nproc", "1", "--barrier-timeout", "5")
        hosts = [host(r, port, args, lmu_root) for r in (0, 1)]
        try:
            deadline = time.monotonic() + 240  # a bound on getting there, not a timing assertion
            while (time.monotonic() < deadline and all(h.poll() is None for h in hosts)
                   and held_row not in {row_of(r) for r in chat_requests(server.requests)}):
                time.sleep(0.1)
            assert hosts[1].poll() is None, finish(hosts[1])
            kill_host(hosts[1])  # the host dies: its torchrun and its worker
            finish(hosts[1], 60)
            out, err = finish(hosts[0])
        finally:
            release.set()
            for h in hosts:
                if h.poll() is None:
                    kill_host(h)
                    h.communicate()
        merged = run_served(server.base_url, work, lmu_root, "--merge")
    assert hosts[0].returncode != 0
    said = [line for line in err.splitlines() if line.startswith("vlmkit: error:")]
    assert len(said) == 1 and "rank(s) 1 of 2 never arrived within 5 s (--barrier-timeout)" in said[0], err
    assert not (work / "served" / "MyYN" / "results.json").exists()  # nothing scored from half the rows
    # what the dead rank left: its rows 1, 3, 5 journalled; a merge names the rows it never answered (7, 9)
    assert merged.returncode == exit_codes.SAMPLES_FAILED
    assert "2 of 10 row(s) have no answer" in merged.stderr and "shard 1/2 (2 row(s))" in merged.stderr


def test_hosts_that_do_not_share_the_work_dir_say_so_in_one_line(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=4)
    port = free_port()
    with FaultServer(chat_only(odd_says_yes)) as server:
        hosts = [host(r, port, vlmkit_args(server.base_url, tmp_path / f"host{r}", "--barrier-timeout", "3"), lmu_root)
                 for r in (0, 1)]
        outputs = [finish(h) for h in hosts]
        asked = len(chat_requests(server.requests))
    for rank, (h, (out, err)) in enumerate(zip(hosts, outputs)):
        assert h.returncode != 0
        said = [line for line in err.splitlines() if line.startswith("vlmkit: error:")]
        assert len(said) == 1, err
        assert f"rank {rank} of 2" in said[0] and f"start marker of rank(s) {1 - rank}" in said[0]
        assert "--work-dir" in said[0] and "share" in said[0]
    assert asked == 0  # found before anything was asked
