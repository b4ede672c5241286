"""Measure dataset preparation: the first build_prompt pass over every row (all images decoded) and the second.

    python tools/bench_dataset_prep.py                 # a 4329-row MMBench-like TSV (about 214 MB) in a temp LMUData
    python tools/bench_dataset_prep.py --tsv PATH.tsv  # an existing TSV (its images go to a temp LMUData)
    python tools/bench_dataset_prep.py --repeat 3      # first pass and floors three times each, best of each compared

Each measurement runs in a fresh Python process and prints where its seconds go: "import" (pandas, numpy and the
dataset modules: the same whatever the data, so kept apart), "construct" (build_dataset: for a TSV the catalog
does not know, reading its columns to tell its kind; then the MD5, or the stamp of an unchanged file, and the
table: on a first pass one read of the file feeds both the MD5, hashed on a second thread, and the table, and the
kind detection's read is that same one), "images" (prepare_images: decode and write every image, the writes on a
second thread, or check the files of a recorded pass), "prompts" (build_prompt for every row), "total" (construct
+ images + prompts) and the process's peak RSS, with where the MD5 came from. "first" decodes and writes every
image; "second" finds the TSV and every image as the first left them (its MD5 should come from the stamp).

The floors are the raw cost on this machine of splitting the lines, decoding the base64 and writing the files
with nothing else (no MD5, no table, no checks, no prompts), to judge the first pass against; they run right after
the first pass. "floor-s" does it all on one thread; "floor-t" writes the files on a second thread while the first
decodes, as vlmkit's image pass does, so the first pass is printed as a ratio to both. Disk speed on a shared
machine varies a lot from minute to minute: compare figures from one invocation, and see the load averages
printed. Each measurement starts after an `os.sync()`, so that it does not pay for writing back the files of the
one before, and writes into folders of its own: each first pass gets a fresh LMUData (the TSV hard-linked in), and
nothing is deleted until the end (on a disk mounted with `discard`, deleting a round's files slowed whatever ran
next, and that was always the first pass: 1.5x its floor in the first round, up to 1.8x after).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from datasets_tsv.catalog.registry import build_dataset
import datasets_tsv.kinds.base, datasets_tsv.catalog.detect  # what build_dataset imports on first use (pandas, numpy)
t1 = time.perf_counter()
dataset = build_dataset(sys.argv[1], root=sys.argv[2], progress=False)
t2 = time.perf_counter()
dataset.prepare_images()
t3 = time.perf_counter()
parts = sum(len(dataset.build_prompt(i)) for i in range(len(dataset)))
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "construct_s": t2 - t1, "images_s": t3 - t2, "prompts_s": t4 - t3,
                  "rows": len(dataset), "parts": parts, "md5_source": dataset.info().get("md5_source", "?"),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

FLOOR = r"""
import base64, json, queue, resource, sys, threading, time
from pathlib import Path
tsv, out, threaded = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "threaded"
out.mkdir(parents=True, exist_ok=True)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


if threaded:  # the files are written on a second thread, as vlmkit's pass writes them
    todo = queue.Queue(maxsize=32)

    def writer():
        while (item := todo.get()) is not None:
            write(*item)

    thread = threading.Thread(target=writer)
    thread.start()
    put = todo.put
else:
    put = lambda item: write(*item)
t0 = time.perf_counter()
with open(tsv, "rb") as handle:
    header = next(handle).rstrip(b"\r\n").split(b"\t")
    col_index, col_image = header.index(b"index"), header.index(b"image")
    for line in handle:
        fields = line.rstrip(b"\r\n").split(b"\t")
        if len(fields[col_image]) > 64:
            put((out / (fields[col_index].decode() + ".jpg"), base64.b64decode(fields[col_image])))
if threaded:
    todo.put(None)
    thread.join()
print(json.dumps({"pass_s": time.perf_counter() - t0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_child(code: str, *args: str) -> dict:
    os.sync()  # the files an earlier measurement wrote reach the disk before this one starts, not during it
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measurement failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(label: str, figures: dict) -> float:
    """Print one pass's line; its total (construct + images + prompts)."""
    total = figures["construct_s"] + figures["images_s"] + figures["prompts_s"]
    print(f"{label:<8}{figures['import_s']:>10.2f}{figures['construct_s']:>13.2f}{figures['images_s']:>10.2f}"
          f"{figures['prompts_s']:>11.2f}{total:>9.2f}{figures['peak_rss_mb']:>13.0f}  {figures['md5_source']}")
    return total


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def folder_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tsv", type=Path, help="an existing TSV to measure instead of a generated one")
    parser.add_argument("--rows", type=int, default=4329, help="rows of the generated TSV")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-floor", action="store_true", help="skip the raw decode+write floors")
    parser.add_argument("--repeat", type=int, default=1,
                        help="measure the first pass and the floors this many times, interleaved, and compare the "
                             "best of each (on a shared machine the disk's speed varies from run to run)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="vlmkit-bench-") as tmp:
        root = Path(tmp) / "LMUData"
        root.mkdir()
        if args.tsv is not None:
            target, tsv = str(args.tsv.resolve()), args.tsv.resolve()
        else:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from make_mmbench_like import make_mmbench_like

            tsv = root / "MMBench_like.tsv"
            began = time.perf_counter()
            make_mmbench_like(tsv, rows=args.rows, seed=args.seed)
            print(f"generated {tsv.name}: {args.rows} rows, {tsv.stat().st_size / 1e6:.1f} MB "
                  f"in {time.perf_counter() - began:.1f} s")
            target = tsv.stem
        print(f"machine: {os.cpu_count()} cpus, load {load()}; python {sys.version.split()[0]}")
        print(f"{'pass':<8}{'import s':>10}{'construct s':>13}{'images s':>10}{'prompts s':>11}{'total s':>9}"
              f"{'peak RSS MB':>13}  md5")
        firsts: list[float] = []
        floors: dict[str, list[float]] = {"single": [], "threaded": []}
        for attempt in range(args.repeat):
            # Each first pass starts from a fresh LMUData (the TSV hard-linked in: no stamp, no images), and nothing
            # is deleted until the end: on a disk mounted with `discard`, deleting the last round's files made the
            # next measurement pay for it, and that was always the first pass.
            fresh = Path(tmp) / f"LMUData{attempt}"
            fresh.mkdir()
            if args.tsv is None:
                os.link(tsv, fresh / tsv.name)
            figures = run_child(CHILD, target, str(fresh))
            firsts.append(row("first", figures))
            if not args.no_floor:
                for way, times in floors.items():
                    floor = run_child(FLOOR, str(tsv), str(Path(tmp) / f"floor{attempt}" / way), way)
                    times.append(floor["pass_s"])
                    print(f"{'floor-' + way[0]:<8}{'':>10}{'':>13}{floor['pass_s']:>10.2f}{'':>11}{'':>9}"
                          f"{floor['peak_rss_mb']:>13.0f}")
        last = Path(tmp) / f"LMUData{args.repeat - 1}"
        figures = run_child(CHILD, target, str(last))
        second = row("second", figures)
        n_files, n_bytes = folder_size(last / "images")
        print(f"images: {n_files} files, {n_bytes / 1e6:.1f} MB; {figures['rows']} rows, {figures['parts']} parts")
        best = "" if args.repeat == 1 else f" (each the best of {args.repeat})"
        if not args.no_floor:
            single, threaded, first = min(floors["single"]), min(floors["threaded"]), min(firsts)
            print(f"first pass {first:.2f} s = {first / single:.2f}x the single-threaded floor {single:.2f} s "
                  f"(floor-s), {first / threaded:.2f}x the floor {threaded:.2f} s with its writes on a second "
                  f"thread as vlmkit's (floor-t){best}")
        print(f"second pass {second:.2f} s (MD5 from the {figures['md5_source']}); load now {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
