"""Data-parallel runs under torchrun: which share of the rows is this rank's, and waits between ranks that end.

torchrun sets RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT; vlmkit reads them through vlmkit.core.config. Rank R of
W takes the rows of shard R/W (vlmkit.run.shards) and journals them in `journal.rank<R>.jsonl`; rank 0 alone reads
every journal and scores. A single process never imports torch.

No wait can hang (a dead rank used to leave the others in a 24-hour gloo barrier). torch.distributed is used once,
at start, while every rank is alive: rank 0 draws a launch id and broadcasts it (gloo, within --barrier-timeout),
and the process group is closed again. From then on the ranks meet through marker files in
`<work_dir>/.vlmkit-ranks/<launch id>/` (one folder per launch, so markers of an earlier launch never count):

- At start each rank writes `start.rank<R>` and looks for every other rank's within a short wait (SHARED_WAIT_S, at
  most --barrier-timeout). A rank that cannot see them says so in one line (NotShared): the work dir is not one
  folder that every host shares, and rank 0 would otherwise score its own rows alone.
- After each (model, dataset) pair each rank writes `<pair>.rank<R>` holding how its share ended (inferred, stopped,
  skipped) and moves on; only rank 0 waits, for every rank's marker, at most --barrier-timeout (default 30 min).
  When the time is up it names the ranks that never arrived (RanksMissing) and scores nothing; a rank found missing
  once is not waited for again in that launch.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
import uuid
from datetime import timedelta
from pathlib import Path

from vlmkit.core import config
from vlmkit.core.cells import listed
from vlmkit.core.errors import ConfigError
from vlmkit.outputs import layout

DEFAULT_BARRIER_TIMEOUT_S = 1800.0  # --barrier-timeout: how long rank 0 waits for the others after a pair
# How long a rank looks for the others' start markers: they have just met, but a network file system may answer
# "no such file" from its cache for up to a minute (NFS acdirmax) before it sees a new file.
SHARED_WAIT_S = 120.0
_POLL_S = (0.05, 1.0)  # the first and the longest pause between two looks at the markers


class NotShared(ConfigError):
    """A rank cannot see the other ranks' start markers: the work dir is not shared storage."""


class RanksMissing(RuntimeError):
    """Some ranks never reached the end of a pair within --barrier-timeout."""


def rank_world() -> tuple[int, int]:
    return config.dist_rank_world()


def local_rank_device() -> str:
    """This rank's GPU under torchrun (cuda:LOCAL_RANK), or the CPU where there is none."""
    import torch

    return f"cuda:{config.dist_local_rank()}" if torch.cuda.is_available() else "cpu"


def launch_id(timeout_s: float) -> str:
    """One id shared by every rank of this launch: drawn by rank 0 and broadcast over a gloo group that is closed
    again at once (a group opened here is the only torch.distributed state vlmkit keeps, and only this long)."""
    import torch.distributed as dist

    opened = not dist.is_initialized()
    if opened:
        dist.init_process_group(backend="gloo", timeout=timedelta(seconds=timeout_s))
    try:
        box = [uuid.uuid4().hex if dist.get_rank() == 0 else None]
        dist.broadcast_object_list(box, src=0)
        return str(box[0])
    finally:
        if opened:
            dist.destroy_process_group()


def pair_step(model: str, dataset: str) -> str:
    """The marker name of one (model, dataset) pair (names of any characters, as a short safe file name)."""
    return "pair-" + hashlib.sha1(f"{model}\0{dataset}".encode()).hexdigest()[:16]


class RankGroup:
    """The ranks of one launch, meeting through marker files in a folder they all share."""

    def __init__(self, folder: Path, rank: int, world: int, timeout_s: float) -> None:
        self.folder = folder
        self.rank = rank
        self.world = world
        self.timeout_s = timeout_s
        self.gone: set[int] = set()  # ranks that missed a wait: not waited for again

    @classmethod
    def start(cls, work_dir: Path, timeout_s: float = DEFAULT_BARRIER_TIMEOUT_S,
              shared_wait_s: float = SHARED_WAIT_S) -> "RankGroup | None":
        """None in a single process; else the group, once every rank's start marker is seen (NotShared otherwise)."""
        rank, world = rank_world()
        if world <= 1:
            return None
        group = cls(layout.ranks_dir(work_dir, launch_id(timeout_s)), rank, world, timeout_s)
        group.arrive("start", f"{socket.gethostname()} pid {os.getpid()}")
        unseen = group._wait("start", min(shared_wait_s, timeout_s))
        if unseen:
            raise NotShared(
                f"rank {rank} of {world} ({socket.gethostname()}) cannot see the start marker of rank(s) "
                f"{listed(sorted(unseen))} in {group.folder} after {min(shared_wait_s, timeout_s):g} s: every rank "
                "needs the same --work-dir on storage all hosts share (a network file system), or rank 0 would score "
                "its own rows alone")
        return group

    def marker(self, step: str, rank: int) -> Path:
        return self.folder / f"{step}.rank{rank}"

    def arrive(self, step: str, status: str = "") -> None:
        """Say that this rank reached `step` (written whole under a temporary name, then renamed)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.marker(step, self.rank)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(status + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def wait_for_all(self, step: str, what: str) -> dict[int, str]:
        """Wait (at most timeout_s) until every rank has reached `step`; each rank's status by rank. RanksMissing
        naming the ranks that never did (at once for a rank that missed an earlier wait)."""
        unseen = self._wait(step, 0.0 if self.gone else self.timeout_s)
        if unseen:
            earlier = unseen & self.gone
            self.gone |= unseen
            why = (f"already missing at an earlier pair" if earlier == unseen
                   else f"never arrived within {self.timeout_s:g} s (--barrier-timeout)")
            raise RanksMissing(
                f"{what}: rank(s) {listed(sorted(unseen))} of {self.world} {why}: killed, out of memory, or stuck? "
                "Nothing was scored; every answer journalled so far is kept: run the same command again (each rank "
                "asks only its missing rows), or score what is there with `vlmkit run ... --merge`")
        return {r: self._status(step, r) for r in range(self.world)}

    def _wait(self, step: str, timeout_s: float) -> set[int]:
        """The ranks whose marker for step is still missing when all are there or timeout_s has passed."""
        deadline = time.monotonic() + timeout_s
        pause = _POLL_S[0]
        while True:
            unseen = {r for r in range(self.world) if not self.marker(step, r).exists()}
            if not unseen or time.monotonic() >= deadline:
                return unseen
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, _POLL_S[1])

    def _status(self, step: str, rank: int) -> str:
        try:
            return self.marker(step, rank).read_text(encoding="utf-8").strip()
        except OSError:
            return ""
