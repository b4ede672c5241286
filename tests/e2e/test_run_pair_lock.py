"""One process writes a (model, dataset) pair's journal at a time (issue 22): a second `vlmkit run` on the same pair
refuses in one line naming the first one's pid, exit 2, asking and journalling nothing; the lock dies with its
process, so a run after a killed one resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.run_helpers import chat_only, chat_requests, row_of, run_served, stderr_lines, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply

N = 6


def start_run(api_base: str, work: Path, lmu: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "vlmkit.cli", "run", "--data", "MyYN", "--model", "served", "--api-base", api_base,
           "--nproc", "1", "--work-dir", str(work)]
    return subprocess.Popen(cmd, env={**os.environ, "LMUData": str(lmu)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_first_request(server: FaultServer, proc: subprocess.Popen) -> None:
    """Until the first run's first question arrives (it holds the pair's lock from then on)."""
    deadline = time.monotonic() + 120  # a bound on getting there, not a timing assertion
    while time.monotonic() < deadline and proc.poll() is None and not chat_requests(server.requests):
        time.sleep(0.05)
    assert proc.poll() is None and chat_requests(server.requests), "the first run never asked anything"


def journalled_rows(journal: Path) -> list[int]:
    return [json.loads(line)["index"] for line in journal.read_text().splitlines()[1:]]


def test_a_second_run_on_the_same_pair_refuses_naming_the_first(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)
    release = threading.Event()  # the first question's answer is held (a slow server) until the second run has ended
    lock = threading.Lock()
    held: list[int] = []  # whatever else is asked (a second run that does not refuse) is answered at once

    def slow(request: Recorded) -> Reply:
        with lock:
            hold = not held
            held.append(request.number)
        if hold:
            release.wait(timeout=300)
        return chat_reply("Yes")

    work = tmp_path / "out"
    journal = work / "served" / "MyYN" / "journal.jsonl"
    with FaultServer(chat_only(slow)) as server:
        first = start_run(server.base_url, work, lmu_root)
        try:
            wait_for_first_request(server, first)
            before = journal.read_bytes()
            second = run_served(server.base_url, work, lmu_root, "--nproc", "4")
            asked_while_held = len(chat_requests(server.requests))
            after_second = journal.read_bytes()
        finally:
            release.set()
            out, err = first.communicate(timeout=300)
        asked = sorted(row_of(r) for r in chat_requests(server.requests))

    assert second.returncode == 2, second.stderr
    [line] = stderr_lines(second)
    assert f"pid {first.pid}" in line and str(journal) in line
    assert asked_while_held == 1  # the first run's one question in flight (--nproc 1); the second asked nothing
    assert after_second == before  # nothing journalled by the second run
    assert first.returncode == 0, err
    assert asked == list(range(N))  # each row asked once
    assert sorted(journalled_rows(journal)) == list(range(N))  # each row journalled once
    assert not journal.with_name("journal.jsonl.lock").exists()  # given back when the run ended


def test_the_lock_dies_with_a_killed_run(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)
    release = threading.Event()

    def first_row_only(request: Recorded) -> Reply:
        if row_of(request) != 0:
            release.wait(timeout=300)
        return chat_reply("Yes")

    work = tmp_path / "out"
    journal = work / "served" / "MyYN" / "journal.jsonl"
    with FaultServer(chat_only(first_row_only)) as server:
        killed = start_run(server.base_url, work, lmu_root)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and killed.poll() is None and len(chat_requests(server.requests)) < 2:
                time.sleep(0.05)  # row 0 answered and journalled, row 1 held
            assert killed.poll() is None
            killed.send_signal(signal.SIGKILL)  # no handler runs: only the kernel gives the lock back
            killed.communicate(timeout=60)
        finally:
            if killed.poll() is None:
                killed.kill()
                killed.wait()
            release.set()
        assert journal.with_name("journal.jsonl.lock").read_text().strip() == str(killed.pid)  # left by the dead run
        before = len(chat_requests(server.requests))
        again = run_served(server.base_url, work, lmu_root)
        asked_again = sorted(row_of(r) for r in chat_requests(server.requests)[before:])
    assert again.returncode == 0, again.stderr
    assert asked_again == list(range(1, N))  # row 0's journalled answer kept
    assert sorted(journalled_rows(journal)) == list(range(N))
