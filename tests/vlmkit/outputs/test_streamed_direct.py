"""vlmkit.outputs.streamed.atomic_file: a file written a piece at a time appears whole by rename, or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vlmkit.outputs.streamed import atomic_file


def test_the_file_appears_whole_only_when_the_block_ends(tmp_path: Path):
    path = tmp_path / "deep" / "predictions.jsonl"
    with atomic_file(path) as handle:
        for i in range(1000):
            handle.write(b'{"index": %d}\n' % i)
        assert not path.exists()  # nothing at the name while writing
        (tmp,) = [p for p in path.parent.iterdir()]
        assert tmp.name.startswith(".predictions.jsonl.") and tmp.name.endswith(".tmp")
    assert path.read_bytes().count(b"\n") == 1000
    assert [p.name for p in path.parent.iterdir()] == ["predictions.jsonl"]


def test_an_error_keeps_the_earlier_file_and_leaves_no_temporary_file(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"earlier\n")
    with pytest.raises(KeyboardInterrupt):
        with atomic_file(path) as handle:
            handle.write(b"half")
            raise KeyboardInterrupt  # any exception, an interrupt included
    assert path.read_bytes() == b"earlier\n" and [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_permissions_follow_the_umask_like_open(tmp_path: Path):
    old = os.umask(0o027)
    try:
        with atomic_file(tmp_path / "a") as handle:
            handle.write(b"x")
        with open(tmp_path / "b", "wb") as handle:
            handle.write(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "a").stat().st_mode & 0o777 == (tmp_path / "b").stat().st_mode & 0o777 == 0o640
