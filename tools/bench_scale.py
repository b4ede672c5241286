"""How `vlmkit run` scales with rows: wall time, ms a row and peak RSS at 10k, 100k, 1M rows against an instant server.

    python tools/bench_scale.py [--rows 10000 100000] [--image] [--nproc 8] [--shards N] [--servers K]

Each size is one fresh `vlmkit run` process (a served model on an MCQ TSV of N rows written to a temporary
`$LMUData`, `--nproc` requests at once, a fresh work dir) against tools/mock_openai_server.py (no delay, 4 tokens).
Its peak RSS is the kernel's figure for that process (os.wait4's ru_maxrss), its wall time the whole command's:
dataset load, inference with every answer journalled, scoring, and the result files.

`--image`: every row carries the same small PNG (base64 in the TSV's `image` column), so the client's per-image
work shows. `--shards N`: the rows are run as N `--shard I/N` processes one after another, then `--merge`; the
largest shard's RSS and the sum of the walls are printed. `--servers K`: K mock servers behind `--api-base A,B,...`.

Load on the machine from other work skews the walls; RSS does not move with it.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from mock_openai_server import running_server  # noqa: E402  (tools/, this script's folder)


def tiny_png() -> str:
    """A 32x32 PNG as base64 (made with Pillow, which vlmkit installs)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 40, 40)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def write_tsv(folder: Path, name: str, rows: int, image: bool) -> Path:
    """An MCQ TSV of `rows` rows (index, question, A-D, answer[, image]), written in blocks."""
    path = folder / f"{name}.tsv"
    picture = tiny_png() if image else None
    header = ["index", "question", "A", "B", "C", "D", "answer"] + (["image"] if image else [])
    with path.open("w", encoding="utf-8") as out:
        out.write("\t".join(header) + "\n")
        block: list[str] = []
        for i in range(rows):
            cells = [str(i), f"Which colour is item {i}?", "red", "green", "blue", "grey", "ABCD"[i % 4]]
            if picture is not None:
                cells.append(picture)
            block.append("\t".join(cells))
            if len(block) == 10000:
                out.write("\n".join(block) + "\n")
                block.clear()
        if block:
            out.write("\n".join(block) + "\n")
    return path


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MiB, exit code) of one `vlmkit run` process."""
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "vlmkit", *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - began
    if proc.returncode not in (0,):
        sys.stderr.write(stderr.decode(errors="replace")[-2000:])
    return wall, usage.ru_maxrss / 1024, proc.returncode


def measure(rows: int, args: argparse.Namespace, urls: list[str], tmp: Path) -> str:
    name = f"scale_{rows}{'_img' if args.image else ''}"
    lmu = tmp / "lmu"
    lmu.mkdir(exist_ok=True)
    write_tsv(lmu, name, rows, args.image)
    env = {**os.environ, "LMUData": str(lmu), "OMP_NUM_THREADS": "1"}
    work = tmp / f"work_{name}"
    base = ["run", "--model", "served", "--api-base", ",".join(urls), "--data", name, "--nproc", str(args.nproc),
            "--work-dir", str(work)]
    if args.shards <= 1:
        wall, rss, code = run_once(base, env)
        how = "one process"
    else:
        walls, peaks = [], []
        for i in range(args.shards):
            wall, rss, code = run_once([*base, "--shard", f"{i}/{args.shards}"], env)
            walls.append(wall)
            peaks.append(rss)
        wall_merge, rss_merge, code = run_once([*base, "--merge"], env)
        wall, rss = sum(walls) + wall_merge, max(*peaks, rss_merge)
        how = f"{args.shards} shards + merge (largest RSS of any)"
    return (f"{rows:>9,} rows  {wall:8.1f} s  {wall / rows * 1e3:6.3f} ms/row  peak RSS {rss:7.0f} MiB  exit {code}"
            f"  ({how}, {len(urls)} server{'s' if len(urls) > 1 else ''}{', image rows' if args.image else ''})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--image", action="store_true", help="every row carries the same small picture")
    parser.add_argument("--nproc", type=int, default=8)
    parser.add_argument("--shards", type=int, default=1, help="run as N --shard processes, then --merge")
    parser.add_argument("--servers", type=int, default=1, help="mock servers behind --api-base A,B,...")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench_scale_") as folder:
        urls = [stack.enter_context(running_server("--tokens", "4")) for _ in range(args.servers)]
        for rows in args.rows:
            print(measure(rows, args, urls, Path(folder)), flush=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
