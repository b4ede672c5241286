"""The JSON objects of a workload file (a session or trace jsonl), with one line naming the file and line for a line
that is not one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vlmkit.perf.options import PerfInputError


def json_objects(path: Path, flag: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of `path` (read as `flag`, e.g. `--trace`)."""
    if not path.is_file():
        raise PerfInputError(f"{flag} {path}: no such file")
    with open(path, encoding="utf-8-sig") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except ValueError as exc:
                raise PerfInputError(f"{path}: line {number}: not JSON ({exc})") from None
            if not isinstance(record, dict):
                raise PerfInputError(f"{path}: line {number}: expected a JSON object")
            yield number, record
