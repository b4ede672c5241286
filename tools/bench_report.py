"""Size and load time of the `vlmkit report --html` page for one 4,000-sample run (or a million-sample one).

    python tools/bench_report.py [--samples 4000] [--work DIR] [--thumb-size PX] [--repeats 3] [--distinct-images K]

`--samples 1000000 --distinct-images 200`: a million-row run; the page embeds vlmkit.report.page.SAMPLE_CAP of them
and links predictions.jsonl for the rest. The report runs as its own process: its wall time and peak RSS are
printed beside the page's size.

Builds a work dir the way `vlmkit run` leaves it: an MMBench-shaped MCQ run of N samples, each with its own
512x384 JPEG of random photo-like content (no two share an image: the worst case for the page's size; MMBench
shares a quarter), replies in the shapes models give (a letter, "The answer is C.", long explanations, <think>
reasoning, unreadable text, failed calls), scored by vlmkit's MCQ scorer, written as predictions.jsonl and
results.json. Then it times `vlmkit report WORK --html page.html` (reading the run and making the thumbnails),
prints the page's size, and opens it in headless Chromium:

- drawn: `performance.now()` when the page's script has drawn everything it draws at first (leaderboard, runs,
  the run's breakdown and its first 60 sample cards), i.e. from navigation start, reading the file and parsing the
  HTML and the embedded JSON included; the page's script writes it into body[data-render-ms] and
  `chromium --headless --dump-dom` reads it back. `load`: the same clock at the window's load event
  (body[data-load-ms]). Thumbnails further down decode as they scroll into view.
- wall: the whole `chromium --dump-dom` process, against the same for an empty page: browser start-up, the load,
  and writing the whole DOM (the page's 10 MB included) to stdout.

Medians over --repeats. --work keeps the work dir for another run (images are made once).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_mmbench_like import L2_CATEGORIES, WORDS, random_jpeg

from vlmkit.outputs.json_files import write_json
from vlmkit.scoring.kinds.mcq import score_mcq

MODEL, DATASET = "bench-model", "BenchMCQ"
LETTERS = "ABCD"
PROMPT_TAIL = "Please select the correct answer from the options above. \n"


def _phrase(rng: np.random.Generator, n: int) -> str:
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), n))


def _reply(rng: np.random.Generator, answer: str, options: dict[str, str]) -> tuple[str | None, str | None]:
    """(prediction, error kind) in the shapes models answer with."""
    roll = rng.random()
    wrong = LETTERS[(LETTERS.index(answer) + 1 + int(rng.integers(0, 3))) % 4]
    letter = answer if roll < 0.70 else wrong
    if roll > 0.97:
        return None, "timeout"
    if roll > 0.93:
        return f"I cannot tell from the picture; it might show {_phrase(rng, 6)}.", None
    style = rng.random()
    if style < 0.5:
        return letter, None
    if style < 0.75:
        return f"The answer is {letter}.", None
    if style < 0.9:
        why = ". ".join(f"The {_phrase(rng, 2)} is {_phrase(rng, 3)}" for _ in range(int(rng.integers(4, 9))))
        return f"{why}. Therefore the answer is {letter}. {options[letter]}", None
    thought = " ".join(_phrase(rng, 8) for _ in range(int(rng.integers(5, 15))))
    return f"<think>{thought}</think>\n{letter}", None


def build_work(work: Path, n: int, seed: int = 0, distinct_images: int | None = None) -> None:
    """The run's files under work/<model>/<dataset>/ and its images under work/images/ (sample i shows image
    i % distinct_images; default: every sample its own). Written CHUNK samples at a time, each chunk scored on its
    own, so that a million samples can be built in little memory; results.json's scoring is the last chunk's."""
    rng = np.random.default_rng(seed)
    images = work / "images"
    images.mkdir(parents=True, exist_ok=True)
    distinct = distinct_images or n
    categories = [(l2, c) for l2, cats in L2_CATEGORIES.items() for c in cats]
    run_dir = work / MODEL / DATASET
    run_dir.mkdir(parents=True, exist_ok=True)
    errors = 0
    result = None
    with open(run_dir / "predictions.jsonl", "w", encoding="utf-8") as handle:
        for start in range(0, n, CHUNK):
            rows, records = [], []
            for i in range(start, min(n, start + CHUNK)):
                path = images / f"{i % distinct}.jpg"
                if not path.exists():
                    path.write_bytes(random_jpeg(rng))
                options = {letter: _phrase(rng, int(rng.integers(1, 4))) for letter in LETTERS}
                answer = LETTERS[int(rng.integers(0, 4))]
                l2, category = categories[int(rng.integers(0, len(categories)))]
                hint = f"The picture shows {_phrase(rng, 5)}." if rng.random() < 0.5 else ""
                question = f"Which {_phrase(rng, 2)} is {_phrase(rng, 3)} in the picture?"
                text = (f"Hint: {hint}\n" if hint else "") + f"Question: {question}\nOptions:\n"
                text += "".join(f"{k}. {v}\n" for k, v in options.items()) + PROMPT_TAIL
                prediction, error = _reply(rng, answer, options)
                row = {"index": i, "question": question, "hint": hint, **options, "answer": answer,
                       "category": category, "l2-category": l2, "split": "dev"}
                rows.append({**row, "prediction": prediction})
                records.append({
                    "index": i,
                    "prompt": [{"role": "user", "content": [{"type": "image", "value": str(path)},
                                                            {"type": "text", "value": text}]}],
                    "prompt_hash": f"{i:016x}",
                    "target": answer,
                    "prediction": prediction,
                    "error": {"kind": error, "message": "no answer within 60 s", "status": None} if error else None,
                    "usage": None if error else {"input_tokens": 600, "output_tokens": 12, "reasoning_tokens": 0},
                    "latency_ms": float(rng.integers(200, 3000)),
                    "metadata": {k: v for k, v in row.items() if k not in ("index", "answer")},
                })
            result = score_mcq(pd.DataFrame(rows), circular=False)
            for record, scored in zip(records, result.per_sample.to_dict(orient="records")):
                record.update({k: (None if isinstance(v, float) and math.isnan(v) else v)
                               for k, v in scored.items() if k != "index"})
                handle.write(json.dumps(record, ensure_ascii=False, default=lambda v: v.item()) + "\n")
            errors += sum(r["error"] is not None for r in records)
    write_json(run_dir / "results.json", {
        "schema_version": 1, "status": "partial" if errors else "success",
        "started_at": "2026-11-24T00:00:00+00:00", "completed_at": "2026-11-24T00:10:00+00:00",
        "model": {"name": MODEL}, "dataset": {"name": DATASET, "kind": "mcq", "rows": n},
        "counts": {"total": n, "completed": n - errors, "inference_errors": errors, "not_run": 0},
        "scoring": result.to_dict() if result is not None else None, "errors_by_kind": {}, "notes": [],
    })


CHUNK = 10_000  # samples built, scored and written at a time


def run_report(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MiB, what it printed) of one `vlmkit report` process."""
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "vlmkit", *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    printed = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"vlmkit report failed: {printed}")
    return time.perf_counter() - began, usage.ru_maxrss / 1024, printed


def _browser() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _dump(browser: str, url: str, profile: Path) -> tuple[float, str]:
    flags = ["--headless", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}"]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")
    t0 = time.perf_counter()
    done = subprocess.run([browser, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=300)
    return time.perf_counter() - t0, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--work", type=Path, default=None, help="keep the work dir here (default: a temporary one)")
    parser.add_argument("--thumb-size", type=int, default=None, help="passed to vlmkit report (default: its own)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--distinct-images", type=int, default=None,
                        help="images the samples cycle through (default: one per sample; 1M samples want fewer)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        work = args.work or tmp / "outputs"
        t0 = time.perf_counter()
        build_work(work, args.samples, distinct_images=args.distinct_images)
        distinct = args.distinct_images or args.samples
        print(f"work dir: {args.samples} samples in 1 run, {distinct} distinct 512x384 JPEGs "
              f"({time.perf_counter() - t0:.1f} s to build)")

        page = tmp / "report.html"
        argv = ["report", str(work), "--out", str(tmp), "--html", str(page)]
        if args.thumb_size is not None:
            argv += ["--thumb-size", str(args.thumb_size)]
        elapsed, peak, printed = run_report(argv)
        line = next(ln for ln in printed.splitlines() if ln.startswith("page: "))
        print(f"vlmkit report --html: {elapsed:.1f} s, peak RSS {peak:.0f} MiB "
              f"({line.split('(', 1)[1].rstrip(')')})")
        size = page.stat().st_size
        print(f"page size: {size / 1e6:.2f} MB ({size:,} bytes)")

        browser = _browser()
        if browser is None:
            print("load time: not measured (no chromium on PATH)")
            return
        empty = tmp / "empty.html"
        empty.write_text("<!DOCTYPE html><html><body></body></html>")
        drawn, loads, walls, bases = [], [], [], []
        for repeat in range(args.repeats):
            base, _ = _dump(browser, empty.as_uri(), tmp / f"profile-e{repeat}")
            wall, dom = _dump(browser, page.as_uri(), tmp / f"profile-{repeat}")
            m = re.search(r'data-render-ms="(\d+)"', dom)
            loaded = re.search(r'data-load-ms="(\d+)"', dom)
            if not m or not loaded:
                sys.exit("the page did not finish drawing (no data-render-ms / data-load-ms in the dumped DOM)")
            drawn.append(int(m.group(1)))
            loads.append(int(loaded.group(1)))
            walls.append(wall)
            bases.append(base)
        version = subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"open in headless {version}, median of {args.repeats}: drawn {statistics.median(drawn):.0f} ms and "
              f"load event {statistics.median(loads):.0f} ms after navigation start (leaderboard, runs, breakdown, "
              f"first 60 cards); chromium --dump-dom wall {statistics.median(walls):.2f} s vs "
              f"{statistics.median(bases):.2f} s for an empty page")


if __name__ == "__main__":
    main()
