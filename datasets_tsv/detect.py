"""What kind of benchmark an unknown local TSV is, judged from its columns and values (never from its name).

- MCQ when it has option columns A and B; circular when its indices form VLMEvalKit's circular groups (some
  index >= 1,000,000 and every such index has its main row `index % 1,000,000`).
- Y/N when it has answers and every answer is yes or no (any case, surrounding spaces ignored).
- VQA otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .images import DatasetError, iter_records

CIRCULAR_STRIDE = 1_000_000


def detect(tsv: Path) -> tuple[str, dict[str, Any]]:
    """(kind, constructor options) for a TSV: ("mcq", {"circular": True}), ("yorn", {}), ("vqa", {})."""
    header, records = iter_records(tsv)
    if not header:
        raise DatasetError(f"{tsv}: empty file (no header)")
    columns = {name: i for i, name in enumerate(header)}
    wanted = {name: columns[name] for name in ("index", "answer") if name in columns}
    values: dict[str, list[str]] = {name: [] for name in wanted}
    for record in records:
        for name, col in wanted.items():
            if col < len(record) and record[col]:
                values[name].append(record[col].decode("utf-8", "replace"))
    if "A" in columns and "B" in columns:
        return "mcq", {"circular": is_circular(values.get("index", []))}
    answers = [a.strip().lower() for a in values.get("answer", [])]
    if answers and all(a in ("yes", "no") for a in answers):
        return "yorn", {}
    return "vqa", {}


def is_circular(indices: list[str]) -> bool:
    """True when the indices are integers forming circular groups (copies at main + k * 1,000,000)."""
    try:
        values = [int(v) for v in indices]
    except ValueError:
        return False
    copies = [v for v in values if v >= CIRCULAR_STRIDE]
    mains = {v for v in values if v < CIRCULAR_STRIDE}
    return bool(copies) and all(v % CIRCULAR_STRIDE in mains for v in copies)
