"""Write an MMBench-shaped TSV of generated images, for benchmarks and tests.

    python tools/make_mmbench_like.py OUT.tsv --rows 4329 --seed 0

Columns as MMBench v1.0: index, question, hint, A-D, answer, category, image, source, l2-category, comment,
split. Images are 512x384 JPEGs of random content (about 49 KB each, so 4329 rows make about 214 MB, the size of
MMBench_DEV_EN). A quarter of the rows are circular copies: index `main + k * 1_000_000`, options rotated by k,
and `image` holding the main row's index instead of base64, as in MMBench. Hints are empty in about half of the
rows. The same seed gives the same file byte for byte.

`make_mmbench_like(path, rows, seed)` does the same from Python (tests make small ones).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image

import vlmkit

CIRCULAR_STRIDE = 1_000_000
COLUMNS = ["index", "question", "hint", "A", "B", "C", "D", "answer", "category", "image", "source",
           "l2-category", "comment", "split"]
L2_CATEGORIES = {
    "coarse_perception": ["image_scene", "image_style", "image_topic", "image_quality", "image_emotion"],
    "finegrained_perception (instance-level)": ["object_localization", "attribute_recognition", "celebrity_recognition",
                                                "OCR"],
    "finegrained_perception (cross-instance)": ["spatial_relationship", "attribute_comparison", "action_recognition"],
    "logic_reasoning": ["structuralized_imagetext_understanding", "future_prediction"],
    "relation_reasoning": ["social_relation", "physical_relation", "nature_relation"],
    "attribute_reasoning": ["physical_property_reasoning", "function_reasoning", "identity_reasoning"],
}
WORDS = ["red", "green", "blue", "yellow", "circle", "square", "triangle", "cat", "dog", "tree", "house", "car",
         "river", "mountain", "left", "right", "above", "below", "two", "three", "four", "many", "none", "bright"]


def random_jpeg(rng: np.random.Generator, width: int = 512, height: int = 384, quality: int = 85) -> bytes:
    """A JPEG of smooth random colours plus fine noise (compresses like a photo: about 49 KB at 512x384)."""
    low = rng.integers(0, 256, (max(1, height // 32), max(1, width // 32), 3), dtype=np.uint8)
    smooth = np.asarray(Image.fromarray(low).resize((width, height), Image.Resampling.BICUBIC), dtype=np.int16)
    noisy = np.clip(smooth + rng.integers(-15, 16, smooth.shape, dtype=np.int16), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noisy).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def _phrase(rng: np.random.Generator, n: int) -> str:
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), n))


def make_mmbench_like(out: Path, rows: int = 4329, seed: int = 0, *, width: int = 512, height: int = 384) -> Path:
    """Write the TSV to out (atomically) and return out."""
    if rows < 1:
        raise ValueError("rows must be >= 1")
    rng = np.random.default_rng(seed)
    n_copies = rows // 4
    n_main = rows - n_copies
    n_options = rng.choice([2, 3, 4], size=n_main, p=[0.15, 0.25, 0.6])
    # Give copies to main rows (k = 1 .. n_options-1), in a random order of main rows.
    copies: list[tuple[int, int]] = []
    for main in rng.permutation(n_main):
        for k in range(1, int(n_options[main])):
            if len(copies) < n_copies:
                copies.append((int(main), k))
    if len(copies) < n_copies:
        raise ValueError(f"{rows} rows: too few options to make {n_copies} circular copies")
    categories = [(l2, c) for l2, cats in L2_CATEGORIES.items() for c in cats]

    mains = []
    for i in range(n_main):
        options = [_phrase(rng, int(rng.integers(1, 4))) for _ in range(int(n_options[i]))]
        l2, category = categories[int(rng.integers(0, len(categories)))]
        mains.append({
            "index": i,
            "question": f"Question {i}: which {_phrase(rng, 2)} is {_phrase(rng, 3)}?",
            "hint": f"The picture shows {_phrase(rng, 4)}." if rng.random() < 0.5 else "",
            "options": options,
            "answer": int(rng.integers(0, len(options))),
            "category": category,
            "l2-category": l2,
            "source": ["MMBench", "ScienceQA", "COCO", "web"][int(rng.integers(0, 4))],
        })

    def record(main: dict, k: int, image: str) -> dict:
        n = len(main["options"])
        options = main["options"][k:] + main["options"][:k]
        letters = "ABCD"
        return {
            "index": main["index"] + k * CIRCULAR_STRIDE,
            "question": main["question"],
            "hint": main["hint"],
            **{letters[j]: (options[j] if j < n else "") for j in range(4)},
            "answer": letters[(main["answer"] - k) % n],
            "category": main["category"],
            "image": image,
            "source": main["source"],
            "l2-category": main["l2-category"],
            "comment": "",
            "split": "dev",
        }

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            for main in mains:  # main rows first, then the copies, as in MMBench's TSV
                writer.writerow(record(main, 0, vlmkit.bytes_to_b64(random_jpeg(rng, width, height))))
            for main_index, k in sorted(copies, key=lambda c: (c[1], c[0])):
                writer.writerow(record(mains[main_index], k, str(main_index)))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the TSV to write")
    parser.add_argument("--rows", type=int, default=4329)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--height", type=int, default=384)
    args = parser.parse_args(argv)
    path = make_mmbench_like(args.out, args.rows, args.seed, width=args.width, height=args.height)
    print(f"{path}: {args.rows} rows, {path.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
