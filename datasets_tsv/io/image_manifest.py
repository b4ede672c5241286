"""Which content each decoded image file was written from, so a file is reused only for the same picture.

The image folder holds `.vlmkit-images.json`: `{"version": 1, "files": {name: [digest, size, mtime_ns]}}`, name
relative to the folder, digest the SHA-1 of the base64 field the file was decoded from. A file is reused when its
record has the same digest and the file still has the recorded size and mtime (nobody replaced it since);
otherwise, and when there is no record (a folder from an older vlmkit, or from VLMEvalKit), it is written again.
Hashing the base64 text costs a fraction of decoding it (on the development machine SHA-1 ran at about 1.5 GB/s,
base64 decoding at about 0.2 GB/s); SHA-1 is used for speed, not for security: the digest only tells two pictures
apart.

A complete pass over a TSV whose MD5 is known for certain (the caller's verified MD5 of the file as it is now: a
fresh hash, or a `datasets_tsv.io.tsv_stamp` stamp of the unchanged file) is recorded too, under `"passes"`:
`{md5: {"tsv": path, "rows": [[name, ...], ...], "files": {name: digest}}}`, each row's images as the pass
returned them (names relative to the folder; absolute for an existing file outside it). A later pass over a TSV
with that same MD5 then reads nothing of the TSV: it takes the rows from the record after checking that every
file the record names still has the recorded digest in the manifest and the recorded size and mtime on disk (an
existing file named by `image_path`: that it still exists, as a full pass checks). The guarantee is unchanged:
the same MD5 means the same base64 fields, so the same digests; a file replaced by hand, or rewritten since by
another dataset sharing the folder, fails the check and the full pass runs (and rewrites it). Only the last
`MAX_PASSES` passes are kept.

The manifest is written atomically after a pass (also after a pass that failed half-way: what was written is
recorded), merged with what is on disk then, so two datasets sharing a folder keep each other's records. A
manifest that cannot be read counts as empty: the worst case is that images are written again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from vlmkit.core.files import write_text_atomic

MANIFEST_NAME = ".vlmkit-images.json"
VERSION = 1

PASS_VERSION = 1  # of how a pass names and orders its files; a record of another version is ignored
MAX_PASSES = 8

Record = tuple[str, int, int]  # digest, size, mtime_ns


def content_digest(b64: str | bytes) -> str:
    """The digest of one image's base64 field (as read from the TSV)."""
    data = b64.encode("ascii", "replace") if isinstance(b64, str) else b64
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


class ImageManifest:
    """The records of one image folder (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / MANIFEST_NAME
        self.records, self.passes = _read(self.path)
        self.changed: dict[str, Record] = {}
        self.new_passes: dict[str, dict[str, Any]] = {}

    def is_current(self, name: str, digest: str, path: Path | str) -> bool:
        """True when path was written from content with this digest and has not been touched since."""
        record = self.changed.get(name) or self.records.get(name)
        if record is None or record[0] != digest:
            return False
        try:
            stat = os.stat(path)
        except OSError:
            return False
        return (stat.st_size, stat.st_mtime_ns) == record[1:]

    def knows(self, name: str) -> bool:
        """True when there is a record for name (else nothing there can be reused, whatever its content)."""
        return name in self.changed or name in self.records

    def record(self, name: str, digest: str, path: Path, stat: os.stat_result | None = None) -> None:
        """Note that path was just written from content with this digest (stat: its stat as written, when the
        writer has it)."""
        if stat is None:
            stat = os.stat(path)
        self.changed[name] = (digest, stat.st_size, stat.st_mtime_ns)

    def save(self) -> None:
        """Write the records (merged with the manifest on disk now), only when this pass changed any."""
        if not self.changed and not self.new_passes:
            return
        records, passes = _read(self.path)
        merged = {**records, **self.changed}
        passes = {**{k: v for k, v in passes.items() if k not in self.new_passes}, **self.new_passes}
        passes = dict(list(passes.items())[-MAX_PASSES:])
        files = {name: list(record) for name, record in sorted(merged.items())}
        body = {"version": VERSION, "files": files, "passes": passes}
        write_text_atomic(self.path, json.dumps(body, separators=(",", ":")))
        self.records, self.passes, self.changed, self.new_passes = merged, passes, {}, {}

    def record_pass(self, tsv_md5: str, tsv: Path, rows: list[list[str]], digests: dict[str, str]) -> None:
        """Note a complete pass over the TSV with this MD5: each row's files (as returned), and the digest of each
        file written or reused (by manifest name)."""
        base = str(self.folder.resolve()) + os.sep
        named = [[p[len(base):].replace(os.sep, "/") if p.startswith(base) else p for p in row] for row in rows]
        self.new_passes[tsv_md5] = {"pass_version": PASS_VERSION, "tsv": str(tsv), "rows": named, "files": digests}

    def replay(self, tsv_md5: str, tsv: Path) -> list[list[str]] | None:
        """The rows of a recorded pass over the TSV with this MD5 when every file it names is as recorded (see the
        module docstring); None when there is no such pass or anything changed."""
        record = self.passes.get(tsv_md5)
        if not isinstance(record, dict) or record.get("pass_version") != PASS_VERSION or record.get("tsv") != str(tsv):
            return None
        rows, digests = record.get("rows"), record.get("files")
        if not isinstance(rows, list) or not isinstance(digests, dict):
            return None
        base = str(self.folder.resolve()) + os.sep
        native = (lambda name: name) if os.sep == "/" else (lambda name: name.replace("/", os.sep))
        checked: dict[str, str] = {}
        out: list[list[str]] = []
        for row in rows:
            if not isinstance(row, list):
                return None
            paths = []
            for name in row:
                full = checked.get(name) if isinstance(name, str) else None
                if full is None:
                    if not isinstance(name, str):
                        return None
                    full = name if os.path.isabs(name) else base + native(name)
                    digest = digests.get(name)
                    if digest is not None:
                        if not self.is_current(name, digest, full):
                            return None
                    elif not os.path.isfile(full):
                        return None
                    checked[name] = full
                paths.append(full)
            out.append(paths)
        return out


def _read(path: Path) -> tuple[dict[str, Record], dict[str, dict[str, Any]]]:
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("files"), dict):
        return {}, {}
    records: dict[str, Record] = {}
    for name, value in raw["files"].items():
        if (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value[1:])):
            records[name] = (value[0], value[1], value[2])
    passes = raw.get("passes")
    return records, (passes if isinstance(passes, dict) else {})


def relative_name(folder: Path, path: Path) -> str:
    """path's name relative to folder (both resolved, path inside folder), with `/` separators: the manifest's
    key. String slicing: this runs once per image, and os.path.relpath costs more than the rest of a reuse check."""
    base, full = str(folder), str(path)
    if not full.startswith(base + os.sep):
        return Path(os.path.relpath(full, base)).as_posix()
    name = full[len(base) + 1:]
    return name.replace(os.sep, "/") if os.sep != "/" else name
