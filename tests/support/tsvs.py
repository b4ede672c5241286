"""Helpers for dataset tests: real image bytes made with pillow and TSVs written as VLMEvalKit writes them."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pandas as pd
from PIL import Image

from datasets_tsv.io.image_manifest import MANIFEST_NAME


def image_bytes(colour: str = "red", fmt: str = "JPEG", size: tuple[int, int] = (32, 24)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format=fmt)
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def write_tsv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """pandas.to_csv(sep="\\t") of the rows (columns in first-seen order; missing cells empty)."""
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=columns).to_csv(path, sep="\t", index=False)
    return path


def files_under(folder: Path, *, manifest: bool = False) -> dict[str, int]:
    """relative path -> mtime_ns of every image file under folder (to prove a second pass writes nothing); the
    folder's manifest too when asked."""
    return {
        str(p.relative_to(folder)): p.stat().st_mtime_ns
        for p in folder.rglob("*")
        if p.is_file() and (manifest or p.name != MANIFEST_NAME)
    }
