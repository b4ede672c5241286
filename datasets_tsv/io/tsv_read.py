"""Streaming TSV reading: records one at a time from large blocks, the table without its image column, list cells.

A benchmark TSV can hold hundreds of MB of base64 images, so it is never read as a whole: `iter_records` streams
records (fields as bytes) from blocks read once (or from blocks being read elsewhere: `vlmkit.core.files.HashedBlocks`
hashes the same read), `iter_cells` cuts out only the cells a caller needs, and `table_text`/`read_table` give
every other column as pandas reads the file. Quoting is pandas' read_csv(sep="\t"): a line without a `"` is split
on tabs directly, a line with one goes through the csv module (which joins the lines of a quoted field).

Every csv reader of a dataset file (a TSV, a stamp's table text, a custom CSV) is made by `csv_reader` here, which
sets the field limit those files need where the reader is made: a cell may hold a base64 image or a question far
longer than the csv module's default 128 KiB. (The csv module keeps one limit per process; it is only ever raised,
and never at import.) The kit's own small tables (the catalog, the scorer ids) are read with the csv module as is.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.core.errors import DataError

FIELD_LIMIT = 2**31 - 1  # the csv module's largest: a cell may be a whole base64 image
READ_BLOCK = 1 << 22  # bytes per read of a TSV


class DatasetError(DataError):
    """Bad dataset input; the text names the file, the row and the field.

    A vlmkit.core.errors.DataError, so the CLI prints it as one line. Defined here because this is the lowest module
    of the package.
    """


def csv_reader(source: Iterable[str], *, delimiter: str = "\t", quoting: int = csv.QUOTE_MINIMAL) -> Any:
    """A csv reader (`csv.reader`: iterate it for records, `line_num` says where it is) over text lines, with the
    field limit dataset files need (FIELD_LIMIT, raised here if the process has less). The one place a dataset
    file's csv reader is made (see the module docstring)."""
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)
    return csv.reader(source, delimiter=delimiter, quoting=quoting)


def read_header(tsv: Path) -> list[str]:
    """The column names of a TSV (its first record), read without touching the rest of the file."""
    with open(tsv, "rb") as handle:
        lines = iter(handle)
        for raw in lines:
            record = _next_record(lines, raw)
            if record is not None:
                return _header(record, tsv)
    return []


def iter_records(tsv: Path, blocks: Iterable[bytes] | None = None) -> tuple[list[str], Iterator[list[bytes]]]:
    """(header, records) streamed one record at a time, fields as bytes; blank lines are skipped (as pandas does).

    A line without a `"` is split on tabs directly (what the csv module would do, several times faster); a line
    with one goes through the csv module, which also joins the lines of a quoted field that spans several.
    Quoting is then the same as pandas' read_csv(sep="\\t"). blocks: the file's bytes as they are being read
    elsewhere (`vlmkit.core.files.HashedBlocks`, which hashes the same read), instead of reading tsv here; tsv then
    only names the file in errors.
    """
    records = _records(tsv, blocks)
    first = next(records, None)
    return (_header(first, tsv) if first is not None else []), records


def iter_cells(tsv: Path, names: tuple[str, ...], blocks: Iterable[bytes]) -> tuple[list[str], Iterator[list[bytes]]]:
    """(header, records) as `iter_records` gives them, but each record only the cells of the named columns, in
    names' order (b"" for a column the header lacks or a short row lacks, as `cell` reads a record).

    For the image pass, which needs three cells of each row, one of them a large base64 image: a line without a
    `"` is cut at its tabs with `bytes.find` (one copy of each wanted cell) instead of being split into every
    field, several times cheaper on rows of 50 KB; a line with one goes through `iter_records`' csv path, so both
    give the same cells. A column named twice in the header is its last one (as a dict built from the header).
    blocks: the file's bytes (tsv only names it in errors)."""
    lines = _lines(blocks)
    header: list[str] = []
    for raw in lines:
        record = _next_record(lines, raw)
        if record is not None:
            header = _header(record, tsv)
            break
    columns = {name: i for i, name in enumerate(header)}
    return header, _cells_of(lines, [columns.get(name) for name in names])


def _cells_of(lines: Iterator[bytes], cols: list[int | None]) -> Generator[list[bytes], None, None]:
    last = max((c for c in cols if c is not None), default=-1)
    find = bytes.find
    for raw in lines:
        if b'"' in raw:
            record = _next_record(lines, raw)
            if record is not None:
                yield [cell(record, c) for c in cols]
            continue
        end = len(raw)
        while end and raw[end - 1] in (10, 13):  # what rstrip(b"\r\n") leaves
            end -= 1
        if not end or (raw[0] == 32 and not raw[:end].strip(b" ")):
            continue  # a blank line (spaces alone too, as pandas reads it)
        starts = [0]
        at = 0
        while len(starts) <= last and (at := find(raw, b"\t", at, end)) >= 0:
            at += 1
            starts.append(at)
        cells = []
        for c in cols:
            if c is None or c >= len(starts):
                cells.append(b"")
            else:
                stop = find(raw, b"\t", starts[c], end)
                cells.append(raw[starts[c]:stop if stop >= 0 else end])
        yield cells


def _records(tsv: Path, blocks: Iterable[bytes] | None) -> Generator[list[bytes], None, None]:
    if blocks is None:
        with open(tsv, "rb", buffering=0) as handle:
            yield from _records_of(_lines(iter(lambda: handle.read(READ_BLOCK), b"")))
    else:
        yield from _records_of(_lines(blocks))


def _records_of(lines: Iterator[bytes]) -> Generator[list[bytes], None, None]:
    for raw in lines:
        record = _next_record(lines, raw)
        if record is not None:
            yield record


def _lines(blocks: Iterable[bytes]) -> Generator[bytes, None, None]:
    """The lines of a file read in large blocks, each with its `\\n`, as a file object gives them (split in C, one
    copy of each line; a file object's readline copies a long line several times through its small buffer)."""
    pending: list[bytes] = []  # the start of a line that runs on into the next block(s)
    for block in blocks:
        lines = io.BytesIO(block).readlines()
        if pending:
            pending.append(lines[0])
            if not lines[0].endswith(b"\n"):  # the whole block is inside one line
                continue
            lines[0] = b"".join(pending)
            pending = []
        if not lines[-1].endswith(b"\n"):
            pending.append(lines.pop())
        yield from lines
    if pending:
        yield b"".join(pending)


def _header(record: list[bytes], tsv: Path) -> list[str]:
    header = [field_text(f, tsv, "header", "") for f in record]
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    return header


def _next_record(lines: Iterator[bytes], raw: bytes) -> list[bytes] | None:
    if not raw.strip(b" \r\n"):  # a line of spaces alone is blank, as pandas reads it
        return None
    if b'"' not in raw:
        return raw.rstrip(b"\r\n").split(b"\t")

    def source() -> Iterator[str]:
        yield raw.decode("utf-8", "surrogateescape")
        for more in lines:  # pulled only while inside a quoted field
            yield more.decode("utf-8", "surrogateescape")

    record = next(csv_reader(source()), [])
    if not any(record):
        return None
    return [f.encode("utf-8", "surrogateescape") for f in record]


def field_text(field: bytes, tsv: Path, pos: int | str, column: str) -> str:
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{tsv}: row {pos}, field {column}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def read_table(tsv: Path, *, skip: str = "image", text_columns: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Every column but skip, read as pandas reads the TSV, without ever holding the skipped column in memory.

    The records are streamed, the kept fields re-written to an in-memory TSV (`table_text`) and parsed by pandas
    (`parse_table`, so types are inferred exactly as read_csv infers them). Only an empty cell is missing;
    text_columns stay strings.
    """
    return parse_table(table_text(tsv, skip=skip), tsv, text_columns=text_columns)


def table_text(tsv: Path, *, skip: str = "image", blocks: Iterable[bytes] | None = None) -> str:
    """Every column but skip as TSV text (quoted as the csv module quotes), streamed from tsv (or from blocks, its
    bytes as read elsewhere: see `iter_records`); the text `datasets_tsv.io.tsv_stamp` caches."""
    header, records = iter_records(tsv, blocks)
    keep = [i for i, name in enumerate(header) if name != skip]
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow([header[i] for i in keep])
    for pos, record in enumerate(records):
        if len(record) > len(header) and any(record[len(header):]):
            raise DatasetError(f"{tsv}: row {pos} has {len(record)} fields but the header has {len(header)}")
        writer.writerow([field_text(record[i], tsv, pos, header[i]) if i < len(record) else "" for i in keep])
    return buffer.getvalue()


def parse_table(text: str, tsv: Path, *, text_columns: frozenset[str] = frozenset()) -> pd.DataFrame:
    """The table of `table_text`'s text (tsv only names the file in errors)."""
    first = text[: text.find("\n") + 1] or text
    names = next(csv_reader(io.StringIO(text if '"' in first else first)), [])  # the header record only
    dtypes = {c: str for c in names if c in text_columns}
    # As UTF-8 bytes, not a StringIO: a StringIO copies the text at up to 4 bytes a character, and a million rows'
    # text is a sizeable copy at the moment the table itself is built (surrogateescape: the text's undecodable
    # bytes come back as they were read).
    data = io.BytesIO(text.encode("utf-8", "surrogateescape"))
    try:
        table = pd.read_csv(data, sep="\t", dtype=dtypes, keep_default_na=False, na_values=[""], encoding="utf-8",
                            encoding_errors="surrogateescape")
    except (ValueError, pd.errors.ParserError) as exc:
        raise DatasetError(f"{tsv}: cannot read as a TSV ({exc})") from None
    return _shared_texts(table)


def _shared_texts(table: pd.DataFrame) -> pd.DataFrame:
    """The table with each text column's repeated values held once (the parser makes an object per cell: a column
    of four option texts over a million rows would hold a million strings). Values, dtypes and order unchanged."""
    for pos in range(table.shape[1]):
        column = table.iloc[:, pos]
        if not (column.dtype == object or pd.api.types.is_string_dtype(column)) or len(column) < 1000:
            continue
        values = column.tolist()
        seen: dict[Any, Any] = {}
        shared = [seen.setdefault(v, v) if type(v) is str else v for v in values]
        if len(seen) > len(values) // 2:  # mostly distinct (questions): nothing worth sharing
            continue
        table.isetitem(pos, pd.Series(shared, index=column.index, dtype=column.dtype, name=column.name))
    return table


def parse_list(text: str) -> list[str] | None:
    """A list value (`[...]` as JSON or a Python literal) as a list of strings; None when text is not a list."""
    text = text.strip()
    if not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return value


def cell(record: list[bytes], col: int | None) -> bytes:
    """Field col of a record; b"" for a column the header lacks (None) or a short row lacks."""
    return record[col] if col is not None and col < len(record) else b""
