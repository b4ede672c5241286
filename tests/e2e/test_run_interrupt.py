"""Ctrl-C during API inference: every answer that has arrived is journalled and the process leaves at once, without
waiting for the requests still in flight (their replies are held back until after it has exited)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.run_helpers import (answer_yes, chat_only, chat_requests, ctrl_c_as_a_terminal_gives_it, row_of,
                                       stderr_lines, write_yorn_tsv)
from tests.support.servers import FaultServer, Recorded, Reply

FAST = {0, 1}


def test_ctrl_c_journals_what_arrived_and_does_not_wait_for_requests_in_flight(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=8)
    release = threading.Event()  # set only once the process has exited: a run that waits for its slow requests hangs

    def responder(request: Recorded) -> Reply:
        if row_of(request) not in FAST:
            release.wait(timeout=600)
        return answer_yes(request)

    work = tmp_path / "out"
    journal = work / "served" / "MyYN" / "journal.jsonl"
    with FaultServer(chat_only(responder)) as server:
        cmd = [sys.executable, "-m", "vlmkit.cli", "run", "--data", "MyYN", "--model", "served", "--api-base",
               server.base_url, "--nproc", "4", "--work-dir", str(work)]
        proc = subprocess.Popen(cmd, env={**os.environ, "LMUData": str(lmu_root)}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_as_a_terminal_gives_it)
        try:
            deadline = time.monotonic() + 120  # a generous bound on getting there, not a timing assertion
            while time.monotonic() < deadline and proc.poll() is None:
                in_flight = len(chat_requests(server.requests)) - len(FAST)
                answered = len(journal.read_text().splitlines()) - 1 if journal.exists() else 0
                if in_flight >= 4 and answered >= len(FAST):
                    break
                time.sleep(0.05)
            assert proc.poll() is None, proc.communicate()
            sent = len(chat_requests(server.requests))
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)  # returns only if the run did not wait for the held replies
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            release.set()

    assert sent == len(FAST) + 4  # 2 answered, 4 held in flight
    assert proc.returncode == 130, err
    [line] = stderr_lines(subprocess.CompletedProcess(cmd, 130, out, err))
    assert line.startswith("interrupted")
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert sorted(r["index"] for r in records) == sorted(FAST)  # the fast answers are journalled
    assert all(r["error"] is None and r["prediction"] == "Yes" for r in records)
