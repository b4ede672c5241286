"""A lock that lets one process do a dataset's set-up (hash the TSV, decode its images) while the others wait.

Under torchrun, or with `--shard I/N` processes started together, every process loads the same datasets. Without a
lock each hashes the whole TSV and decodes every image into the same folder (two ranks wrote 271 and 280 MB for
250 MB of images). With one, the first process does the work and the others, once it is done, find its stamp or
its decoded files and reuse them (`datasets_tsv.io.tsv_stamp`, `datasets_tsv.io.images.decode_images`).

The lock is `fcntl.lockf` (a POSIX record lock) on a small file: the kernel drops it when its process ends, killed
or not, and NFS carries it to other hosts (flock does not, on many NFS set-ups). A POSIX lock belongs to a process,
so a process never waits for itself. The holder writes `pid@host` into the file, so that a waiter can name it. A
waiter polls, and gives up after `wait_s` (default `SETUP_WAIT_S`): it then logs one line naming the holder and does
the work itself, as it would have without the lock. Where locking is not possible (no fcntl, a read-only folder) the
work is simply done without it.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lockf; every process does its own set-up
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("vlmkit")

SETUP_WAIT_S = 1800.0  # the longest a process waits for another's set-up (a 1 GB image pass takes minutes)
_POLL_S = (0.01, 0.5)  # first and longest pause between two tries


class SetupLock:
    """An exclusive lock on `path`, taken with `acquire()` (bounded wait) and given back with `release()`."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what  # for the message: what the holder is doing
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait_s: float | None = None) -> bool:
        """Hold the lock, waiting at most wait_s (None: SETUP_WAIT_S); True when held. False when locking is not
        possible here or the wait ran out (then one warning names the holder): the caller goes on without it."""
        if self._fd is not None:
            return True
        if fcntl is None:
            return False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError:
            return False  # a read-only folder: no lock, no shared set-up
        limit = SETUP_WAIT_S if wait_s is None else wait_s
        deadline = time.monotonic() + limit
        pause = _POLL_S[0]
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK):
                    os.close(fd)
                    return False  # a file system without locks: go on without one
            if time.monotonic() >= deadline:
                holder = os.pread(fd, 256, 0).decode("utf-8", "replace").strip() or "another process"
                os.close(fd)
                log.warning("%s: waited %.0f s for %s (holding %s) to finish %s; doing it here as well",
                            self.path.parent, limit, holder, self.path.name, self.what)
                return False
            time.sleep(pause)
            pause = min(pause * 2, _POLL_S[1])
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}@{socket.gethostname()}\n".encode(), 0)
        except OSError:
            pass  # the name is for a waiter's message only
        self._fd = fd
        return True

    def release(self) -> None:
        """Give the lock back (the file stays: removing it could let two processes hold two files)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            fcntl.lockf(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> "SetupLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
