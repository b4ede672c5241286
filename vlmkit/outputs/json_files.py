"""JSON files a run writes whole (results.json, perf_summary.json): strict JSON, secrets scrubbed, written
atomically."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vlmkit.core.files import write_text_atomic
from vlmkit.core.secrets import scrub


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
