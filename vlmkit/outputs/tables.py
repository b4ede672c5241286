"""VLMEvalKit's tables beside the run folders: the predictions xlsx (`<model>_<dataset>.xlsx`) and the summary csv
(`<model>_<dataset>_acc.csv` / `_score.csv`); names in vlmkit.outputs.layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.core.files import write_text_atomic
from vlmkit.outputs.xlsx import write_xlsx

EXCEL_CELL_LIMIT = 32_767


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
    (predictions.jsonl keeps them whole)."""
    truncated = 0
    columns = []
    for column in table.columns:
        values = table[column].tolist()
        if table[column].dtype == object or pd.api.types.is_string_dtype(table[column]):
            values, cut = _excel_cells(values)
            truncated += cut
        columns.append(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.xlsx")
    write_xlsx(tmp, [str(c) for c in table.columns], list(zip(*columns)) if columns else [])
    tmp.replace(path)
    return truncated


def write_summary_table(path: Path, table: pd.DataFrame) -> None:
    write_text_atomic(path, table.to_csv(index=False))
