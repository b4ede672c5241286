"""A verified-MD5 stamp per TSV, so that an unchanged 200 MB benchmark file is not hashed (nor read) again.

After a TSV's MD5 has been computed, `$LMUData/.vlmkit/tsv-stamps/<key>.json` (key: a hash of the TSV's resolved
path) records the MD5 with the file's identity when it was hashed: size, mtime_ns, ctime_ns and inode. A later
load whose `os.stat` gives the same identity takes the MD5 from the stamp (results.json says so:
`dataset.md5_source: "stamp"`); any change of size, mtime, ctime or inode (a rewrite of the same size, a file
renamed into place, a `touch`) makes the stamp void and the MD5 is computed again (`"computed"`). ctime cannot be
set by a user, so even a same-size rewrite whose old mtime is put back with `os.utime` is noticed.

A stamp is written only for a settled file, as git does for its racy index entries: the file's mtime must be
older than the moment hashing began by `SETTLE_NS` (100 ms; 2 s when the file system keeps whole seconds), and
its identity must be the same before and after hashing. Otherwise a rewrite landing in the same clock tick as
the one just hashed could keep the identity and be taken for the hashed file. This assumes the file system's
clock agrees with this machine's to within that margin (true of local file systems).

The stamp also holds the table (every column but `image`, as the text `tsv_read.table_text` builds) in
`<key>.table` beside it (not named .tsv, so nothing takes it for a benchmark), checked by its SHA-1, so a load of
an unchanged file parses under 1 MB instead of streaming 200 MB; pandas parses that text exactly as on a first
load, so the table is the same. The image decoder keys its own shortcut on the same verified MD5
(`datasets_tsv.io.image_manifest`), and `cached_records` gives a reader of a few columns (kind detection) the
records without the file.

A file without a valid stamp is read once (`scan`): the blocks read feed MD5 on a second thread and the table
text on this one. When that read is made for the kind detection of a local TSV (`cached_records`), it is kept in
this process for the dataset constructor that follows (`take_fresh_scan`), so a first load reads the file once,
not once to detect its kind, once to hash it and once for its table.

Measured with `python tools/bench_dataset_prep.py` (4,329 rows, 216 MB): the second load's construct went from
0.9 s (MD5 of 216 MB in a thread beside streaming the table) to 0.08 s with the stamp (the kind detection reading
the stamp's table too), and the image pass from 0.9 s to 0.03 s.

Set-up once across processes (torchrun ranks, `--shard` processes started together): a `lookup` that finds no
valid stamp takes the file's hashing lock (`<key>.lock` beside the stamp, `datasets_tsv.io.setup_lock`: a blocking
`fcntl.lockf` with a bounded wait) and looks again once it holds it, since another process may have written the
stamp meanwhile. Holding it, the process hashes the file (`scan`, which its loaders call next), writes the stamp as
soon as the scan has its MD5 and table, and gives the lock back; the processes that waited then find the stamp and
read neither the file nor its MD5. (`record` after that finds the stamp already written and writes nothing.)

Everything here is a cache: a stamp that is missing, unreadable, of another version or for another path is
ignored, and a stamp that cannot be written (a read-only `$LMUData`) is skipped silently.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlmkit.core.errors import DataError
from vlmkit.core.files import HashedBlocks, write_bytes_atomic, write_text_atomic

from datasets_tsv.io.setup_lock import SetupLock
from datasets_tsv.io.tsv_read import csv_reader, table_text

STAMP_DIR = ".vlmkit/tsv-stamps"
VERSION = 1
SETTLE_NS = 100_000_000  # sub-second time stamps: 10x the coarsest Linux clock tick
SETTLE_COARSE_NS = 2_000_000_000  # whole-second time stamps (FAT keeps 2 s)

Identity = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


def identity(path: Path) -> Identity:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def settled(ident: Identity, began_ns: int) -> bool:
    """True when the file's last change is far enough before began_ns that a later change must alter its mtime."""
    margin = SETTLE_COARSE_NS if ident[1] % 1_000_000_000 == 0 else SETTLE_NS
    return ident[1] < began_ns - margin and ident[2] < began_ns - margin


@dataclass(frozen=True)
class Stamp:
    """A TSV's verified MD5 with its identity when hashed, and the cached table text (None when absent)."""

    md5: str
    identity: Identity
    table: str | None


class StampStore:
    """The stamps of one `$LMUData` root (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.folder = root / STAMP_DIR

    def _paths(self, tsv: Path) -> tuple[Path, Path]:
        key = hashlib.sha1(str(tsv.resolve()).encode("utf-8", "surrogateescape"), usedforsecurity=False)
        stem = key.hexdigest()[:20]
        return self.folder / f"{stem}.json", self.folder / f"{stem}.table"

    def lookup(self, tsv: Path, ident: Identity, table_skip: str) -> Stamp | None:
        """The stamp of tsv when it is valid for the file as it is now (ident), else None. Without one, this process
        takes the file's hashing lock first and looks again (another process may have been hashing it); the lock is
        then held for the `scan` that follows, which writes the stamp and gives it back (see the module docstring)."""
        stamp = self._valid(tsv, ident, table_skip)
        if stamp is not None or not settled(ident, now_ns()):  # a file too new for a stamp: nothing to share
            return stamp
        key = str(tsv.resolve())
        claim = _claims.get(key)
        if claim is None:
            lock = SetupLock(self._paths(tsv)[0].with_suffix(".lock"), f"hashing {tsv}")
            if not lock.acquire():
                return None
            claim = _claims[key] = _Claim(self, lock, table_skip)
        stamp = self._valid(tsv, ident, table_skip)
        if stamp is not None:  # written by the process that held the lock before
            _release(key)
        return stamp

    def _valid(self, tsv: Path, ident: Identity, table_skip: str) -> Stamp | None:
        stamp_path, table_path = self._paths(tsv)
        try:
            raw: Any = json.loads(stamp_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (not isinstance(raw, dict) or raw.get("version") != VERSION or raw.get("path") != str(tsv.resolve())
                or raw.get("identity") != list(ident) or not isinstance(raw.get("md5"), str)):
            return None
        table = None
        if raw.get("table_skip") == table_skip and isinstance(raw.get("table_sha1"), str):
            try:
                text = table_path.read_bytes()
            except OSError:
                text = None
            if text is not None and hashlib.sha1(text, usedforsecurity=False).hexdigest() == raw["table_sha1"]:
                table = text.decode("utf-8", "surrogateescape")
        return Stamp(raw["md5"], ident, table)

    def record(self, tsv: Path, md5: str, ident: Identity, began_ns: int, table: str | None, table_skip: str) -> bool:
        """Write the stamp when the file was settled when hashing began (see `settled`); True when written. Gives
        back this process's hashing lock for the file, if it holds it."""
        try:
            return self._record(tsv, md5, ident, began_ns, table, table_skip)
        finally:
            _release(str(tsv.resolve()))

    def _record(self, tsv: Path, md5: str, ident: Identity, began_ns: int, table: str | None, table_skip: str) -> bool:
        if not settled(ident, began_ns):
            return False
        stamp_path, table_path = self._paths(tsv)
        body: dict[str, Any] = {"version": VERSION, "path": str(tsv.resolve()), "identity": list(ident), "md5": md5}
        try:
            if table is not None:
                data = table.encode("utf-8", "surrogateescape")
                body.update(table_skip=table_skip, table_sha1=hashlib.sha1(data, usedforsecurity=False).hexdigest())
                if _stored(stamp_path) == body and table_path.is_file():
                    return True  # written by the scan under the hashing lock: nothing to write again
                write_bytes_atomic(table_path, data)
            elif _stored(stamp_path) == body:
                return True
            write_text_atomic(stamp_path, json.dumps(body))
        except OSError:
            return False
        return True


def _stored(stamp_path: Path) -> Any:
    """The stamp file's JSON (None when it cannot be read)."""
    try:
        return json.loads(stamp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass
class _Claim:
    """A hashing lock this process holds for a file that had no stamp: the scan that follows writes the stamp into
    `store` and gives the lock back."""

    store: StampStore
    lock: SetupLock
    table_skip: str


_claims: dict[str, _Claim] = {}  # by the TSV's resolved path


def _release(key: str) -> None:
    claim = _claims.pop(key, None)
    if claim is not None:
        claim.lock.release()


def now_ns() -> int:
    return time.time_ns()


@dataclass(frozen=True)
class Scan:
    """One read of a TSV that both hashed it and streamed its table: the MD5 of the whole file, the table text (None
    when a row is bad: then `error` says which), the file's identity before reading and when reading began (what
    `StampStore.record` needs)."""

    md5: str
    identity: Identity
    began_ns: int
    table_skip: str
    table: str | None
    error: DataError | None


def scan(tsv: Path, table_skip: str = "image") -> Scan:
    """Read tsv once: its MD5 (on another core, `vlmkit.core.files.HashedBlocks`) and its table text from the same bytes.
    A bad row stops the table, not the hash: the whole file is still hashed, so a caller can tell first whether
    the file is the one it expected."""
    key = str(tsv.resolve())
    try:
        before = identity(tsv)
        began = now_ns()
        with HashedBlocks(tsv) as blocks:
            try:
                text, error = table_text(tsv, skip=table_skip, blocks=blocks), None
            except DataError as exc:
                text, error = None, exc
            md5 = blocks.hexdigest()
        claim = _claims.get(key)
        if claim is not None and text is not None and claim.table_skip == table_skip and identity(tsv) == before:
            claim.store._record(tsv, md5, before, began, text, table_skip)  # for the processes waiting on the lock
    finally:
        _release(key)  # whatever happened: a waiter then hashes the file itself
    return Scan(md5, before, began, table_skip, text, error)


_fresh: dict[str, Scan] = {}  # at most one scan, made by `cached_records` for the dataset constructor that follows


def take_fresh_scan(tsv: Path, ident: Identity, table_skip: str) -> Scan | None:
    """The scan `cached_records` just made of tsv in this process, when the file is still as it was then (ident:
    its identity now); taken once (the table text is not kept longer than that)."""
    found = _fresh.pop(str(tsv.resolve()), None)
    if found is None or found.identity != ident or found.table_skip != table_skip:
        return None
    return found


def cached_records(root: Path, tsv: Path, table_skip: str = "image") -> tuple[list[str], Iterator[list[bytes]]] | None:
    """(header, records) of tsv's columns but table_skip: what `tsv_read.iter_records` gives for those columns, for a
    reader that needs only a few of them (the kind detection of a local TSV) before the dataset is constructed.

    From the stamp when the file is unchanged since it was stamped (the file is not read). Otherwise from one
    `scan` of the file, which also hashes it; the scan of a settled file is kept (`take_fresh_scan`) for the
    dataset constructor that follows, so a first load reads the file once for both. None when the file cannot be
    read as a table (the constructor then reads it again and reports the bad row)."""
    try:
        ident = identity(tsv)
        stamp = StampStore(root).lookup(tsv, ident, table_skip)
        if stamp is not None and stamp.table is not None:
            text = stamp.table
        else:
            fresh = scan(tsv, table_skip)
            if fresh.table is None:
                return None
            if settled(fresh.identity, fresh.began_ns) and identity(tsv) == fresh.identity:
                _fresh.clear()
                _fresh[str(tsv.resolve())] = fresh
            text = fresh.table
    except OSError:
        return None
    reader = csv_reader(io.StringIO(text))
    header = next(reader, [])
    return header, ([field.encode("utf-8", "surrogateescape") for field in row] for row in reader)
