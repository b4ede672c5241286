"""Bytes of memory `vlmkit perf` keeps per request, against tools/mock_openai_server.py on 127.0.0.1 (no delays).

    python tools/bench_perf_memory.py [--short 5000] [--long 40000] [--concurrency 32] [--tokens 16] [--repo DIR]

Runs `vlmkit perf` (the CLI, each run in a fresh process) twice on one level: `--short` and `--long` requests,
closed loop, then open loop (a request rate the client can just keep up with is not needed: a fixed rate far above
what the instant server takes is capped by --max-concurrency), and reads each run's peak RSS (the child's
ru_maxrss). bytes/request = (peak RSS of the long run - peak RSS of the short run) / (long - short): what the run
keeps per request, free of the start-up's fixed cost. Flat memory reads as a few bytes (noise) against ~2 KB when
every record was held. `--repo DIR` runs the vlmkit of another checkout (e.g. an export of an older commit) with
this one's mock server, for before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_mock(tokens: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "mock_openai_server.py"), "--port", "0", "--tokens", str(tokens),
         "--ttft-ms", "0", "--itl-ms", "0"],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("listening on "):
        proc.kill()
        raise SystemExit(f"the mock server did not start: {line!r}")
    return proc, line.split()[-1] + "/v1"


def peak_rss(repo: Path, args: list[str]) -> int:
    """The peak RSS (bytes) of one `vlmkit perf` run in its own process."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.Popen([sys.executable, "-m", "vlmkit.cli.main", "perf", *args], cwd=repo, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"vlmkit perf failed ({proc.returncode}): {err[-2000:]}")
    return usage.ru_maxrss * 1024  # KiB on Linux


def measure(repo: Path, url: str, data: Path, out: Path, mode: list[str], short: int, long: int) -> dict[str, float]:
    base = ["--model", "m", "--api-base", url, "--data", str(data), "--no-plots", *mode]
    rss = {n: peak_rss(repo, [*base, "--num-requests", str(n), "--out", str(out / f"{mode[0][2:]}-{n}")])
           for n in (short, long)}
    return {"short_mb": rss[short] / 1e6, "long_mb": rss[long] / 1e6,
            "bytes_per_request": (rss[long] - rss[short]) / (long - short)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", type=int, default=5000)
    parser.add_argument("--long", type=int, default=40000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--repo", type=Path, default=ROOT, help="the checkout whose vlmkit is measured")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    mock, url = start_mock(args.tokens)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "q.jsonl"
            data.write_text("".join(json.dumps({"question": f"question {i}", "answer": "a"}) + "\n" for i in range(200)))
            results = {
                "closed": measure(args.repo, url, data, Path(tmp), ["--concurrency", str(args.concurrency)],
                                  args.short, args.long),
                "open": measure(args.repo, url, data, Path(tmp),
                                ["--request-rate", "100000", "--max-concurrency", str(args.concurrency)],
                                args.short, args.long),
            }
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    print(f"vlmkit perf memory ({args.repo}), {args.tokens} tokens a request, concurrency {args.concurrency}:")
    for mode, r in results.items():
        print(f"  {mode:6s} loop: peak RSS {r['short_mb']:.1f} MB at {args.short} requests, {r['long_mb']:.1f} MB at "
              f"{args.long}: {r['bytes_per_request']:.0f} bytes/request")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
