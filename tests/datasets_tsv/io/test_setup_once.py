"""Set-up once: of two processes loading the same dataset at the same moment, one hashes the TSV and decodes its
images, and the other waits for it (datasets_tsv.io.setup_lock) and reuses its stamp and its decoded files.

Each process runs the real loading code; the child script only counts (and slows down, so that the two surely meet
while the first holds the lock) the two pieces of work: the TSV read that hashes the file (`table_text` inside
`tsv_stamp.scan`) and the image pass (`images._decode_records`). Without the locks both would do both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datasets_tsv.io.setup_lock import SetupLock
from tests.support.tsvs import b64, image_bytes, write_tsv

ROOT = Path(__file__).resolve().parents[3]

CHILD = r"""
import json, sys, time
from pathlib import Path
import datasets_tsv.io.images as images
import datasets_tsv.io.tsv_stamp as tsv_stamp
from datasets_tsv.kinds.yorn import ImageYORNDataset

root, go = Path(sys.argv[1]), Path(sys.argv[2])
counts = {"hashed": 0, "decoded": 0}

def counted(name, module, attr):
    real = getattr(module, attr)
    def wrapper(*args, **kwargs):
        counts[name] += 1
        time.sleep(1.5)  # hold the lock long enough for the other process to arrive and wait
        return real(*args, **kwargs)
    setattr(module, attr, wrapper)

counted("hashed", tsv_stamp, "table_text")
counted("decoded", images, "_decode_records")
for _ in range(600):  # both processes start their work together (bounded: 60 s)
    if go.exists():
        break
    time.sleep(0.1)
ds = ImageYORNDataset("T", root=root, progress=False)
ds.prepare_images()
print(json.dumps({**counts, "md5_source": ds.md5_source, "md5": ds.file_md5,
                  "images": [ds.image_paths(i) for i in range(len(ds.data))]}))
"""


def _start(root: Path, go: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(go)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl: every process does its own set-up there")
def test_two_processes_one_hashes_and_decodes_the_other_reuses(lmu_root: Path, tmp_path: Path):
    colours = ["red", "blue", "green", "yellow", "white", "black"]
    rows = [{"index": i, "image": b64(image_bytes(colours[i % 6], "PNG", (16 + i, 12))), "question": f"Q{i}?",
             "answer": "yes"} for i in range(12)]
    write_tsv(lmu_root / "T.tsv", rows)
    time.sleep(0.3)  # a stamp is written only for a settled file (100 ms past its last change)
    go = tmp_path / "go"
    children = [_start(lmu_root, go) for _ in range(2)]
    go.touch()
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(r["hashed"] for r in results) == 1, results  # one process read and hashed the TSV
    assert sum(r["decoded"] for r in results) == 1, results  # one process decoded the images
    assert sorted(r["md5_source"] for r in results) == ["computed", "stamp"]  # the other took the stamp
    assert results[0]["md5"] == results[1]["md5"]
    assert results[0]["images"] == results[1]["images"]  # the same files: the other replayed the pass
    decoded = sorted(p.name for p in (lmu_root / "images" / "T").iterdir() if not p.name.startswith("."))
    assert len(decoded) == 12


def test_a_waiter_gives_up_after_its_bound_and_names_the_holder(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """A process that waits past its bound goes on without the lock (and says which process held it); the holder's
    pid@host is in the lock file. Two locks in two processes: POSIX locks belong to a process."""
    lock_file = tmp_path / "x.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from datasets_tsv.io.setup_lock import SetupLock\n"
         "lock = SetupLock(Path(sys.argv[1]), 'testing')\nassert lock.acquire()\nprint('held', flush=True)\n"
         "sys.stdin.read()\n", str(lock_file)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        lock = SetupLock(lock_file, "testing")
        with caplog.at_level("WARNING", logger="vlmkit"):
            assert lock.acquire(wait_s=0.3) is False
        assert f"{holder.pid}@" in caplog.text and "doing it here as well" in caplog.text
    finally:
        holder.communicate("", timeout=30)  # the holder ends: the kernel drops its lock
    assert lock.acquire(wait_s=30) is True
    lock.release()
