"""The prediction journal: one JSON line per sample, appended as each answer arrives (`append`; the run loop's
answers that arrive together are written by one `flush()`, `append(defer=True)`). Nothing is buffered in the process
beyond that: each write() goes straight to the file (O_APPEND), and a record is held as journalled only once its
whole line is there.

A killed run loses at most the lines being written (one record's, or the few deferred ones of one flush); a rerun
reads the journal back and asks the model only for samples that have no successful record. The first line is a
header holding the run's fingerprint (see `vlmkit.run.resume`: what the answers depend on): a journal written under
other settings is not silently mixed with new answers. Every line passes through `vlmkit.core.secrets.scrub` with
the run's keys before it is written.

A damaged journal costs no more than its damaged lines: the file is read as bytes, and a line that is not UTF-8 JSON
(NUL bytes after a power loss, a line cut inside a character by a short write) is skipped, counted and named in one
warning; every readable record is kept. A damaged header leaves the settings unknown (`stored_fingerprint` is None,
`header_lost` is True).

A shard's journal (`vlmkit run --shard I/N`, or rank I of N under torchrun) says so in its header (`__shard__`:
[I, N]), so that a later run reads only the journals that can hold its rows (vlmkit.run.shards.may_overlap) without
reading the rest past their first line. Records stay keyed by row index alone: any sharding reuses any answer.

Memory stays flat in the number of rows: a journal holds no record and no line, only where each index's latest line
starts in the file and whether it is an error (`JournalRecords`, a read-only mapping that reads a record from the
file when it is asked for one). A million answered rows cost about 100 bytes each here, not the ~3 KB a held record
and its line cost.

One process writes a pair's journal at a time: `open()` (or `lock()`) takes a non-blocking `fcntl.flock` on
`<journal>.lock` beside it, holding the writer's pid; a second writer is refused (`JournalBusy`, one line naming that
pid). The kernel drops the lock when its process ends, killed or not (where there is no fcntl, as on Windows, the
pair is not locked). Within one opening, an index that has a
successful record is never journalled again.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no flock; the pair is not locked there
    fcntl = None  # type: ignore[assignment]

from vlmkit.core.cells import index_key, listed
from vlmkit.core.errors import ConfigError
from vlmkit.core.files import move_aside
from vlmkit.core.secrets import scrub

# one encoder for every record line (json.dumps builds a new one per call with these options)
_LINE = json.JSONEncoder(ensure_ascii=False, default=str)

log = logging.getLogger("vlmkit")

HEADER_KEY = "__journal__"
SHARD_KEY = "__shard__"  # in the header of a shard's journal: [I, N]
LOCK_SUFFIX = ".lock"


class JournalBusy(ConfigError):
    """Another live process is writing this journal (it holds the lock file beside it)."""


def _parsed(raw: bytes) -> Any:
    """One journal line as JSON, or None where it cannot be read (not UTF-8, not JSON, nested past the parser)."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _numbered_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line without its newline) of every non-blank line, read as bytes."""
    for number, _, raw in _placed_lines(path):
        yield number, raw


def _placed_lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(1-based line number, byte offset where the line starts, raw line without its newline) of every non-blank
    line, read as bytes."""
    offset = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            raw = raw.rstrip(b"\r\n")
            if raw.strip():
                yield number, start, raw


class JournalRecords(Mapping[str, dict[str, Any]]):
    """A journal's latest record of each index, by index key, read from the file when asked for (`[key]`, `.get`):
    what is held is one int a key (where the line starts, and whether the record is an error). `failed(key)` and
    `key in records` read nothing; `line(key)` gives the line's text as the file has it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._where: dict[str, int] = {}  # key -> offset * 2 + (1 if the record is an error)
        self._reader: Any = None  # a small-buffered read handle, opened on the first read

    def note(self, key: str, offset: int, failed: bool) -> None:
        """The record of key now starts at offset (a later line replaces an earlier one)."""
        self._where[key] = offset * 2 + failed

    def failed(self, key: str) -> bool:
        """Whether key's latest record is an error (False for a key without a record)."""
        return self._where.get(key, 0) & 1 == 1

    def offset(self, key: str) -> int | None:
        where = self._where.get(key)
        return None if where is None else where >> 1

    def raw(self, key: str) -> bytes:
        """The line of key's record as bytes, without its newline (KeyError without one)."""
        offset = self._where[key] >> 1
        if self._reader is None:
            self._reader = open(self.path, "rb", buffering=1 << 14)  # noqa: SIM115  (held while this object lives)
        self._reader.seek(offset)
        return self._reader.readline().rstrip(b"\r\n")

    def line(self, key: str) -> str:
        return self.raw(key).decode("utf-8")

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __getitem__(self, key: str) -> dict[str, Any]:
        record = _parsed(self.raw(key))
        if not isinstance(record, dict):  # the file changed under us (it never does while a run holds its lock)
            raise KeyError(key)
        return record

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __del__(self) -> None:
        self.close()


class MergedRecords(Mapping[str, dict[str, Any]]):
    """The records of several journals by index key (each key's from the journal that holds its answer; a later
    journal's record replaces an error), read from their files as JournalRecords reads them."""

    def __init__(self) -> None:
        self._from: dict[str, JournalRecords] = {}

    def take(self, source: JournalRecords) -> None:
        """Add a journal's records: each key whose held record is missing or an error takes source's."""
        held = self._from
        for key in source:
            where = held.get(key)
            if where is None or where.failed(key):
                held[key] = source

    def failed(self, key: str) -> bool:
        source = self._from.get(key)
        return source is not None and source.failed(key)

    def line(self, key: str) -> str:
        return self._from[key].line(key)

    def __getitem__(self, key: str) -> dict[str, Any]:
        return self._from[key][key]

    def __contains__(self, key: object) -> bool:
        return key in self._from

    def __iter__(self) -> Iterator[str]:
        return iter(self._from)

    def __len__(self) -> int:
        return len(self._from)


class Journal:
    def __init__(self, path: Path, fingerprint: dict[str, Any], secrets: Iterable[str | None] = (),
                 shard: tuple[int, int] | None = None) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.shard = shard  # (I, N) when this journal holds shard I of N's rows; written into a new file's header
        self._secrets = tuple(s for s in secrets if s)
        self._records = JournalRecords(path)
        self._read = False  # whether _records is the file: loaded (or set aside) here, and every append since
        self._fd: int | None = None  # an O_APPEND descriptor: each record is one write() call, nothing buffered
        self._size = 0  # the file's size while open (where the next line starts)
        self._opened_at = 0  # the file's size at open(): a record at or past it was journalled since
        self._lock_fd: int | None = None  # the flock'ed lock file while this object holds the pair
        self._lock_by_open = False  # open() took the lock (close() gives it back); lock() holds it until unlock()
        self._reported: tuple[int, ...] | None = None  # the skipped lines last warned about (one warning per damage)
        self._pending: list[tuple[str, bytes, bool]] = []  # deferred records: (key, line, is an error), not yet written
        self._pending_answered: set[str] = set()  # keys of the deferred records that are answers

    # Reading -----------------------------------------------------------------------------------------------
    def _first_line(self) -> bytes | None:
        """The first non-blank line as bytes (None: no file, or nothing in it)."""
        if not self.path.exists():
            return None
        return next((raw for _, raw in _numbered_lines(self.path)), None)

    def header_lost(self) -> bool:
        """Whether the journal's first line is there but cannot be read (NUL bytes, not UTF-8, not JSON): the settings
        it held are unknown. A journal without any header line (another tool's) is not one whose header was lost."""
        first = self._first_line()
        return first is not None and not isinstance(_parsed(first), dict)

    def stored_fingerprint(self) -> dict[str, Any] | None:
        """The header's fingerprint; None without a file, without a header line, or when that line is unreadable."""
        first = self._first_line()
        header = _parsed(first) if first is not None else None
        return header.get(HEADER_KEY) if isinstance(header, dict) else None

    def stored_shard(self) -> tuple[int, int] | None:
        """(I, N) from the header of a shard's journal; None for a journal of every row (or an unreadable header)."""
        first = self._first_line()
        header = _parsed(first) if first is not None else None
        value = header.get(SHARD_KEY) if isinstance(header, dict) else None
        if (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)
                and 0 <= value[0] < value[1]):
            return value[0], value[1]
        return None

    def load(self) -> JournalRecords:
        """Records by index key; a later record for the same index replaces an earlier one (a retried error)."""
        self._records.close()
        self._records = JournalRecords(self.path)
        self._read = True
        if not self.path.exists():
            return self._records
        skipped: list[int] = []
        for number, offset, raw in _placed_lines(self.path):
            record = _parsed(raw)
            if not isinstance(record, dict):
                skipped.append(number)  # the line a killed run was writing, NUL bytes, a character cut in two
                continue
            if "index" in record:
                self._records.note(index_key(record["index"]), offset, record.get("error") is not None)
        self._report(skipped)
        return self._records

    def _report(self, skipped: list[int]) -> None:
        """One warning for the lines that could not be read (once per object for the same lines)."""
        if not skipped or tuple(skipped) == self._reported:
            return
        self._reported = tuple(skipped)
        header = " (line 1 was the header: the settings it held are unknown)" if skipped[0] == 1 else ""
        log.warning("%s: skipped %d unreadable line(s) (line %s)%s; kept the %d readable record(s), only the rows "
                    "whose lines were lost are asked again", self.path, len(skipped), listed(skipped), header,
                    len(self._records))

    @property
    def records(self) -> JournalRecords:
        return self._records

    def current(self) -> JournalRecords:
        """The file's records: the index built when this object read the file, with every line written since (no
        second read of a journal it has just written), else load()."""
        return self._records if self._read else self.load()

    def line(self, key: str, record: dict[str, Any] | None) -> str | None:
        """The JSON line the file holds for key when it is `record` (equal to it), so that a writer of the same record
        need not encode it again; None for any other record."""
        if record is None or key not in self._records:
            return None
        raw = self._records.raw(key)
        return raw.decode("utf-8") if _parsed(raw) == record else None

    def done(self) -> set[str]:
        """Index keys with a successful prediction (errors are retried)."""
        return {key for key in self._records if not self._records.failed(key)}

    # Writing -----------------------------------------------------------------------------------------------
    def set_aside(self) -> Path:
        """Move an existing journal out of the way (kept, never deleted) and return where it went."""
        aside = move_aside(self.path)
        self._records.close()
        self._records = JournalRecords(self.path)
        self._read = True  # no file now: nothing in it
        return aside

    def open(self) -> None:
        """Open for appending; JournalBusy when another live process holds the pair's lock."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._lock_fd is None:
            self.lock()
            self._lock_by_open = True
        new = self._first_line() is None  # no file, an empty one, or blank lines only: it gets its header
        if not new:
            self._repair_tail()
            self._widen_shard_claim()
        # a new journal's header is its first line: blank lines before it (a crash after the first newline) go
        trunc = os.O_TRUNC if new else 0
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | trunc, 0o644)
        self._size = self._opened_at = os.fstat(self._fd).st_size
        if new:
            self._records.close()
            self._records, self._read = JournalRecords(self.path), True  # a new file holds what this object writes
            header: dict[str, Any] = {HEADER_KEY: self.fingerprint}
            if self.shard is not None:
                header[SHARD_KEY] = list(self.shard)
            self._write(header)

    def _widen_shard_claim(self) -> None:
        """A journal whose header says it holds shard J of M, now written by another shard (torchrun's
        journal.rank<R>.jsonl under another world size), loses that claim: it may hold any row from now on. The file
        is rewritten once with a header of the fingerprint alone (a rare event: a new split of the same run)."""
        stored = self.stored_shard()
        if stored is None or stored == self.shard:
            return
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        with open(self.path, "rb") as source, open(tmp, "wb") as target:
            first = source.readline()
            while first and not first.strip():  # blank lines before the header (an earlier vlmkit's): dropped
                first = source.readline()
            header = _parsed(first.rstrip(b"\r\n"))
            if not isinstance(header, dict):  # the file changed since stored_shard read it: left as it is
                target.close()
                tmp.unlink()
                return
            header.pop(SHARD_KEY, None)
            target.write((json.dumps(header, ensure_ascii=False) + "\n").encode("utf-8"))
            while chunk := source.read(1 << 20):
                target.write(chunk)
            target.flush()
            os.fsync(target.fileno())
        os.replace(tmp, self.path)
        if self._read:  # every line moved by the header's new length
            self.load()

    def _repair_tail(self) -> None:
        """End a half-written last line (a killed run) so that the next record starts on its own line."""
        with open(self.path, "rb+") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")

    def append(self, record: dict[str, Any], *, defer: bool = False) -> bool:
        """Journal record; False (nothing written) when its index already has an answer journalled since open().

        defer: the line is encoded now and written by the next `flush()` (or the next append that is not deferred),
        together with the other lines deferred until then: one write() for the answers that arrive together (the run
        loop flushes once per turn of its event loop, and before it reports any answer as the last)."""
        if self._fd is None:
            raise RuntimeError("journal is not open")
        key = index_key(record["index"])
        if self._answered_since_open(key):
            log.warning("%s: index %s was answered already in this run; its second record is not journalled",
                        self.path, record["index"])
            return False
        failed = record.get("error") is not None
        line = self._encode(record)
        self._pending.append((key, line, failed))
        if not failed:
            self._pending_answered.add(key)
        if not defer:
            self.flush()
        return True

    def _answered_since_open(self, key: str) -> bool:
        if key in self._pending_answered:
            return True
        offset = self._records.offset(key)
        return offset is not None and offset >= self._opened_at and not self._records.failed(key)

    @property
    def pending(self) -> int:
        """Records appended with `defer` and not yet written."""
        return len(self._pending)

    def flush(self) -> None:
        """Write the deferred records, in the order appended, in one write() (finished here after a short write).
        Each record is held as journalled once its whole line is on disk; an OSError (a full disk) leaves the lines
        not written out of the journal, as a failed append always has."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        self._pending_answered.clear()
        start = self._size
        try:
            self._write_bytes(pending[0][1] if len(pending) == 1 else b"".join(line for _, line, _ in pending))
        finally:
            offset = start
            for key, line, failed in pending:
                end = offset + len(line)
                if end > self._size:  # not (wholly) on disk
                    break
                self._records.note(key, offset, failed)
                offset = end

    def _encode(self, obj: dict[str, Any]) -> bytes:
        """obj as one journal line (UTF-8, newline-terminated), every secret scrubbed."""
        line = _LINE.encode(obj)
        if self._secrets:
            line = scrub(line, self._secrets)
        return (line + "\n").encode("utf-8")

    def _write(self, obj: dict[str, Any]) -> int:
        """Append obj as one line now; returns the offset where the line starts."""
        self.flush()
        start = self._size
        self._write_bytes(self._encode(obj))
        return start

    def _write_bytes(self, data: bytes) -> None:
        assert self._fd is not None
        while data:  # a regular file takes it in one call; a short write is finished here, a full disk raises
            written = os.write(self._fd, data)
            if written <= 0:
                raise OSError(f"{self.path}: the journal took no bytes")
            data = data[written:]
            self._size += written

    def close(self) -> None:
        if self._fd is not None:
            deferred = len(self._pending)
            try:
                self.flush()
            except OSError as exc:  # said, not raised: close() runs in `finally` blocks, after the run's own error
                log.warning("%s: up to %d record(s) could not be written (%s); those rows are asked again on the next "
                            "run", self.path, deferred, exc)
            finally:
                self._pending.clear()
                self._pending_answered.clear()
                os.close(self._fd)
            self._fd = None
        if self._lock_by_open:
            self.unlock()

    # The pair's lock -----------------------------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + LOCK_SUFFIX)

    def lock(self) -> None:
        """Hold the pair (idempotent): a non-blocking flock on the lock file beside the journal, which then holds this
        process's pid. JournalBusy, naming the holder's pid, when another live process holds it."""
        if self._lock_fd is not None or fcntl is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(100):  # the file may be removed by its holder between our open and flock: take the new one
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES, errno.EAGAIN):
                    raise
                who = f"pid {holder}" if holder.isdigit() else "another process"
                raise JournalBusy(f"{self.path}: another vlmkit run ({who}) is writing this journal; let it finish "
                                  "or stop it, then run again (nothing was journalled by this run)") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.lock_path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # locked a file its holder had just removed
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self._lock_fd = fd
            return
        raise JournalBusy(f"{self.path}: the lock file {self.lock_path.name} keeps changing; is another run starting?")

    def unlock(self) -> None:
        """Give the pair back: the lock file is removed while still held (so no waiter holds a removed file's lock)."""
        if self._lock_fd is None:
            return
        try:
            self.lock_path.unlink(missing_ok=True)
        finally:
            os.close(self._lock_fd)
            self._lock_fd, self._lock_by_open = None, False

    def __enter__(self) -> "Journal":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def index_keys(values: Iterable[Any]) -> list[str]:
    return [index_key(v) for v in values]
