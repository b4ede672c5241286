"""What kind of benchmark an unknown local TSV is, judged from its columns and values (never from its name).

- MCQ when it has option columns A and B; circular when its indices form VLMEvalKit's circular groups (some
  index >= 1,000,000 and every such index has its main row `index % 1,000,000`).
- Caption when it has answers but no `question` column (COCO_VAL's shape: VLMEvalKit asks such a TSV its default
  caption question; every other kind needs the question).
- Y/N when it has answers and every answer is yes or no (any case, surrounding spaces ignored).
- VQA otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasets_tsv.io.tsv_read import DatasetError, iter_records
from datasets_tsv.io.tsv_stamp import cached_records

CIRCULAR_STRIDE = 1_000_000


def detect(tsv: Path) -> tuple[str, dict[str, Any]]:
    """(kind, constructor options) for a TSV: ("mcq", {"circular": True}), ("caption", {}), ("yorn", {}) or
    ("vqa", {})."""
    kind, options, _ = detect_with_reason(tsv)
    return kind, options


def detect_with_reason(tsv: Path, root: Path | None = None) -> tuple[str, dict[str, Any], str]:
    """detect() plus what in the file decided it, in words (for the one line a run prints about its scorer).

    root ($LMUData): read the columns from the TSV's stamp when the file is unchanged since it was stamped
    (datasets_tsv.io.tsv_stamp), instead of streaming the whole file again."""
    header, records = (cached_records(root, tsv) if root is not None else None) or iter_records(tsv)
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
        circular = is_circular(values.get("index", []))
        groups = (
            "indices form circular groups (copies at index + k * 1,000,000)"
            if circular
            else "no circular groups in the indices"
        )
        return "mcq", {"circular": circular}, f"option columns A and B: multiple choice; {groups}"
    if "answer" in columns and "question" not in columns:
        return "caption", {}, "answers but no question column: captions, asked VLMEvalKit's caption question"
    answers = [a.strip().lower() for a in values.get("answer", [])]
    if answers and all(a in ("yes", "no") for a in answers):
        return "yorn", {}, "every answer is yes or no"
    why = "answers that are not all yes/no" if answers else "no answers"
    return "vqa", {}, f"no option columns A/B and {why}: open questions"


def is_circular(indices: list[str]) -> bool:
    """True when the indices are integers forming circular groups (copies at main + k * 1,000,000)."""
    try:
        values = [int(v) for v in indices]
    except ValueError:
        return False
    copies = [v for v in values if v >= CIRCULAR_STRIDE]
    mains = {v for v in values if v < CIRCULAR_STRIDE}
    return bool(copies) and all(v % CIRCULAR_STRIDE in mains for v in copies)
