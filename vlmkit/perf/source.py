"""The dataset a perf run draws its requests from: a catalog name, a TSV, or a custom .jsonl/.csv file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlmkit.perf.options import PerfInputError

CUSTOM_SUFFIXES = (".jsonl", ".csv")


def load_dataset(data: str, *, meta: str | None = None, seed: int = 0, root: Path | None = None) -> Any:
    """A custom dataset (datasets_tsv.custom, with its `.meta.json`) for a .jsonl/.csv path; otherwise a catalog
    name, `$LMUData/<name>.tsv` or a .tsv path through datasets_tsv.catalog.registry.build_dataset."""
    if Path(data).suffix.lower() in CUSTOM_SUFFIXES:
        if not Path(data).is_file():
            raise PerfInputError(f"--data {data}: no such file")
        try:
            from datasets_tsv.custom import build_custom_dataset
        except ImportError as exc:
            raise PerfInputError(f"--data {data}: custom .jsonl/.csv datasets need datasets_tsv.custom ({exc})") from None
        try:
            return build_custom_dataset(data, meta_path=meta, seed=seed)
        except ValueError as exc:  # the custom reader's errors name the file, row and field
            raise PerfInputError(str(exc)) from None
    if meta is not None:
        raise PerfInputError("--meta applies to custom .jsonl/.csv datasets; a TSV dataset takes none")
    from datasets_tsv.catalog.registry import build_dataset

    return build_dataset(data, root=root, inference_only=True)  # prompts only: a judge-scored benchmark is a source too
