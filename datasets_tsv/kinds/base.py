"""TSVDataset: one benchmark is one TSV file under `$LMUData`.

The table (`data`) holds every column but `image`; images are decoded once, in one streaming pass, into
`$LMUData/images/<image_folder>/` (see `datasets_tsv.io.images`; the reading: `datasets_tsv.io.tsv_read`). A TSV with
neither an `image` nor an `image_path` column is text (the degenerate case: each prompt is its text alone, scored
as its kind says), known from the header when the dataset is built; no image pass is made for it. A problem of the
whole dataset is found once: the header's columns when the dataset is built, the columns scoring needs by
`scoring_problem()` (which a run asks before inference), and a failed image pass is kept and said again for every
later row without reading the file again (never one pass per row). A subclass
says what kind it is (`kind`), which columns its prompts and its scorer need, how a row becomes a prompt
(`prompt_text`) and how predictions are scored (`_score`). Nothing here looks at the dataset's name to decide
behaviour.

Reading the table differs from VLMEvalKit on purpose in one way: only an empty cell is missing. VLMEvalKit's
pandas defaults also turn the texts `None`, `NA`, `null`, `nan` ... into NaN, which drops such an option from
the prompt; and the option/question/hint/answer columns are read as text, so an option `3` is shown as `3`, not
as `3.0` when its column also has blanks.
"""

from __future__ import annotations

import hashlib
import threading
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key, is_blank
from vlmkit.core.config import lmu_data_root
from vlmkit.core.errors import DataError
from vlmkit.core.files import (
    UnsafePathError,
    contained_path,
    download_verified,
    write_bytes_atomic,
)
from vlmkit.judging import Judge
from vlmkit.core.message import Part
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.images import decode_images
from datasets_tsv.io.table import TableRows
from datasets_tsv.io.tsv_read import DatasetError, parse_table, read_header, table_text
from datasets_tsv.io.tsv_stamp import Identity, StampStore, identity, scan, take_fresh_scan

__all__ = ["DatasetError", "TSVDataset"]

OPTION_LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
TEXT_COLUMNS = frozenset({"question", "hint", "answer", *OPTION_LETTERS})
TABLE_SKIP = "image"  # the column the table leaves out
IMAGE_COLUMNS = ("image", "image_path")  # a TSV with neither is text
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3
READING_NOTE = "cells reading None/NA/nan are text, not missing (VLMEvalKit drops such options)"


class TSVDataset(TableRows):
    """A benchmark TSV: the table, its images, prompts and scoring (see the module docstring)."""

    kind: ClassVar[str] = "tsv"
    prompt_columns: ClassVar[tuple[str, ...]] = ("question",)  # needed to build prompts (checked on load)
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)  # needed to evaluate (checked by evaluate)
    notes: ClassVar[tuple[str, ...]] = (READING_NOTE,)  # deliberate differences from VLMEvalKit, for results.json

    def __init__(
        self,
        name: str,
        *,
        root: Path | None = None,
        url: str | None = None,
        md5: str | None = None,
        tsv_path: Path | None = None,
        image_folder: str | None = None,
        progress: bool = True,
        bundled: str | None = None,
        keep_local_tsv: bool = False,
        **kind_kwargs: Any,
    ) -> None:
        if kind_kwargs:
            raise TypeError(f"{type(self).__name__} ({name}): unknown option(s) {', '.join(sorted(kind_kwargs))}")
        self.name = name
        self.root = Path(root).expanduser() if root is not None else lmu_data_root()
        self.url = url or None
        self.md5 = md5 or None
        self.bundled = bundled or None
        self.progress = progress
        self.keep_local_tsv = bool(keep_local_tsv)
        self.md5_mismatch_accepted = False
        self.md5_source = "computed"  # or "stamp" (see _load)
        self._verified_identity: Identity | None = None  # the file as hashed, when settled (see tsv_stamp)
        self.tsv_path = Path(tsv_path).expanduser() if tsv_path is not None else self.root / f"{name}.tsv"
        self.image_folder = image_folder or name
        try:
            self.image_root = contained_path(self.root / "images", self.image_folder)
        except UnsafePathError as exc:
            raise DatasetError(f"{name}: image_folder {exc}") from None
        self.has_images = True  # set from the header by _read_table
        self.file_md5, self.data = self._load()
        self._int_index: pd.Index | None = None  # the rows' positions by index when every index is an integer
        self._position: dict[str, int] | None = None  # by index_key otherwise (see _index_rows)
        self._index_rows()
        self._records: Any = _ColumnRows.of(self.data)  # TableRows.line's rows, read from the columns when asked
        self._image_files: list[list[str]] | None = None  # a text TSV has none: _images_at says [] without a list
        self._image_error: str | None = None  # why the image pass failed, said again without another pass
        self._lock = threading.Lock()

    # -- the file ------------------------------------------------------------------------------------------------
    def _load(self) -> tuple[str, pd.DataFrame]:
        """Make the TSV present and verified, read the table; return (md5, table).

        An unchanged file (same size, mtime, ctime and inode as when it was last hashed) takes its MD5 and its
        table from its stamp (`datasets_tsv.io.tsv_stamp`): `md5_source` is then "stamp", else "computed". A file
        without a valid stamp is read once: the same bytes are hashed on another core while the table is streamed
        from them (`tsv_stamp.scan`; or that read was just made for the kind detection of a local TSV, and is
        taken over). A present file whose MD5 differs from the catalog's is never replaced (it may be the user's
        own): it is an error naming both MD5s, unless `keep_local_tsv` accepts it as it is (info() then records
        both MD5s and `md5_mismatch_accepted`).
        """
        path = self.tsv_path
        if self.bundled:
            self._copy_bundled(path)
        if not path.is_file():
            if not self.url:
                raise DatasetError(f"{path}: not found, and {self.name!r} has no download URL; place the TSV there")
            download_verified(self.url, path, self.md5, progress=self.progress)  # then read once as any other
        stamps = StampStore(self.root)
        before = identity(path)
        fresh = take_fresh_scan(path, before, TABLE_SKIP)
        if fresh is None:
            stamp = stamps.lookup(path, before, TABLE_SKIP)
            if stamp is not None:
                self.md5_source = "stamp"
                self._verify_md5(stamp.md5)
                self._verified_identity = before
                return stamp.md5, self._read_table(stamp.table)
            fresh = scan(path, TABLE_SKIP)
        self._verify_md5(fresh.md5)  # a file that is not the catalog's says so before any bad row
        if fresh.error is not None:
            self._check_header()
            raise fresh.error
        data = self._read_table(fresh.table)
        if identity(path) == fresh.identity and stamps.record(
            path, fresh.md5, fresh.identity, fresh.began_ns, fresh.table, TABLE_SKIP
        ):
            self._verified_identity = fresh.identity
        return fresh.md5, data

    def _verify_md5(self, actual: str) -> None:
        if self.md5 is not None and actual != self.md5:
            if not self.keep_local_tsv:
                fetch = "to download the catalog's copy" if self.url else "and put the catalog's copy there"
                raise DatasetError(
                    f"{self.tsv_path}: MD5 {actual} differs from the catalog's {self.md5} for {self.name}; the file "
                    f"is left as it is. Move it away {fetch}, or pass --keep-local-tsv (keep_local_tsv=True) to "
                    "evaluate this file as it is"
                )
            self.md5_mismatch_accepted = True

    def _copy_bundled(self, path: Path) -> None:
        """Copy a file shipped in the package into place (again when the copy there differs from it, unless
        keep_local_tsv: then the copy there is used and its MD5 is compared with the package's, as a catalog's)."""
        source = resources.files("datasets_tsv").joinpath(self.bundled)
        if not source.is_file():
            raise DatasetError(
                f"{self.name}: the bundled file datasets_tsv/{self.bundled} is missing from the installed package"
            )
        data = source.read_bytes()
        if path.is_file() and self.keep_local_tsv:
            self.md5 = self.md5 or hashlib.md5(data).hexdigest()
        elif not path.is_file() or path.read_bytes() != data:
            write_bytes_atomic(path, data)

    def _check_header(self) -> list[str]:
        """The header, checked for the columns every row needs (one line naming the first missing one)."""
        path = self.tsv_path
        header = read_header(path)
        if not header:
            raise DatasetError(f"{path}: empty file (no header, no rows)")
        for column in ("index", *self.prompt_columns):
            if column not in header:
                needed = "" if column == "index" else f", needed by {self.kind} prompts"
                raise DatasetError(f"{path}: missing column `{column}`{needed}")
        return header

    def _read_table(self, text: str | None = None) -> pd.DataFrame:
        """The table without images: parsed from text (this very file's, from a scan or its stamp) or streamed from
        the file."""
        path = self.tsv_path
        header = self._check_header()
        self.has_images = any(column in header for column in IMAGE_COLUMNS)
        data = parse_table(text if text is not None else table_text(path, skip=TABLE_SKIP), path,
                           text_columns=TEXT_COLUMNS)
        if data.empty:
            raise DatasetError(f"{path}: no rows (only a header); nothing to evaluate")
        missing = np.flatnonzero(data["index"].isna().to_numpy())
        if len(missing):
            raise DatasetError(f"{path}: row {missing[0]}, field index: empty")
        return data

    def _index_rows(self) -> None:
        """Make rows findable by index, refusing a repeated one (the first repeat named with the row it repeats).

        An integer `index` column (the usual one) is found through a pandas Index over the table's own int64 values
        (its hash table: about 16-32 bytes a row); any other, through a dict from `index_key` to position (a key
        string and a dict entry a row, about 150 bytes). A text TSV keeps no image list a row either."""
        column = self.data["index"]
        if column.dtype == np.int64 and len(column):
            values = column.to_numpy()
            if -(2**53) < values.min() and values.max() < 2**53:  # index_key(v) is then str(v)
                index = pd.Index(values, copy=False)
                if not index.is_unique:
                    pos = int(np.flatnonzero(index.duplicated())[0])
                    first = int(np.flatnonzero(values == values[pos])[0])
                    raise DatasetError(f"{self.tsv_path}: row {pos}, field index: {values[pos]} repeats row {first}")
                self._int_index = index
                return
        position: dict[str, int] = {}
        for pos, key in enumerate(self._index_keys()):
            if key in position:
                raise DatasetError(f"{self.tsv_path}: row {pos}, field index: {key} repeats row {position[key]}")
            position[key] = pos
        self._position = position

    def _index_keys(self) -> list[str]:
        """Every row's `index_key`, in order (built when asked: the image pass checks its rows against them)."""
        return [index_key(v) for v in self.data["index"]]

    def _position_of(self, key: str) -> int | None:
        """The position of the row whose `index_key` is `key`; None when there is none."""
        if self._position is not None:
            return self._position.get(key)
        try:
            number = int(key)
        except ValueError:
            return None
        if str(number) != key or self._int_index is None:
            return None
        try:
            return int(self._int_index.get_loc(number))
        except KeyError:
            return None

    # -- rows (len, line, repr: datasets_tsv.io.table) ---------------------------------------------------------------
    @property
    def source_file(self) -> Path:
        return self.tsv_path

    def _row(self, line: dict[str, Any] | int) -> tuple[int, dict[str, Any]]:
        if isinstance(line, (int, np.integer)) and not isinstance(line, bool):
            pos = int(line)
            if not -len(self) <= pos < len(self):
                raise IndexError(f"{self.name}: row {pos} out of range ({len(self)} rows)")
            pos %= len(self)
            return pos, self.line(pos)
        if "index" not in line:
            raise DatasetError(f"{self.name}: a line given as a dict needs its `index`")
        pos = self._position_of(index_key(line["index"]))
        if pos is None:
            raise DatasetError(f"{self.tsv_path}: no row with index {line['index']!r}")
        return pos, line

    def _where(self, line: dict[str, Any], field: str) -> str:
        pos = self._position_of(index_key(line.get("index")))
        pos = "?" if pos is None else pos
        return f"{self.tsv_path}: row {pos} (index {line.get('index')}), field {field}"

    def text(self, line: dict[str, Any], field: str) -> str:
        """A required text cell of a row; a clear error naming file, row and field when it is missing or blank."""
        value = line.get(field)
        if is_blank(value):
            raise DatasetError(f"{self._where(line, field)}: empty")
        return str(value)

    # -- images --------------------------------------------------------------------------------------------------
    def prepare_images(self) -> None:
        """Decode every image once into root/images/<image_folder>/ (one streaming pass; existing files reused).

        Nothing for a text TSV. A pass that fails is a problem of the dataset, not of one row: its message is kept
        and raised again by every later call, without reading the file again."""
        with self._lock:
            if self._image_error is not None:
                raise DatasetError(self._image_error)
            if self._image_files is None and self.has_images:
                try:
                    self._image_files = decode_images(
                        self.tsv_path, self.image_root, index_keys=self._index_keys(), progress=self.progress,
                        tsv_md5=self._settled_md5(),
                    )
                except DataError as exc:
                    self._image_error = str(exc)
                    raise

    def _settled_md5(self) -> str | None:
        """The MD5 of the file as it is now, when it is known for certain (the file is settled and unchanged since
        it was hashed); the image decoder then may skip re-reading it (see `datasets_tsv.io.image_manifest`)."""
        if self._verified_identity is None:
            return None
        try:
            return self.file_md5 if identity(self.tsv_path) == self._verified_identity else None
        except OSError:
            return None

    def image_paths(self, line: dict[str, Any] | int) -> list[str]:
        """The decoded image files of a row, in order (decodes all images on first use)."""
        pos, _ = self._row(line)
        return self._images_at(pos)

    def _images_at(self, pos: int) -> list[str]:
        if not self.has_images:
            return []
        if self._image_files is None:
            self.prepare_images()
        return list(self._image_files[pos])  # type: ignore[index]

    # -- prompts -------------------------------------------------------------------------------------------------
    def prompt_text(self, line: dict[str, Any]) -> str:
        """The text of a row's prompt; the plain question unless a kind says otherwise."""
        return self.text(line, "question")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        """The row as a message: its images first, then one text part."""
        pos, row = self._row(line)
        parts: list[Part] = [{"type": "image", "value": p} for p in self._images_at(pos)]
        parts.append({"type": "text", "value": self.prompt_text(row)})
        return parts

    # -- scoring -------------------------------------------------------------------------------------------------
    def scoring_problem(self) -> str | None:
        """A column scoring needs (`answer_columns`) that the file lacks, in one line; None when it has them all. A
        run asks this before inference, so a file it could never score is refused before any request."""
        missing = [column for column in self.answer_columns if column not in self.data.columns]
        if missing:
            return f"{self.tsv_path}: missing column `{missing[0]}`, needed to score {self.name}"
        return None

    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False, judge: Judge | None = None) -> EvalResult:
        """Score predictions (this table plus a `prediction` column, None where inference failed). `judge`: an LLM
        judge (vlmkit.judging) for the answers rules cannot read, and for benchmarks only a judge can score."""
        for column in ("index", "prediction", *self.answer_columns):
            if column not in predictions.columns:
                what = "the predictions" if column == "prediction" else str(self.tsv_path)
                raise DatasetError(f"{what}: missing column `{column}`, needed to evaluate {self.name}")
        # shallow under pandas 3: its copy-on-write (always on) keeps a scorer's changes to its table from reaching
        # the caller's without a second copy of every cell; pandas 2 needs the deep copy for that
        return self._score(predictions.copy(deep=not _COPY_ON_WRITE), fuzzy=fuzzy, judge=judge)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        raise NotImplementedError(f"{type(self).__name__} has no scorer")

    def scorer_params(self) -> dict[str, Any]:
        """The settings that decide how this dataset is scored (for info() and results.json)."""
        return {}

    def info(self) -> dict[str, Any]:
        cls = type(self)
        return {
            "name": self.name,
            "kind": self.kind,
            "class": f"{cls.__module__}:{cls.__qualname__}",
            "source": self.url or (f"datasets_tsv/{self.bundled}" if self.bundled else str(self.tsv_path)),
            "tsv_path": str(self.tsv_path),
            "md5": self.file_md5,
            "md5_source": self.md5_source,
            **({"catalog_md5": self.md5, "md5_mismatch_accepted": True} if self.md5_mismatch_accepted else {}),
            "n_total": len(self),
            "image_folder": self.image_folder,
            "scorer": self.scorer_params(),
            "scorer_reason": self.scorer_reason,
            "notes": list(self.notes),
        }


class _ColumnRows:
    """The table's rows as `TableRows.line` reads them (`_records[i]`), each built from the columns when asked:
    a million rows of dicts kept for the run would be ~450 bytes a row. Each column is a numpy number, bool or
    object column or text whose missing value is NaN, so `item(i)` is the very value `Series.tolist()` (the list
    `TableRows` builds from) gives: the text column's own objects, numbers as Python numbers, NaN for a gap."""

    def __init__(self, names: list[Any], items: list[Any]) -> None:
        self._names = names
        self._items = items

    @classmethod
    def of(cls, data: pd.DataFrame) -> _ColumnRows | None:
        """The rows of `data`; None when a column is of another kind (TableRows then builds its records)."""
        if not data.columns.is_unique or not all(_by_item(dtype) for dtype in data.dtypes):
            return None
        arrays = [data.iloc[:, j].to_numpy() for j in range(data.shape[1])]  # the columns' own arrays, no copy
        return cls(list(data.columns), [array.item for array in arrays])

    def __len__(self) -> int:
        return 0 if not self._items else len(self._items[0].__self__)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {name: item(i) for name, item in zip(self._names, self._items)}


def _by_item(dtype: Any) -> bool:
    """A column whose numpy form's `item(i)` is the value `Series.tolist()` gives."""
    return (isinstance(dtype, np.dtype) and dtype.kind in "iufbO") or _nan_text(dtype)



def _nan_text(dtype: Any) -> bool:
    """pandas' default text dtype, whose missing value is NaN (its numpy form holds the cells' own objects)."""
    return isinstance(dtype, pd.StringDtype) and isinstance(dtype.na_value, float) and np.isnan(dtype.na_value)
