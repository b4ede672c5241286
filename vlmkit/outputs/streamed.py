"""Writing a large text file a line at a time, atomically: a reader never sees half a file, and the writer never
holds the whole text (predictions.jsonl of a million rows is hundreds of MB)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


@contextmanager
def atomic_file(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write that becomes `path` (by rename) when the block ends without an error; on an error the
    temporary file is removed and any earlier `path` stays as it was. Permissions as open() gives (the umask's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, _FLAGS, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{path.parent}: no free temporary file name for {path.name}")
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
