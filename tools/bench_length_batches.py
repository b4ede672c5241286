"""Batches of similar prompt length vs batches in dataset order: local inference speed on the shipped model.

    python tools/bench_length_batches.py [--rows 192] [--batch-size 16] [--repeats 3]

`vlmkit-tiny` answers the demo VQA rows, each question lengthened by a seeded random number (0-160) of filler
words, so prompts differ in length as real benchmarks' do (hints, options, long questions). The same tasks run
through `vlmkit.run.inference.run_local` twice per repeat: batches formed in dataset order (`by_length=False`) and
batches of similar length (`by_length=True`, what `vlmkit run` does). Prints the median seconds of each, the
speed-up, and whether both gave the same answers for every row.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from datasets_tsv.catalog.registry import build_dataset
from vlmkit.run.inference import Task, run_local
from vlmkit.run.journal import Journal
from vlmkit.run.resolve import resolve_model

FILLER = ("please", "look", "carefully", "at", "the", "picture", "and", "answer", "briefly")


def tasks_of(rows: int, seed: int, root: Path) -> list[Task]:
    dataset = build_dataset("vlmkit_demo_vqa", root=root, progress=False)
    rng = random.Random(seed)
    tasks = []
    for pos in range(min(rows, len(dataset.data))):
        msgs = dataset.build_prompt(pos)
        pad = " ".join(rng.choice(FILLER) for _ in range(rng.randint(0, 160)))
        text = msgs[-1]["value"]
        msgs[-1] = {"type": "text", "value": f"{pad} {text}" if pad else text}
        tasks.append(Task(index=int(dataset.data["index"].iloc[pos]), msgs=msgs))
    return tasks


def timed(model, tasks: list[Task], batch_size: int, by_length: bool, work: Path) -> tuple[float, dict]:
    path = work / f"journal-{by_length}-{time.monotonic_ns()}.jsonl"
    with Journal(path, {"bench": "length"}) as journal:
        start = time.perf_counter()
        run_local(model, tasks, journal, dataset="vlmkit_demo_vqa", batch_size=batch_size, desc="bench",
                  progress=False, by_length=by_length)
        elapsed = time.perf_counter() - start
        answers = {key: rec.get("prediction") for key, rec in journal.records.items()}
    return elapsed, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=192)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tasks = tasks_of(args.rows, args.seed, work / "LMUData")
        model = resolve_model("vlmkit-tiny").build(batch_size=args.batch_size)
        timed(model, tasks[: args.batch_size], args.batch_size, True, work)  # warm-up
        plain, sorted_, same = [], [], True
        for _ in range(args.repeats):
            t_plain, a_plain = timed(model, tasks, args.batch_size, False, work)
            t_sorted, a_sorted = timed(model, tasks, args.batch_size, True, work)
            plain.append(t_plain)
            sorted_.append(t_sorted)
            same = same and a_plain == a_sorted
        model.close()
    lengths = [len(t.msgs[-1]["value"]) for t in tasks]
    print(f"rows={len(tasks)} batch_size={args.batch_size} prompt chars {min(lengths)}-{max(lengths)}")
    print(f"dataset order: median {statistics.median(plain):.2f} s {[round(t, 2) for t in plain]}")
    print(f"by length:     median {statistics.median(sorted_):.2f} s {[round(t, 2) for t in sorted_]}")
    print(f"speed-up {statistics.median(plain) / statistics.median(sorted_):.2f}x; same answers for every row: {same}")


if __name__ == "__main__":
    main()
