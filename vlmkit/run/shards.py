"""Independent shards: `vlmkit run ... --shard I/N` infers shard I of N alone, `vlmkit run ... --merge` scores.

Any scheduler can run them (a Slurm job array, a Kubernetes indexed Job, a loop in a shell): a shard needs no
rendezvous, no barrier and no other shard alive. What they agree on:

- Which rows: shard I of N (0 <= I < N, counted from 0 as SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX and torchrun's
  RANK are) takes the rows at positions I, I+N, I+2N, ... of the dataset (after --limit): the same split as rank I of
  a torchrun run of N ranks, balanced whatever the row order.
- Where its answers go: `<work_dir>/<model>/<dataset>/journal.shard<I>of<N>.jsonl` (vlmkit.outputs.layout), a journal
  like any other (one record per row, keyed by the row's index, fingerprint in the header) whose header also says
  `[I, N]`. Records are keyed by index only, so every answer serves any later sharding: a shard reads the journals
  whose rows can overlap its own (`may_overlap`: the single-process journal, its own, and those of other shardings
  whose residues meet), takes their answers and asks only the rest. Running N=2 and then N=3 asks nothing again.
- One writer per shard: a second process on the same shard is refused (the journal's lock). A shard that died is run
  again alone (same --shard) and asks only its rows that have no answer.
- A shard scores nothing and writes no results.json; its exit code says whether every one of its rows was answered
  (0) or some failed (3: run it again). `--merge` (the same command without --shard) asks the model nothing: when
  every row has a record in some journal it scores exactly as one process would (the same predictions, the same
  figures, the same files); otherwise it writes nothing and says in one line how many rows are missing and which
  shards hold them, and exits 3.
- The last shard to finish may score: `--shard I/N --merge` runs the shard, then scores when every row has a record
  (otherwise it ends as a plain shard does). Scorers take `merge.lock` beside the journals in turn, so two shards
  finishing together never write the same files at once (the second scores again, to the same result).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: scorers are not serialised there
    fcntl = None  # type: ignore[assignment]

from vlmkit.core.errors import ConfigError
from vlmkit.outputs import layout

_SHARD_RE = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0 <= index < count)."""

    index: int
    count: int

    def positions(self, n_rows: int) -> range:
        """The row positions (0-based, in dataset order) this shard takes."""
        return range(self.index, n_rows, self.count)

    def of_position(self, position: int) -> int:
        return position % self.count

    @property
    def pair(self) -> tuple[int, int]:
        return self.index, self.count

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """`I/N` -> Shard; ConfigError (one line naming --shard) for anything else."""
    match = _SHARD_RE.fullmatch(str(text))
    if not match:
        raise ConfigError(f"--shard takes I/N (shard I of N, I from 0 to N-1, e.g. 0/4), got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise ConfigError(f"--shard {text}: I must be 0 to N-1 and N at least 1 (shards count from 0: 0/{max(count, 1)} "
                          f"is the first of {max(count, 1)})")
    return Shard(index, count)


def may_overlap(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    """Whether shard a's rows and shard b's can meet (None: every row). Positions p = I mod N and p = J mod M have a
    common solution exactly when I = J mod gcd(N, M) (the Chinese remainder theorem)."""
    if a is None or b is None:
        return True
    (i, n), (j, m) = a, b
    return (i - j) % math.gcd(n, m) == 0


def missing_message(keys: list[str], records: dict[str, dict[str, Any]],
                    journals: Iterable[tuple[Path, tuple[int, int] | None]]) -> str | None:
    """One line when some row has no record in any journal (None when every row has one): how many, and which shards
    of the latest sharding hold them (with or without a journal), or that no shard has run. The caller puts the
    pair's name before it."""
    missing = [pos for pos, key in enumerate(keys) if key not in records]
    if not missing:
        return None
    sharded = [(path, shard) for path, shard in journals if shard is not None]
    head = f"{len(missing)} of {len(keys)} row(s) have no answer in any journal"
    if not sharded:
        return (f"{head}; no shard has journalled anything under these settings: run the shards (--shard I/N) "
                "first, then --merge")
    latest = max(sharded, key=lambda item: _mtime(item[0]))[1]
    count = latest[1]
    present = {shard[0] for _, shard in sharded if shard[1] == count}
    by_shard: dict[int, int] = {}
    for pos in missing:
        by_shard[pos % count] = by_shard.get(pos % count, 0) + 1
    parts = [f"{i}/{count} ({n} row(s){'' if i in present else ', no journal'})" for i, n in sorted(by_shard.items())]
    shown = ", ".join(parts[:8]) + (f" ... and {len(parts) - 8} more shard(s)" if len(parts) > 8 else "")
    return f"{head}: shard {shown}; run those (--shard I/{count}), then --merge again (nothing was scored)"


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


@contextmanager
def scoring_lock(run_dir: Path) -> Iterator[None]:
    """Hold `merge.lock` in run_dir while scoring (blocking: a second scorer waits, then scores in turn)."""
    if fcntl is None:
        yield
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(run_dir / layout.MERGE_LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
