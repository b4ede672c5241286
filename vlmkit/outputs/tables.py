"""VLMEvalKit's tables beside the run folders: the predictions xlsx (`<model>_<dataset>.xlsx`) and the summary csv
(`<model>_<dataset>_acc.csv` / `_score.csv`); names in vlmkit.outputs.layout."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.core.files import write_text_atomic
from vlmkit.core.spreadsheet import csv_line_end, spreadsheet_text
from vlmkit.outputs.xlsx import write_xlsx

EXCEL_CELL_LIMIT = 32_767
CHUNK = 4096  # rows taken from the table at a time while the xlsx is written


def _excel_cells(values: list[Any]) -> tuple[list[Any], int]:
    """A column's cells as the xlsx takes them: lists and dicts as JSON text, strings cut to Excel's limit; and how
    many were cut. (vlmkit.outputs.xlsx removes what XML forbids.)"""
    if not any(isinstance(v, (list, dict)) or (type(v) is str and len(v) > EXCEL_CELL_LIMIT) for v in values):
        return values, 0  # the usual column: nothing to change
    out, cut = [], 0
    for value in values:
        if isinstance(value, (list, dict)):  # conversations, media path lists, parameters: readable JSON, not repr
            value = json.dumps(value, ensure_ascii=False, default=str)
        if isinstance(value, str) and len(value) > EXCEL_CELL_LIMIT:
            value, cut = value[: EXCEL_CELL_LIMIT - 20] + " …[truncated]", cut + 1
        out.append(value)
    return out, cut


def write_prediction_table(path: Path, table: pd.DataFrame) -> int:
    """The VLMEvalKit predictions file (every TSV column but `image`, plus `prediction`), written by vlmkit.outputs.xlsx
    (pandas' openpyxl writer took 20x longer). Returns how many cells were cut to Excel's 32,767-character limit
    (predictions.jsonl keeps them whole). The rows are taken CHUNK at a time and the sheet is compressed as it is
    written: a million rows never stand in memory as Python lists or as XML."""
    cut = [0]
    text_like = [column.dtype == object or pd.api.types.is_string_dtype(column)
                 for column in (table.iloc[:, pos] for pos in range(table.shape[1]))]

    def rows() -> Iterator[tuple[Any, ...]]:
        if not text_like:  # no column: no row either (as zip of no columns gives)
            return
        for start in range(0, len(table), CHUNK):
            block = table.iloc[start : start + CHUNK]
            columns = []
            for pos, text in enumerate(text_like):
                values = block.iloc[:, pos].tolist()
                if text:
                    values, n = _excel_cells(values)
                    cut[0] += n
                columns.append(values)
            yield from zip(*columns)

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.xlsx")
    write_xlsx(tmp, [str(c) for c in table.columns], rows(), n_rows=len(table) if len(table.columns) else 0)
    tmp.replace(path)
    return cut[0]


def _text_columns(table: pd.DataFrame) -> list[int]:
    """The positions of the columns that may hold text (not numbers, bools or dates)."""
    kinds = pd.api.types
    columns = [table.iloc[:, pos] for pos in range(table.shape[1])]
    return [
        pos for pos, column in enumerate(columns)
        if not kinds.is_numeric_dtype(column) and not kinds.is_datetime64_any_dtype(column)
    ]


def spreadsheet_safe(table: pd.DataFrame) -> pd.DataFrame:
    """The table with every formula-like text cell and column name quoted (vlmkit.outputs.schema.spreadsheet_text):
    a category or split named `=HYPERLINK(...)` is text in a spreadsheet. Numbers and ordinary text are untouched;
    a table with nothing to quote is returned as it is, so its csv is byte for byte what it was."""
    names = [spreadsheet_text(name) for name in table.columns]
    changed: dict[int, pd.Series] = {}
    for pos in _text_columns(table):
        values = table.iloc[:, pos].tolist()
        safe = [spreadsheet_text(v) for v in values]
        if any(a is not b for a, b in zip(safe, values)):
            changed[pos] = pd.Series(safe, index=table.index, dtype=object)
    if not changed and all(a is b for a, b in zip(names, table.columns)):
        return table
    out = table.copy()
    for pos, column in changed.items():
        out.isetitem(pos, column)
    out.columns = names
    return out


def summary_csv(table: pd.DataFrame) -> str:
    """The summary table as csv text: formula-like text quoted (spreadsheet_safe), and rows ended with CRLF only
    when a text holds a CR (vlmkit.outputs.schema.csv_line_end), so that an ordinary table's csv is what pandas
    writes."""
    safe = spreadsheet_safe(table)
    texts = [*safe.columns, *(v for pos in _text_columns(safe) for v in safe.iloc[:, pos].tolist())]
    return safe.to_csv(index=False, lineterminator=csv_line_end(texts, os.linesep))


def write_summary_table(path: Path, table: pd.DataFrame) -> None:
    """VLMEvalKit's summary csv (users open it in a spreadsheet, their scripts read it), by summary_csv."""
    write_text_atomic(path, summary_csv(table))
