"""A full disk mid-run is one line, not a traceback, and loses nothing journalled: the rerun, with room again, asks
only what was not answered. The disk is filled for real by the kernel's file-size limit (RLIMIT_FSIZE, EFBIG on the
write that would pass it), set in the run's own process."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.run_helpers import chat_requests
from tests.support.servers import FaultServer, chat_reply, models_reply

ROWS = 40


def _limited(limit: int):
    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limit_file_size


def _run(server: FaultServer, lmu: Path, work: Path, limit: int | None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "vlmkit", "run", "--data", "Evens", "--model", "served", "--api-base",
           server.base_url, "--work-dir", str(work), "--kind", "yorn", "--nproc", "1"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "LMUData": str(lmu)},
                          preexec_fn=_limited(limit) if limit else None)


def test_a_full_disk_is_one_line_and_the_rerun_asks_only_what_is_missing(lmu_root: Path, tmp_path: Path):
    rows = ["index\tquestion\tanswer"] + [f"{i}\tIs {i} even? {'x' * 200}\t{'Yes' if i % 2 == 0 else 'No'}"
                                           for i in range(ROWS)]
    (lmu_root / "Evens.tsv").write_text("\n".join(rows) + "\n")
    work = tmp_path / "out"
    with FaultServer(lambda r: chat_reply("Yes") if r.method == "POST" else models_reply("served")) as server:
        full = _run(server, lmu_root, work, limit=6_000)  # the journal fills up after a few records
        asked_first = len(chat_requests(server.requests))
        lines = [line for line in full.stderr.splitlines() if line.strip()]
        assert full.returncode == 2, full.stderr[-2000:]
        assert len(lines) == 1 and lines[0].startswith("vlmkit: error: cannot write ") and "journal" in lines[0]
        assert "Traceback" not in full.stderr
        journal = work / "served" / "Evens" / "journal.jsonl"
        kept = [json.loads(line) for line in journal.read_text().splitlines()[1:] if line.endswith("}")]
        assert 0 < len(kept) < ROWS
        again = _run(server, lmu_root, work, limit=None)
        asked_again = len(chat_requests(server.requests)) - asked_first
    assert again.returncode == 0, again.stderr[-2000:]
    results = json.loads((work / "served" / "Evens" / "results.json").read_text())
    assert results["counts"]["completed"] == ROWS
    assert asked_again <= ROWS - len(kept)  # nothing journalled was asked again
