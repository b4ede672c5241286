"""Time MCQ scoring on an MMBench-shaped table (4329 rows with circular copies) and print the median seconds.

    python tools/bench_scoring.py [--rows 4329] [--repeats 7] [--fuzzy]

The table is synthetic and seeded: questions with 2-4 options, one circular copy per rotation of the options
(index base + k * 1_000_000), MMBench-like splits / categories / l2-categories, and predictions in the shapes
models give ("B", "The answer is C.", "Answer: (A) cat", the option text, Chinese markers, rambling text that
cannot be parsed, failed inferences).

Printed beside it, from the same run: "floor", a bare Python loop over the same table that only reads each row's
prediction, strips it and builds its option dict (what any per-row scorer pays before extracting anything), and
the load average: on a shared machine compare figures from one invocation only. Every call reads with a fresh
reader (nothing read is kept from one call to the next); "first" is the process's first call, before the
module-level caches of normalised option texts and their patterns are warm.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import string
import time

import pandas as pd

from vlmkit.scoring.kinds.mcq import score_mcq

L2 = {
    "coarse_perception": ["image_style", "image_scene", "image_emotion", "image_quality", "image_topic"],
    "finegrained_perception (instance-level)": [
        "object_localization", "attribute_recognition", "celebrity_recognition", "ocr",
    ],
    "finegrained_perception (cross-instance)": ["spatial_relationship", "attribute_comparison", "action_recognition"],
    "attribute_reasoning": ["physical_property_reasoning", "function_reasoning", "identity_reasoning"],
    "relation_reasoning": ["social_relation", "physical_relation", "nature_relation"],
    "logic_reasoning": ["future_prediction", "structuralized_imagetext_understanding"],
}  # fmt: skip
WORDS = "cat dog bird fish tree car house river mountain cloud lamp chair table book phone cup".split()


def _prediction(rng: random.Random, letter: str, text: str, letters: list[str]) -> str | None:
    wrong = rng.choice([x for x in letters if x != letter])
    pick = letter if rng.random() < 0.75 else wrong
    shape = rng.random()
    if shape < 0.30:
        return pick
    if shape < 0.45:
        return f"The answer is {pick}."
    if shape < 0.58:
        return f"Answer: ({pick}) {text if pick == letter else 'something'}"
    if shape < 0.68:
        return text if pick == letter else "I am not sure, it could be several of these things really."
    if shape < 0.75:
        return f"答案是{pick}"
    if shape < 0.85:
        return f"Looking at the image carefully, the object on the left is clearly visible, so I pick {pick}"
    if shape < 0.97:
        return "The picture shows a scene with many details and it is hard to say which option fits best overall."
    return None


def build_table(n_rows: int, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    rows: list[dict] = []
    base = 0
    while len(rows) < n_rows:
        n_opt = rng.choice([2, 3, 4, 4, 4])
        texts = rng.sample(WORDS, n_opt)
        answer_pos = rng.randrange(n_opt)
        l2 = rng.choice(sorted(L2))
        cat = rng.choice(L2[l2])
        split = "dev" if rng.random() < 0.5 else "test"
        for k in range(n_opt):
            if len(rows) >= n_rows:
                break
            rotated = texts[k:] + texts[:k]
            letters = list(string.ascii_uppercase[:n_opt])
            letter = letters[(answer_pos - k) % n_opt]
            row = {"index": base + k * 1_000_000, "question": f"q{base}", "answer": letter,
                   "split": split, "category": cat, "l2-category": l2}  # fmt: skip
            for j, L in enumerate("ABCD"):
                row[L] = rotated[j] if j < n_opt else float("nan")
            row["prediction"] = _prediction(rng, letter, rotated[letters.index(letter)], letters)
            rows.append(row)
        base += 1
    return pd.DataFrame(rows)


def floor_pass(df: pd.DataFrame) -> int:
    """The bare per-row loop (see the module docstring); returns a count so nothing is optimised away."""
    letters = [c for c in "ABCD" if c in df.columns]
    columns = [df[c].tolist() for c in letters]
    kept = 0
    for pred, *texts in zip(df["prediction"].tolist(), *columns):
        options = {letter: t for letter, t in zip(letters, texts) if type(t) is str}
        if type(pred) is str and pred.strip() and options:
            kept += 1
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4329)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--fuzzy", action="store_true")
    args = parser.parse_args()
    df = build_table(args.rows)
    times = []
    result = None
    for _ in range(args.repeats):
        start = time.perf_counter()
        result = score_mcq(df, circular=True, fuzzy=args.fuzzy)
        times.append(time.perf_counter() - start)
    assert result is not None
    floor = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        floor_pass(df)
        floor.append(time.perf_counter() - start)
    print(f"rows={len(df)} groups={result.counts['groups']} Overall={result.primary_value:.4f}")
    print(f"counts={result.counts}")
    print(f"score_mcq(circular=True, fuzzy={args.fuzzy}) median {statistics.median(times):.4f} s "
          f"(first {times[0]:.4f}, min {min(times):.4f}, max {max(times):.4f}, {args.repeats} repeats)")  # fmt: skip
    print(f"floor (bare per-row loop) median {statistics.median(floor):.4f} s; "
          f"ratio {statistics.median(times) / statistics.median(floor):.1f}x; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
