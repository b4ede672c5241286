"""Result files of a run: the VLMEvalKit-style tables and results.json.

Layout (see docs/outputs.md): `<work_dir>/<model>/<model>_<dataset>.xlsx` and `..._<acc|score>.csv` exactly where
VLMEvalKit puts them, and `<work_dir>/<model>/<dataset>/{predictions.jsonl,results.json}`.
"""

from __future__ import annotations

import json
import math
import platform
import subprocess
import sys
from collections.abc import Iterable
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit import __version__
from vlmkit.core.files import write_text_atomic
from vlmkit.core.secrets import scrub
from vlmkit.outputs.xlsx import write_xlsx

SCHEMA_VERSION = 1
EXCEL_CELL_LIMIT = 32_767
_PACKAGES = ("numpy", "pandas", "pillow", "requests", "torch", "transformers", "tokenizers", "rapidfuzz")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def package_versions() -> dict[str, str | None]:
    return dict(_package_versions())


@lru_cache(maxsize=1)  # installed versions do not change while a command runs; the lookups cost ~15 ms
def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version(), "vlmkit": __version__}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_state(repo: Path) -> dict[str, Any] | None:
    """Commit and dirtiness of the checkout vlmkit runs from, when it is one (asked once per command: two git
    processes for every (model, dataset) pair cost more than a small pair's scoring)."""
    state = _git_state(repo)
    return dict(state) if state is not None else None


@lru_cache(maxsize=4)
def _git_state(repo: Path) -> dict[str, Any] | None:
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(dirty)}


def host_info() -> dict[str, Any]:
    """Platform and, only when torch is already loaded (never imported here), the GPUs it sees."""
    info: dict[str, Any] = {"platform": platform.platform(), "gpu_name": None, "gpu_count": 0}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        info["gpu_count"] = torch.cuda.device_count()
        info["gpu_name"] = torch.cuda.get_device_name(0)
    return info


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


def strict_json(value: Any) -> Any:
    """NaN/inf -> None and numpy scalars -> Python, so the file is strict JSON that any reader accepts."""
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(path: Path, obj: dict[str, Any], secrets: Iterable[str | None] = ()) -> None:
    """obj as strict JSON, with every secret given scrubbed wherever it appears (a last guard: nothing that reaches
    results.json should hold one)."""
    text = json.dumps(strict_json(obj), ensure_ascii=False, indent=2, default=str, allow_nan=False)
    write_text_atomic(path, scrub(text, secrets) + "\n")


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A plain fixed-width table for the console."""
    cells = [[_fmt(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) if cells else len(c) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    rule = "  ".join("-" * w for w in widths)
    body = ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join([line, rule, *body])


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1 else f"{value:.2f}"
    return "" if value is None else str(value)
