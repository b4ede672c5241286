"""Time what the rescored bootstrap interval (docs/error_bars.md, "Rescored bootstrap") adds to one scoring, on a
CC-OCR-shaped table (its text tracks: multi_lan_ocr French/Japanese, multi_scene_ocr IC15/TotalText; headline `total`,
a mean of track means of sub-dataset means), scored as `vlmkit run` scores it: the dataset's evaluate through
EvalResult.scored.

    python tools/bench_rescored_interval.py [--rows 500 2000 4000]

The TSV is synthetic and seeded (12-word answers and replies drawn from a small vocabulary, one tiny image), written to
a temporary $LMUData as `CCOCR`. Printed per size: one scoring's seconds, the seconds the interval adds, how many
resamples ran (200, fewer when the 20 s budget cuts them), the interval, and the load average: on a shared machine
compare figures from one invocation only.
"""

from __future__ import annotations

import argparse
import base64
import csv
import io
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

import vlmkit

CELLS = (("multi_lan_ocr", "French"), ("multi_lan_ocr", "Japanese"), ("multi_scene_ocr", "IC15"),
         ("multi_scene_ocr", "TotalText"))
WORDS = "the cat sat on a mat with red hat and big dog ran".split()


def tiny_png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def write_ccocr(root: Path, rows: int, seed: int = 0) -> list[str]:
    """The TSV, and the seeded replies (one per row)."""
    rng = np.random.default_rng(seed)
    image = tiny_png()
    with open(root / "CCOCR.tsv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter="\t")
        writer.writerow(["index", "image", "question", "answer", "category", "l2-category", "split", "image_name"])
        for i in range(rows):
            category, split = CELLS[i % 4]
            writer.writerow([i, image if i == 0 else "0", "Read all the text in the image.",
                             " ".join(rng.choice(WORDS, 12)), category, split, split, f"img{i}"])
    return [" ".join(rng.choice(WORDS, 12)) for _ in range(rows)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[500, 2000, 4000])
    args = parser.parse_args()
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            replies = write_ccocr(root, rows)
            dataset = vlmkit.build_dataset("CCOCR", root=root, progress=False, keep_local_tsv=True)
            table = dataset.data.assign(prediction=replies)
            started = time.monotonic()
            first = dataset.evaluate(table)
            one = time.monotonic() - started
            started = time.monotonic()
            result = type(first).scored(lambda t, judge: dataset.evaluate(t, judge=judge), table)
            both = time.monotonic() - started
        ci = result.primary_interval
        what = (f"{ci.resamples} resamples, {result.primary} {result.primary_value:.4f} [{ci.low:.4f}, {ci.high:.4f}]"
                if ci else result.notes[-1])
        print(f"rows {rows}: one scoring {one:.2f} s, the interval adds {both - one:.1f} s; {what}; "
              f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
