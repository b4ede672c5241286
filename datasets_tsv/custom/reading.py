"""Reading custom data files: CSV and JSONL records with the line numbers a user counts.

- CSV: UTF-8 with or without a BOM, comma-separated, first record = header (line 1), quoting as Python's csv
  module (quoted commas and quoted newlines). Every value is a string; an empty cell is missing (None). Blank lines
  are skipped. A record with more or fewer fields than the header is an error. Header names are stripped of
  surrounding spaces; an empty or repeated header name is an error.
- JSONL: one JSON object per line (UTF-8, BOM allowed); blank lines skipped; JSON types kept (`null` = missing).

Every problem is a CustomDataError whose text names the file, the 1-based line and, where one is at fault, the
field. A record's `line` is the line its first character is on (a quoted CSV value may span several lines).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasets_tsv.io.tsv_read import DatasetError, csv_reader

SUFFIXES = (".jsonl", ".csv")


class CustomDataError(DatasetError):
    """Bad custom-dataset input (a vlmkit.core.errors.DataError): the text names the file, the line and the field."""


@dataclass
class Record:
    """One row of a custom file: its fields and the 1-based line it starts on."""

    fields: dict[str, Any]
    line: int


def where(path: Path | str, line: int | None = None, field: str | None = None) -> str:
    """`file: line N, field F` - the prefix of every error message about a place in a file."""
    text = str(path)
    if line is not None:
        text += f": line {line}"
    if field is not None:
        text += f", field {field}"
    return text


def read_records(path: str | Path) -> list[Record]:
    """The records of a .csv or .jsonl file (see the module docstring); an empty file or one without rows is an
    error."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise CustomDataError(f"{path}: unsupported file type {suffix or '(none)'!r}; expected .csv or .jsonl")
    if not path.is_file():
        raise CustomDataError(f"{path}: no such file")
    text = _decode(path)
    if not text.strip():
        raise CustomDataError(f"{path}: empty file")
    records = _read_csv(path, text) if suffix == ".csv" else _read_jsonl(path, text)
    if not records:
        raise CustomDataError(f"{path}: no data rows (only a header)" if suffix == ".csv" else f"{path}: no rows")
    return records


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CustomDataError(f"{where(path, line)}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _read_csv(path: Path, text: str) -> list[Record]:
    reader = csv_reader(io.StringIO(text, newline=""), delimiter=",")
    header: list[str] | None = None
    records: list[Record] = []
    last = 0  # reader.line_num after the previous record: the next record starts on the line after it
    try:
        for row in reader:
            start, last = last + 1, reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            if header is None:
                header = _header(path, start, row)
                continue
            if len(row) != len(header):
                raise CustomDataError(
                    f"{where(path, start)}: {len(row)} field(s), but the header (line 1) has {len(header)}; "
                    "quote values that contain commas"
                )
            records.append(Record({name: (value if value != "" else None) for name, value in zip(header, row)}, start))
    except csv.Error as exc:
        raise CustomDataError(f"{where(path, reader.line_num)}: malformed CSV ({exc})") from None
    return records


def _header(path: Path, line: int, row: list[str]) -> list[str]:
    names = [name.strip() for name in row]
    seen: set[str] = set()
    for pos, name in enumerate(names, start=1):
        if not name:
            raise CustomDataError(f"{where(path, line)}: header column {pos} has no name")
        if name in seen:
            raise CustomDataError(f"{where(path, line, name)}: the header names this column twice")
        seen.add(name)
    return names


def _read_jsonl(path: Path, text: str) -> list[Record]:
    records: list[Record] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CustomDataError(f"{where(path, number)}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise CustomDataError(f"{where(path, number)}: not valid JSON (nested too deeply)") from None
        if not isinstance(value, dict):
            raise CustomDataError(f"{where(path, number)}: expected a JSON object, got {type(value).__name__}")
        records.append(Record({str(k).strip(): v for k, v in value.items()}, number))
    return records
