"""Reading the question table of a benchmark snapshot (`video_snapshot.SnapshotVideoDataset._read_table`).

A snapshot holds its questions as parquet files (the Hugging Face repository's own) and, once VLMEvalKit has run on
it, as the TSV VLMEvalKit writes beside them. These helpers read either one with the same one-line errors naming the
file, row and field, so every benchmark module says only which columns it needs and how a row becomes its own:
- `snapshot_tsv`: the TSV, every cell text, a missing file named with what the snapshot should hold;
- `parquet_or_tsv`: the parquets when pandas has a parquet engine, else the TSV;
- `require_columns`, `whole_index`: the checks every reader makes of the table and of a row's `index`;
  `indexed_rows`: the rows with their whole-number index;
- `read_snapshot_tsv`: the three above for a TSV whose `index` is required and whose named columns are never blank;
- `snapshot_item`: the same checks for one question of a snapshot's JSON files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from datasets_tsv.io.tsv_read import DatasetError, read_header, read_table

__all__ = ["indexed_rows", "parquet_or_tsv", "read_snapshot_tsv", "read_text_table", "require_columns", "snapshot_item",
           "snapshot_tsv", "whole_index"]


def read_text_table(path: Path) -> pd.DataFrame:
    """A TSV with every cell as text and blank cells as "" (nothing is read as a number)."""
    return read_table(path, skip="", text_columns=frozenset(read_header(path))).fillna("")


def snapshot_tsv(path: Path, not_found: str) -> pd.DataFrame:
    """`read_text_table(path)`; `{path}: not found; {not_found}` when there is no such file."""
    if not path.is_file():
        raise DatasetError(f"{path}: not found; {not_found}")
    return read_text_table(path)


def parquet_or_tsv(parquets: Sequence[Path], tsv: Path, not_found: str) -> tuple[pd.DataFrame, Path]:
    """The table and the file it came from: the parquets that are there, concatenated in order, when there are some
    and pandas can read them, else VLMEvalKit's TSV (`read_text_table`). Neither readable: one line saying why
    (`not_found` where neither file is there)."""
    parquets = [p for p in parquets if p.is_file()]
    engine_error = None
    if parquets:
        try:
            raw = (pd.read_parquet(parquets[0]) if len(parquets) == 1 else
                   pd.concat([pd.read_parquet(p) for p in parquets], ignore_index=True))
        except ImportError as exc:
            engine_error = str(exc).splitlines()[0]
        else:
            return raw, parquets[0]
    if tsv.is_file():
        return read_text_table(tsv), tsv
    if engine_error is not None:
        raise DatasetError(f"{parquets[0]}: pandas cannot read parquet here ({engine_error}); install pyarrow, or "
                           f"place VLMEvalKit's {tsv.name} in {tsv.parent}")
    raise DatasetError(not_found)


def require_columns(raw: pd.DataFrame, columns: Iterable[str], path: Path, has: str) -> None:
    """`{path}: missing column `<first missing>` ({has})` unless the table has every one of `columns`."""
    missing = [c for c in columns if c not in raw.columns]
    if missing:
        raise DatasetError(f"{path}: missing column `{missing[0]}` ({has})")


def indexed_rows(raw: pd.DataFrame, path: Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Each row of a table read from `path`: its position, its `index` as a whole number (`whole_index`; a table
    without an `index` column is numbered 0..n-1) and the row."""
    if "index" not in raw.columns:
        raw = raw.assign(index=range(len(raw)))
    for pos, row in enumerate(raw.to_dict("records")):
        yield pos, whole_index(row["index"], f"{path}: row {pos}"), row


def whole_index(value: Any, where: str) -> int:
    """A row's `index` as a whole number; `{where}, field index: <value> is not a whole number` otherwise."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise DatasetError(f"{where}, field index: {value!r} is not a whole number") from None


def snapshot_item(item: Any, fields: Iterable[str], where: str) -> dict[str, Any]:
    """One question of a snapshot's JSON: `item` itself, an object holding each of `fields` (neither None nor "");
    else one line naming `where` and the first field missing."""
    if not isinstance(item, dict):
        raise DatasetError(f"{where}: not an object")
    missing = [f for f in fields if item.get(f) is None or item.get(f) == ""]
    if missing:
        raise DatasetError(f"{where}, field {missing[0]}: missing")
    return item


def read_snapshot_tsv(path: Path, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """The TSV VLMEvalKit keeps in a video snapshot, as text, with a whole-number `index` and no blank cell in
    `columns`; one line naming the file, row and field otherwise (`what`: what the snapshot should hold)."""
    raw = snapshot_tsv(path, what)
    require_columns(raw, ("index", *columns), path, f"needs index, {', '.join(columns)}")
    indices = [whole_index(value, f"{path}: row {pos}") for pos, value in enumerate(raw["index"])]
    for column in columns:
        blank = [pos for pos, v in enumerate(raw[column]) if str(v).strip() == ""]
        if blank:
            raise DatasetError(f"{path}: row {blank[0]}, field {column}: empty")
    return raw.assign(index=indices)
