"""Convert a custom dataset to a VLMEvalKit benchmark TSV (base64 images), usable as `vlmkit run --data OUT.tsv`.

    python tools/convert_to_tsv.py INPUT OUT.tsv [--subset S] [--data-type mcq|qa] [--meta-path M] [--seed N]

INPUT is anything datasets_tsv.custom.build_custom_dataset reads: a text mcq/qa .csv/.jsonl, an mm_custom jsonl
(image rows), a jsonl (or csv) whose rows name an `image` file (or a list) with `question`/`answer`, an EvalScope
directory, or a folder of images holding one such jsonl. Relative image paths resolve against the jsonl's folder.

The TSV has `index`, `image` (base64 of the file's own bytes; a JSON list for several images; a repeated single
image is written once and referenced by its first row's index, VLMEvalKit's convention), `question`, `hint`, the
option columns, `answer` (an MCQ answer as its letter), and the other scalar columns (category, split, ...).
Text-only rows have an empty `image` cell (TSVDataset reads them as prompts without images).
Rows a TSV cannot express are an error naming the row: video/audio rows, system prompts, multi-turn
conversations, image URLs (download them first).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

import vlmkit

INTERNAL = frozenset({"answer_status", "type", "path", "messages", "parameters", "system", "image"})
FIRST = ("index", "image", "question", "hint")


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    return isinstance(value, str) and not value.strip()


def _image_cell(dataset: Any, row: dict[str, Any], seen: dict[str, Any]) -> str | None:
    if dataset.format != "mm_custom":
        return None
    where = f"{dataset.source}: row index {row['index']}"
    if row["type"] != "image":
        raise vlmkit.DataError(f"{where}, field type: {row['type']} rows cannot go into a benchmark TSV (images only)")
    cells = []
    for pos, file in enumerate(row["path"]):
        if "://" in file or file.startswith("data:"):
            raise vlmkit.DataError(f"{where}, field path[{pos}]: {file} is a URL; download it first")
        data = Path(file).read_bytes()
        try:
            vlmkit.decode_image(data)
        except vlmkit.MediaError as exc:
            raise vlmkit.DataError(f"{where}, field path[{pos}]: {file} is not a readable image ({exc})") from None
        cells.append(vlmkit.bytes_to_b64(data))
    if len(cells) == 1:
        first = seen.setdefault(row["path"][0], row["index"])
        return str(first) if first != row["index"] else cells[0]
    return json.dumps(cells)


def _question(dataset: Any, row: dict[str, Any]) -> str:
    where = f"{dataset.source}: row index {row['index']}"
    messages = row.get("messages")
    if isinstance(messages, list) and (len(messages) != 1 or not isinstance(messages[0].get("content"), str)):
        raise vlmkit.DataError(
            f"{where}, field messages: a system prompt or several turns cannot go into a benchmark TSV"
        )
    if not _missing(row.get("system")):
        raise vlmkit.DataError(f"{where}, field system: a system prompt cannot go into a benchmark TSV")
    return str(row["question"])


def to_table(dataset: Any) -> pd.DataFrame:
    """The TSV rows of a custom dataset (see the module docstring)."""
    rows, seen = [], {}
    for i in range(len(dataset)):
        row = dataset.line(i)
        out: dict[str, Any] = {
            "index": row["index"],
            "image": _image_cell(dataset, row, seen),
            "question": _question(dataset, row),
        }
        for key, value in row.items():
            if key in out or key in INTERNAL or _missing(value):
                continue
            out[key] = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
        rows.append(out)
    # `image` is always there (empty for text rows): TSVDataset reads a row without an image value as text-only
    columns: list[str] = ["index", "image", "question"]
    columns += [c for c in FIRST[3:] if any(r.get(c) is not None for r in rows)]
    for row in rows:
        columns += [c for c in row if c not in columns and row[c] is not None]
    return pd.DataFrame(rows, columns=columns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Convert a custom dataset to a VLMEvalKit benchmark TSV.")
    parser.add_argument("input", help="custom .csv/.jsonl, EvalScope directory, or a folder of images + one jsonl")
    parser.add_argument("output", type=Path, help="the .tsv to write")
    parser.add_argument("--subset", default=None, help="EvalScope subset (directory input with several)")
    parser.add_argument("--data-type", choices=("mcq", "qa"), default=None, help="override mcq/qa detection")
    parser.add_argument("--meta-path", default=None, help="a .meta.json to apply (request_count, sampling_mode)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the meta's shuffle/random sampling")
    args = parser.parse_args(argv)
    if args.output.suffix.lower() != ".tsv":
        parser.error("the output file must end in .tsv")
    try:
        dataset = vlmkit.build_custom_dataset(
            args.input, subset=args.subset, data_type=args.data_type, meta_path=args.meta_path, seed=args.seed
        )
        table = to_table(dataset)
    except (vlmkit.DataError, OSError) as exc:
        print(f"convert_to_tsv: error: {exc}", file=sys.stderr)
        return 2
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.output.with_name(f".{args.output.name}.tmp")
    table.to_csv(tmp, sep="\t", index=False)
    tmp.replace(args.output)
    images = int(table["image"].notna().sum()) if "image" in table else 0
    print(f"wrote {len(table)} row(s), {images} with images, kind {dataset.data_type}, to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
