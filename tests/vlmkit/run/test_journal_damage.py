"""Journal on real files: damaged lines are skipped and counted (the rest kept), one writer per journal (a lock file
beside it), and one answer per index within a run (issue 22)."""

from __future__ import annotations

import json
import logging
import os

import pytest

from vlmkit.run.journal import Journal, JournalBusy

FP = {"model": "m", "dataset": "d"}


def written(tmp_path, lines: list[bytes]):
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def record(index: int, text: str = "A") -> bytes:
    return json.dumps({"index": index, "prediction": text, "error": None}, ensure_ascii=False).encode()


def cut_inside_a_character(line: bytes) -> bytes:
    return line[: line.index("\u4e2d".encode()) + 1]  # one byte of three: a short write


def test_unreadable_lines_anywhere_are_skipped_counted_and_named(tmp_path, caplog):
    header = json.dumps({"__journal__": FP}).encode()
    path = written(tmp_path, [b"\0" * len(header), record(1), record(2, "\u00e9").replace(b"\xc3\xa9", b"\xff"),
                              record(3), b"[" * 100_000, cut_inside_a_character(record(4, "\u4e2d"))])
    journal = Journal(path, FP)
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        records = journal.load()
        journal.load()  # the same damage is said once
    assert sorted(records) == ["1", "3"]
    [message] = [r.getMessage() for r in caplog.records]
    assert "skipped 4 unreadable line(s) (line 1, 3, 5, 6)" in message and str(path) in message
    assert journal.stored_fingerprint() is None and journal.header_lost()


def test_a_readable_header_is_not_lost(tmp_path):
    path = written(tmp_path, [json.dumps({"__journal__": FP}).encode(), record(1)])
    journal = Journal(path, FP)
    assert journal.stored_fingerprint() == FP and not journal.header_lost()
    assert not Journal(written(tmp_path, [record(1)]), FP).header_lost()  # no header at all: not a damaged one


def test_an_index_answered_in_this_run_is_not_journalled_again(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, FP) as journal:
        assert journal.append({"index": 1, "prediction": None, "error": {"kind": "timeout"}})
        assert journal.append({"index": 1, "prediction": "A", "error": None})  # a retried error: kept
        assert not journal.append({"index": "1", "prediction": "B", "error": None})
    indices = [json.loads(line).get("index") for line in path.read_text().splitlines()[1:]]
    assert indices == [1, 1]
    assert Journal(path, FP).load()["1"]["prediction"] == "A"
    with Journal(path, FP) as journal:  # a later run may answer it again (a changed prompt)
        assert journal.append({"index": 1, "prediction": "C", "error": None})


def test_a_second_writer_is_refused_naming_the_holder_and_the_lock_is_given_back(tmp_path):
    path = tmp_path / "pair" / "journal.jsonl"
    first = Journal(path, FP)
    first.open()
    lock = path.with_name("journal.jsonl.lock")
    assert lock.read_text().strip() == str(os.getpid())
    with pytest.raises(JournalBusy, match=f"pid {os.getpid()}"):
        Journal(path, FP).open()  # flock is per open file: a second open in this process is refused too
    first.append({"index": 1, "prediction": "A", "error": None})
    first.close()
    assert not lock.exists()
    with Journal(path, FP) as again:
        again.append({"index": 2, "prediction": "B", "error": None})
    assert sorted(Journal(path, FP).load()) == ["1", "2"]


def test_a_lock_file_left_by_a_dead_process_is_taken(tmp_path):
    path = tmp_path / "journal.jsonl"
    path.with_name("journal.jsonl.lock").write_text("999999999\n")  # no flock on it: its process is gone
    with Journal(path, FP) as journal:
        journal.append({"index": 1, "prediction": "A", "error": None})
    assert sorted(Journal(path, FP).load()) == ["1"]
