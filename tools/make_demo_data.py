"""Write the vlmkit demo benchmark: three VLMEvalKit-style TSVs of synthetic pictures (MCQ, Y/N, VQA).

    python tools/make_demo_data.py --out-dir datasets_tsv/data --seed 0

The same seed and row counts give the same bytes. The shipped files were made with the defaults below.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import demo_tasks  # noqa: E402

DEFAULT_ROWS = {"mcq": 180, "yorn": 160, "vqa": 160}
COLUMNS = {
    "mcq": ["index", "image", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "split"],
    "yorn": ["index", "image", "question", "answer", "category"],
    "vqa": ["index", "image", "question", "answer", "category"],
}


def tsv_name(kind: str) -> str:
    return f"vlmkit_demo_{kind}.tsv"


def build_table(kind: str, n: int, seed: int) -> pd.DataFrame:
    """The rows of one TSV. A picture already stored in an earlier single-image row is referenced by that row's
    index; a two-image row stores a JSON list of base64 strings."""
    rows = []
    first_row_of: dict[str, int] = {}
    for index, example in enumerate(demo_tasks.evaluation_examples(kind, n, seed)):
        jpegs = [demo_tasks.scene_jpeg(scene) for scene in example.scenes]
        encoded = [base64.b64encode(data).decode("ascii") for data in jpegs]
        if len(jpegs) > 1:
            image = json.dumps(encoded)
        else:
            key = demo_tasks.image_key(jpegs[0])
            image = str(first_row_of[key]) if key in first_row_of else encoded[0]
            first_row_of.setdefault(key, index)
        rows.append({"index": index, "image": image, **demo_tasks.example_fields(example)})
    return pd.DataFrame(rows, columns=COLUMNS[kind])


def write_tables(out_dir: Path, seed: int, rows: dict[str, int]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind, n in rows.items():
        path = out_dir / tsv_name(kind)
        text = build_table(kind, n, seed).to_csv(sep="\t", index=False, lineterminator="\n")
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=Path("datasets_tsv/data"))
    parser.add_argument("--seed", type=int, default=0)
    for kind, n in DEFAULT_ROWS.items():
        parser.add_argument(f"--rows-{kind}", type=int, default=n, help=f"rows in the {kind} TSV (default {n})")
    args = parser.parse_args(argv)
    rows = {kind: getattr(args, f"rows_{kind}") for kind in DEFAULT_ROWS}
    for path in write_tables(args.out_dir, args.seed, rows):
        data = path.read_bytes()
        print(f"{path}: {len(data) / 1e6:.2f} MB, md5 {hashlib.md5(data).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
