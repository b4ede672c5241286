"""The prediction journal: one JSON line per sample, appended and flushed as each answer arrives.

A killed run loses at most the line being written; a rerun reads the journal back and asks the model only for
samples that have no successful record. The first line is a header holding the run's fingerprint (see
`vlmkit.run.resume`: what the answers depend on): a journal written under other settings is not silently mixed with
new answers. Every line passes through `vlmkit.core.secrets.scrub` with the run's keys before it is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vlmkit.core.cells import index_key
from vlmkit.core.files import move_aside
from vlmkit.core.secrets import scrub

HEADER_KEY = "__journal__"


class Journal:
    def __init__(self, path: Path, fingerprint: dict[str, Any], secrets: Iterable[str | None] = ()) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self._secrets = tuple(s for s in secrets if s)
        self._records: dict[str, dict[str, Any]] = {}
        self._lines: dict[str, str] = {}  # each held record's line as the file has it (see `line`)
        self._read = False  # whether _records is the file: loaded (or set aside) here, and every append since
        self._fd: int | None = None  # an O_APPEND descriptor: each record is one write() call, nothing buffered

    # Reading -----------------------------------------------------------------------------------------------
    def stored_fingerprint(self) -> dict[str, Any] | None:
        if not self.path.exists():
            return None
        with open(self.path, encoding="utf-8") as handle:
            first = handle.readline()
        try:
            header = json.loads(first)
        except json.JSONDecodeError:
            return None
        return header.get(HEADER_KEY) if isinstance(header, dict) else None

    def load(self) -> dict[str, dict[str, Any]]:
        """Records by index key; a later record for the same index replaces an earlier one (a retried error)."""
        self._records, self._lines = {}, {}
        self._read = True
        if not self.path.exists():
            return self._records
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the line a killed run was writing
                if isinstance(record, dict) and "index" in record:
                    key = index_key(record["index"])
                    self._records[key], self._lines[key] = record, line.rstrip("\n")
        return self._records

    @property
    def records(self) -> dict[str, dict[str, Any]]:
        return self._records

    def current(self) -> dict[str, dict[str, Any]]:
        """The file's records: those held here when this object read the file and wrote every line since (no
        second read of a journal it has just written), else load()."""
        return self._records if self._read else self.load()

    def line(self, key: str, record: dict[str, Any] | None) -> str | None:
        """The JSON line this journal holds for `record` (the very object it holds under key), so that a writer of
        the same record need not encode it again; None for any other object."""
        return self._lines.get(key) if record is not None and self._records.get(key) is record else None

    def done(self) -> set[str]:
        """Index keys with a successful prediction (errors are retried)."""
        return {key for key, rec in self._records.items() if rec.get("error") is None}

    # Writing -----------------------------------------------------------------------------------------------
    def set_aside(self) -> Path:
        """Move an existing journal out of the way (kept, never deleted) and return where it went."""
        aside = move_aside(self.path)
        self._records, self._lines = {}, {}
        self._read = True  # no file now: nothing in it
        return aside

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or self.path.stat().st_size == 0
        if not new:
            self._repair_tail()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if new:
            self._records, self._lines, self._read = {}, {}, True  # a new file holds what this object writes
            self._write({HEADER_KEY: self.fingerprint})

    def _repair_tail(self) -> None:
        """End a half-written last line (a killed run) so that the next record starts on its own line."""
        with open(self.path, "rb+") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")

    def append(self, record: dict[str, Any]) -> None:
        if self._fd is None:
            raise RuntimeError("journal is not open")
        line = self._write(record)
        if self._secrets:  # held as the file holds it: every key scrubbed (these records become predictions.jsonl)
            record = json.loads(line)
        key = index_key(record["index"])
        self._records[key], self._lines[key] = record, line

    def _write(self, obj: dict[str, Any]) -> str:
        """Append obj as one line; returns the line as written."""
        assert self._fd is not None
        line = scrub(json.dumps(obj, ensure_ascii=False, default=str), self._secrets)
        data = (line + "\n").encode("utf-8")
        while data:  # a regular file takes it in one call; a short write is finished here, a full disk raises
            written = os.write(self._fd, data)
            if written <= 0:
                raise OSError(f"{self.path}: the journal took no bytes")
            data = data[written:]
        return line

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "Journal":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def index_keys(values: Iterable[Any]) -> list[str]:
    return [index_key(v) for v in values]
