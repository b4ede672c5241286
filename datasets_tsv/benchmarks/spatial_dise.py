"""Spatial-DISE, which VLMEvalKit builds from its Hugging Face snapshot (TACPS-liv/Spatial-DISE) rather than a TSV:
a CSV per split (`DISE-bench/DISE-benchmark.csv` for the benchmark, `dataset/<split>.csv` for test/val/train) and
the images in tar shards under `image/`.

With `--data-root DIR` (that snapshot) and no `$LMUData/<name>.tsv` yet, the split's CSV becomes that TSV once (rows
indexed `<split>_<row number>`, the answer upper-cased, options A-D standing for themselves as in VLMEvalKit) and the
images each row names (the merged image, then the separate question/view/option images, in VLMEvalKit's column order,
repeats left out) are copied out of the shards into `$LMUData/images/<name>/`. After that the TSV is used like any
other; delete it to build it again. A row naming an image that no shard holds is an error naming the CSV row and
column (VLMEvalKit refuses the whole split too). Prompt and scoring: SpatialMCQDataset's `dise` style and
spatial_bench MCQ per category, difficulty and dise_category.
"""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.config import lmu_data_root
from vlmkit.core.files import (
    UnsafePathError,
    contained_path,
    write_bytes_atomic,
    write_text_atomic,
)

from datasets_tsv.benchmarks.spatial_mcq import SpatialMCQDataset
from datasets_tsv.io.tsv_read import DatasetError

REPO = "TACPS-liv/Spatial-DISE"
SPLITS = ("benchmark", "test", "val", "train")
IMAGE_COLUMNS = (
    "image", "question_image_path", "question_image_1_path", "question_image_2_path",
    "option_a_image_path", "option_b_image_path", "option_c_image_path", "option_d_image_path",
)  # fmt: skip
KEEP = ("category", "difficulty", "source", "dise_category")


def split_csv(data_root: Path, split: str) -> Path:
    if split == "benchmark":
        return data_root / "DISE-bench" / "DISE-benchmark.csv"
    return data_root / "dataset" / f"{split}.csv"


def _member(value: str) -> str:
    """A CSV image path as the tar member it names (VLMEvalKit drops a leading `images/` and slashes)."""
    value = value.strip()
    return value.removeprefix("images/").lstrip("/\\")


def build_tsv(data_root: Path, split: str, tsv: Path, image_root: Path) -> None:
    """Write the split's TSV and copy its images out of the shards (module docstring)."""
    source = split_csv(data_root, split)
    if not source.is_file():
        raise DatasetError(f"{source}: not found; --data-root must be a snapshot of {REPO} (split {split})")
    table = pd.read_csv(source, skipinitialspace=True, dtype=str, keep_default_na=False)
    table.columns = [str(c).strip() for c in table.columns]
    shards = sorted((data_root / "image").glob("*.tar"))
    if not shards:
        raise DatasetError(f"{data_root / 'image'}: no tar shards; --data-root must be a snapshot of {REPO}")
    where: dict[str, Path] = {}
    for shard in shards:
        with tarfile.open(shard) as tf:
            for info in tf.getmembers():
                if info.isfile():
                    where.setdefault(info.name, shard)
    records: list[dict[str, Any]] = []
    wanted: dict[Path, list[str]] = {}
    for number, row in enumerate(table.to_dict("records")):
        members: list[str] = []
        for column in IMAGE_COLUMNS:
            value = str(row.get(column, "")).strip()
            if not value or _member(value) in members:
                continue
            member = _member(value)
            if member not in where:
                raise DatasetError(f"{source}: row {number}, field {column}: {value!r} is in no tar shard under "
                                   f"{data_root / 'image'}")
            members.append(member)
        if not members:
            raise DatasetError(f"{source}: row {number}, field image: no image")
        if is_blank(row.get("question")) or is_blank(row.get("answer")):
            raise DatasetError(f"{source}: row {number}, field question/answer: empty")
        for member in members:
            wanted.setdefault(where[member], []).append(member)
        records.append({
            "index": f"{split}_{number}", "question": str(row["question"]).strip(),
            "answer": str(row["answer"]).strip().upper(), "image_path": json.dumps(members),
            **{L: L for L in "ABCD"}, "split": split, **{k: str(row.get(k, "")).strip() for k in KEEP},
        })  # fmt: skip
    for shard, members in wanted.items():
        with tarfile.open(shard) as tf:
            for member in dict.fromkeys(members):
                try:
                    target = contained_path(image_root, member)
                except UnsafePathError as exc:
                    raise DatasetError(f"{shard}: member {exc}") from None
                if target.is_file():
                    continue
                extracted = tf.extractfile(member)
                if extracted is None:
                    raise DatasetError(f"{shard}: {member} is not a file")
                target.parent.mkdir(parents=True, exist_ok=True)
                write_bytes_atomic(target, extracted.read())
    out = io.StringIO()
    pd.DataFrame.from_records(records).to_csv(out, sep="\t", index=False, quoting=csv.QUOTE_MINIMAL)
    write_text_atomic(tsv, out.getvalue())


class SpatialDISEDataset(SpatialMCQDataset):
    """Spatial-DISE, its TSV built from the snapshot on first use (module docstring)."""

    def __init__(
        self,
        name: str,
        *,
        split: str = "benchmark",
        data_root: Path | str | None = None,
        root: Path | None = None,
        image_folder: str | None = None,
        **kwargs: Any,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"{name}: split {split!r}; choose one of {', '.join(SPLITS)}")
        self.split = split
        base = Path(root).expanduser() if root is not None else lmu_data_root()
        tsv = Path(kwargs.get("tsv_path") or base / f"{name}.tsv")
        if not tsv.is_file():
            if data_root is None:
                raise DatasetError(
                    f"{tsv}: not found; {name} is built from the Hugging Face snapshot {REPO}: pass --data-root DIR "
                    "(that snapshot's folder)"
                )
            try:
                image_root = contained_path(base / "images", image_folder or name)
            except UnsafePathError as exc:
                raise DatasetError(f"{name}: image_folder {exc}") from None
            build_tsv(Path(data_root).expanduser(), split, tsv, image_root)
        kwargs.setdefault("prompt", "dise")
        kwargs.setdefault("groups", ["category", "difficulty", "dise_category"])
        kwargs.setdefault("group_prefix", False)
        super().__init__(name, root=root, image_folder=image_folder, **kwargs)

    def scorer_params(self) -> dict[str, Any]:
        return {**super().scorer_params(), "split": self.split}
