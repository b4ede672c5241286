"""The image decoder: one pass over a benchmark TSV writes every image once (the reading: `datasets_tsv.io.tsv_read`).

TSV conventions (VLMEvalKit's):
- `image` holds base64. A value of 64 characters or fewer is the `index` of another row whose image(s) this row
  shares (that row may come later in the file). A value starting with `[` is a list (JSON or Python literal) of
  base64 strings: a multi-image row.
- `image_path` (a string, or a list for multi-image rows) names the decoded files, relative to the image folder.
  Without it a single image is `<index><ext>` and the k-th image of a list `<index>_<k><ext>`.
- A row with no `image` value but an `image_path` names files that already exist (absolute, or relative to the
  image folder or to the TSV's folder); nothing is written for it. A row with neither has no image.

What vlmkit does differently from VLMEvalKit, on purpose:
- The original bytes are written (a JPEG stays that JPEG; the suffix comes from the bytes when no name gives
  one); VLMEvalKit re-encodes through PIL and names every single image `.jpg`.
- A row that references another row's image uses that row's file(s) instead of writing a copy (its own
  `image_path`, if any, is ignored); chains of references are followed.
- An existing file is reused only when it was decoded from the same content (a digest of its base64 field,
  recorded in the folder's manifest, see `datasets_tsv.io.image_manifest`), so a folder left over from an older TSV
  with the same indices is refreshed, even where an old and a new picture have the same byte size.
- Two different images that would be written under one file name (two rows' `image_path`) are an error, not the
  later one silently replacing the earlier one's picture.
- Nothing is ever written outside the image folder, whatever `index` or `image_path` say.
- Pixels are never decoded here (an unusual format is judged by its header): an image whose header declares too
  many pixels is written like any other and refused for its own row when a model opens it (`vlmkit.core.media`).

The `image` column is never held in memory as a whole: records are streamed one at a time (`iter_records`, from
large blocks read once), both for the table without images (`read_table`) and for decoding (`iter_cells`: only
the index, image and image_path cells of each row, cut out with `bytes.find`), so a 200 MB TSV needs a few MB of
working memory. The decoded files are written on a second thread while the next rows are decoded (`_Writer`): in
order, each atomically, each recorded in the manifest once written (with the stat its write returned); a failed
write stops the pass. A plain file name (no `/`, not a symlink when the pass began) is placed in the folder
without a system call (`_Decoder.target`).

Measured on the 4,329-row MMBench-shaped TSV of `tools/bench_dataset_prep.py`, images on tmpfs: the image pass went
from 1.40 s to 0.92 s, of it 0.2 s from cutting three cells instead of splitting every 50 KB line, 0.2 s from a
write without pathlib or a buffered file object (`vlmkit.core.files.write_bytes_atomic`), 0.08 s from the symlink
listing instead of an lstat per image. What is left is base64 decoding (0.47 s, binascii, holding the GIL),
reading and cutting the lines (0.15 s) and the writes (0.2 s, on the second thread, but not free of the first).
"""

from __future__ import annotations

import base64
import binascii
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path

from tqdm import tqdm

from vlmkit.core.cells import index_key
from vlmkit.core.files import (
    UnsafePathError,
    contained_child,
    contained_path,
    write_bytes_atomic,
)
from vlmkit.core.media import MediaError, b64_to_bytes, declared_size, image_extension
from vlmkit.core.message import IMAGE_EXTENSIONS

from datasets_tsv.io.image_manifest import ImageManifest, content_digest, relative_name
from datasets_tsv.io.setup_lock import SetupLock
from datasets_tsv.io.tsv_read import READ_BLOCK, DatasetError, cell, field_text, iter_cells, parse_list

REFERENCE_MAX_CHARS = 64  # VLMEvalKit: an `image` value this short is another row's index
_KNOWN_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")


B64 = str | bytes  # a base64 field as read (bytes from the stream, str from a parsed list)


class _Decoder:
    """State of one pass: where files go and how to name a row in an error."""

    def __init__(self, tsv: Path, folder: Path) -> None:
        self.tsv = tsv
        self.folder = folder
        self.base = folder.resolve()
        self.manifest = ImageManifest(folder)
        self.seen: dict[str, tuple[str | None, int]] = {}  # file name -> (digest, row) of this pass; None: the
        # writer's to compute (a name the manifest has no record of)
        self.writer = _Writer(self.manifest)
        self.prefix = f"{self.base}{os.sep}"
        # names in the folder that are symlinks, listed once (no stat each: the listing's file types say): a plain
        # name that is none of them is base/name as it is (see `target`)
        self.symlinks = {entry.name for entry in os.scandir(self.base) if entry.is_symlink()}

    def where(self, pos: int, index: str, field: str) -> str:
        return f"{self.tsv}: row {pos} (index {index}), field {field}"

    def target(self, name: str, pos: int, index: str, field: str) -> tuple[str, str]:
        """(path, manifest name) of file name in the folder, refusing any name that would leave it.

        A plain name (one part, not a dot, not a symlink when the pass began) is base/name as it is, without a
        system call: `contained_child` would find the same (it resolves only symlinks, and the files this pass
        writes replace whatever is at their path by a rename, which never follows a symlink). Anything else goes
        through `contained_child`."""
        if os.sep == "/" and "/" not in name and "\x00" not in name and name.strip() not in ("", ".", "..") \
                and name not in self.symlinks:
            return self.prefix + name, name
        try:
            path = contained_child(self.base, name)
        except UnsafePathError as exc:
            where = self.where(pos, index, field)
            raise DatasetError(f"{where}: {exc}; refusing to write outside {self.folder}") from None
        return str(path), relative_name(self.base, path)

    def index_stem(self, index: str, pos: int) -> str:
        if not index or any(sep in index for sep in ("/", "\\", os.sep)) or index in (".", ".."):
            raise DatasetError(
                f"{self.where(pos, index, 'index')}: {index!r} cannot name an image file (path separator or dot); "
                "give an `image_path` column or a plain index"
            )
        return index

    def materialise(self, b64: B64, name: str | None, stem: str, pos: int, index: str, field: str) -> str:
        """Write one base64 image unless the file there was decoded from the same content; return its path."""
        data: bytes | None = None
        if name is not None and Path(name).suffix.lower() in IMAGE_EXTENSIONS:
            path, key = self.target(name, pos, index, "image_path")
        else:
            data = self.decode(b64, pos, index, field) if _needs_full_decode(b64) else None
            head = data[:16] if data is not None else self.head(b64, pos, index, field)
            path, key = self.target((name or stem) + image_extension(head), pos, index,
                                    "image_path" if name else "index")
        earlier = self.seen.get(key)
        if earlier is None and not self.manifest.knows(key):  # written whatever its digest: the writer computes it
            if data is None:
                data = self.decode(b64, pos, index, field)
            self.seen[key] = (None, pos)
            self.writer.write(key, None, b64, path, data)
            return path
        digest = content_digest(b64)
        if earlier is not None:
            if (earlier[0] or self.writer.digest(key)) != digest:
                raise DatasetError(
                    f"{self.where(pos, index, field)}: its image would be written to {key}, where row {earlier[1]} "
                    "put a different image; give the rows different `image_path` names"
                )
            return path  # this pass has it
        self.seen[key] = (digest, pos)
        if self.manifest.is_current(key, digest, path):
            return path
        if data is None:
            data = self.decode(b64, pos, index, field)
        self.writer.write(key, digest, b64, path, data)
        return path

    def digests(self) -> dict[str, str]:
        """The digest of every file of this pass, by manifest name (once the writer has stopped)."""
        return {key: digest or self.writer.digests[key] for key, (digest, _) in self.seen.items()}

    def decode(self, b64: B64, pos: int, index: str, field: str) -> bytes:
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            try:  # whitespace, missing padding or a data: prefix: the tolerant decoder
                text = b64.decode("ascii", "replace") if isinstance(b64, bytes) else b64
                data = b64_to_bytes(text)
            except MediaError as exc:
                raise DatasetError(f"{self.where(pos, index, field)}: {exc}") from None
        if not data:
            raise DatasetError(f"{self.where(pos, index, field)}: empty image")
        if not _has_known_signature(data) and declared_size(data) is None:  # an unusual format: PIL's header judges
            raise DatasetError(f"{self.where(pos, index, field)}: not a readable image (no image format recognised)")
        return data

    def head(self, b64: B64, pos: int, index: str, field: str) -> bytes:
        try:
            return base64.b64decode(b64[:16], validate=True)
        except (binascii.Error, ValueError):
            return self.decode(b64, pos, index, field)[:16]


class _Writer:
    """Writes the decoded images on a second thread, in order, while the pass decodes the next ones: writing (and
    hashing a field whose digest only the manifest needs) releases the GIL, so on two cores it costs the pass
    little. Each file is written atomically and recorded in the manifest once written; the first failure is raised
    by the next `write`, `digest` or `stop`."""

    def __init__(self, manifest: ImageManifest, queued: int = 32) -> None:
        self.manifest = manifest
        self.queue: queue.Queue[tuple[str, str | None, B64, str, bytes] | None] = queue.Queue(maxsize=queued)
        self.digests: dict[str, str] = {}  # the digests it computed, by manifest name
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def write(self, key: str, digest: str | None, b64: B64, path: str, data: bytes) -> None:
        """Queue data (decoded from b64, whose digest is computed here when None) to be written at path."""
        self._raise()
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="image-writer", daemon=True)
            self.thread.start()
        self.queue.put((key, digest, b64, path, data))

    def digest(self, key: str) -> str:
        """The digest of a file queued without one (waits for the writes queued so far)."""
        self.queue.join()
        self._raise()
        return self.digests[key]

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        while (item := self.queue.get()) is not None:
            try:
                if self.error is None:  # after a failure, drain: the pass stops at its next call
                    key, digest, b64, path, data = item
                    if digest is None:
                        digest = self.digests[key] = content_digest(b64)
                    self.manifest.record(key, digest, path, write_bytes_atomic(path, data))
            except BaseException as exc:  # noqa: BLE001 (raised again on the decoding thread)
                self.error = exc
            finally:
                self.queue.task_done()

    def stop(self) -> BaseException | None:
        """Wait until every queued file is written (and recorded); the first failure, if any."""
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join()
            self.thread = None
        return self.error


def _needs_full_decode(b64: B64) -> bool:
    """Whitespace or a data: prefix: the first bytes (which give the suffix) cannot be read off the first 16
    characters, so the whole field is decoded first."""
    if isinstance(b64, str):
        b64 = b64.encode("ascii", "replace")
    return b64.startswith(b"data:") or b"\n" in b64 or b" " in b64 or b"\r" in b64


def _has_known_signature(data: bytes) -> bool:
    return data.startswith(_KNOWN_SIGNATURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def decode_images(
    tsv: Path,
    folder: Path,
    *,
    index_keys: list[str] | None = None,
    progress: bool = False,
    tsv_md5: str | None = None,
) -> list[list[str]]:
    """One streaming pass over tsv: decode every image once into folder, reuse what was decoded from the same
    content before (see the module docstring).

    Returns, for every row in file order, the absolute paths of its images ([] for a row without one).
    index_keys, when given, are the `index_key`s of the rows as the table has them; a mismatch is an error rather
    than images silently attached to the wrong rows. tsv_md5, when given, must be the MD5 of the file as it is
    now, known for certain: a complete pass is then recorded under it, and a later call with the same MD5 whose
    files are all as that pass left them returns its rows without reading the TSV (`ImageManifest.replay`). With
    it, the pass is made holding the folder's `.decode.lock` (bounded wait), after replaying once more inside the
    lock: of several processes loading the same dataset at once, one decodes and the others reuse its files.
    """
    if tsv_md5 is None:
        return _decode_file(tsv, folder, index_keys, progress, None)
    replayed = _replayed(tsv, folder, index_keys, tsv_md5)
    if replayed is not None:
        return replayed
    # Set-up once: one process decodes while the others (torchrun ranks, shards started together) wait on the
    # folder's lock, then replay the pass it recorded instead of decoding (datasets_tsv.io.setup_lock).
    with SetupLock(folder / DECODE_LOCK, f"decoding the images of {tsv}"):
        replayed = _replayed(tsv, folder, index_keys, tsv_md5)
        if replayed is not None:
            return replayed
        return _decode_file(tsv, folder, index_keys, progress, tsv_md5)


DECODE_LOCK = ".decode.lock"  # in the image folder: held by the process decoding into it


def _replayed(tsv: Path, folder: Path, index_keys: list[str] | None, tsv_md5: str) -> list[list[str]] | None:
    """The rows of a recorded complete pass over the same file whose files are all as it left them (or None)."""
    replayed = ImageManifest(folder).replay(tsv_md5, tsv)
    if replayed is not None and (index_keys is None or len(replayed) == len(index_keys)):
        return replayed
    return None


def _decode_file(tsv: Path, folder: Path, index_keys: list[str] | None, progress: bool,
                 tsv_md5: str | None) -> list[list[str]]:
    with open(tsv, "rb", buffering=0) as handle:
        header, records = iter_cells(tsv, _CELLS, iter(lambda: handle.read(READ_BLOCK), b""))
        return _decode_records(tsv, folder, header, records, index_keys, progress, tsv_md5)


_CELLS = ("index", "image", "image_path")  # the cells the image pass reads of each row (`iter_cells`), in order


def _decode_records(
    tsv: Path,
    folder: Path,
    header: list[str],
    records: Iterator[list[bytes]],
    index_keys: list[str] | None,
    progress: bool,
    tsv_md5: str | None,
) -> list[list[str]]:
    if "image" not in header and "image_path" not in header:
        raise DatasetError(f"{tsv}: missing column `image` (or `image_path`), so the rows have no images")
    if "index" not in header:
        raise DatasetError(f"{tsv}: missing column `index`")
    columns = {name: i for i, name in enumerate(_CELLS) if name in header}
    folder.mkdir(parents=True, exist_ok=True)
    decoder = _Decoder(tsv, folder)
    try:
        try:
            files, references, position, raw_indices = _stream(decoder, records, columns, index_keys, progress)
        finally:  # every queued file written (and recorded) before anything is returned, raised or saved
            failed = decoder.writer.stop()
        if failed is not None:
            raise failed
        if index_keys is not None and len(files) != len(index_keys):
            raise DatasetError(f"{tsv}: {len(files)} rows now, {len(index_keys)} when the table was read")
        resolved = {pos: _resolve_reference(decoder, files, references, position, pos, raw_indices[pos])
                    for pos in references}
        for pos, paths in resolved.items():
            files[pos] = paths
        out = [f if f is not None else [] for f in files]
        if tsv_md5 is not None:
            decoder.manifest.record_pass(tsv_md5, tsv, out, decoder.digests())
    finally:  # what was written is recorded even when a later row fails
        decoder.manifest.save()
    return out


def _stream(
    decoder: _Decoder,
    records: Iterator[list[bytes]],
    columns: dict[str, int],
    index_keys: list[str] | None,
    progress: bool,
) -> tuple[list[list[str] | None], dict[int, str], dict[str, int], list[str]]:
    """The pass itself: decode or note a reference for each row."""
    tsv, folder = decoder.tsv, decoder.folder
    col_index, col_image, col_path = columns["index"], columns.get("image"), columns.get("image_path")

    files: list[list[str] | None] = []
    references: dict[int, str] = {}  # row -> the index key whose images it shares
    position: dict[str, int] = {}
    raw_indices: list[str] = []
    total = len(index_keys) if index_keys is not None else None
    with tqdm(total=total, desc=f"images {folder.name}", unit="row", disable=not progress, leave=False) as bar:
        for pos, record in enumerate(records):
            index = field_text(cell(record, col_index), tsv, pos, "index").strip()
            key = index_key(index)
            if index_keys is not None and (pos >= len(index_keys) or index_keys[pos] != key):
                raise DatasetError(f"{tsv}: row {pos} (index {index}): the rows changed since the table was read")
            position.setdefault(key, pos)
            raw_indices.append(index)
            image = cell(record, col_image).strip()
            image_path = field_text(cell(record, col_path), tsv, pos, "image_path").strip()
            if image and len(image) <= REFERENCE_MAX_CHARS and not image.startswith(b"["):
                references[pos] = index_key(field_text(image, tsv, pos, "image"))
                files.append(None)
            elif image:
                files.append(_decode_row(decoder, image, image_path, pos, index))
            elif image_path:
                files.append(_existing_files(decoder, image_path, pos, index, tsv.parent))
            else:
                files.append([])
            bar.update(1)
    return files, references, position, raw_indices



def _names(image_path: str, count: int, pos: int, index: str, decoder: _Decoder) -> list[str | None]:
    """The file names image_path gives for count images (None each when it gives none)."""
    if not image_path:
        return [None] * count
    listed = parse_list(image_path)
    names = listed if listed is not None else [image_path]
    if len(names) != count:
        raise DatasetError(
            f"{decoder.where(pos, index, 'image_path')}: {len(names)} name(s) for {count} image(s)"
        )
    return [n.strip() or None for n in names]


def _decode_row(decoder: _Decoder, image: bytes, image_path: str, pos: int, index: str) -> list[str]:
    if image.startswith(b"["):
        images = parse_list(field_text(image, decoder.tsv, pos, "image"))
        if images is None:
            raise DatasetError(f"{decoder.where(pos, index, 'image')}: starts with '[' but is not a list of strings")
        names = _names(image_path, len(images), pos, index, decoder)
        stem = decoder.index_stem(index, pos) if None in names else ""  # the index names only unnamed images
        return [
            decoder.materialise(b64, name, f"{stem}_{k}", pos, index, f"image[{k}]")
            for k, (b64, name) in enumerate(zip(images, names))
        ]
    [name] = _names(image_path, 1, pos, index, decoder)
    stem = decoder.index_stem(index, pos) if name is None else ""
    return [decoder.materialise(image, name, stem, pos, index, "image")]


def _existing_files(decoder: _Decoder, image_path: str, pos: int, index: str, tsv_dir: Path) -> list[str]:
    """Rows without base64: image_path names files that must already exist (nothing is written)."""
    listed = parse_list(image_path)
    out = []
    for name in listed if listed is not None else [image_path]:
        candidates = [Path(name)] if os.path.isabs(name) else []
        for base in (decoder.folder, tsv_dir):
            if not os.path.isabs(name):
                try:
                    candidates.append(contained_path(base, name))
                except UnsafePathError:
                    pass
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise DatasetError(
                f"{decoder.where(pos, index, 'image_path')}: no image data and no file {name!r} "
                f"(looked in {decoder.folder} and {tsv_dir})"
            )
        out.append(str(found))
    return out


def _resolve_reference(
    decoder: _Decoder,
    files: list[list[str] | None],
    references: dict[int, str],
    position: dict[str, int],
    pos: int,
    index: str,
) -> list[str]:
    """The images of the row that pos references, following chains of references (with a cycle guard)."""
    seen = {pos}
    target = position.get(references[pos])
    while target is not None and target in references and target not in seen:
        seen.add(target)
        target = position.get(references[target])
    if target is None or target in references:
        raise DatasetError(
            f"{decoder.where(pos, index, 'image')}: {references[pos]!r} is too short to be an image and is not "
            "the index of a row that has one"
        )
    return files[target]  # type: ignore[return-value]
