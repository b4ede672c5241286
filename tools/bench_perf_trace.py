"""How closely `vlmkit perf --trace` keeps a trace's schedule: drift of the sent times from the trace's, measured.

    python tools/bench_perf_trace.py --requests 2000 --rate 200 --speed 1 4

Writes a Mooncake-style trace (Poisson timestamps at --rate requests/s, seeded; 64-token prompts, 8-token answers,
shared hash ids), serves it with tools/mock_openai_server.py on 127.0.0.1 (no delays: the server is never the
reason a request goes late), replays it with `vlmkit perf --trace` (the CLI, in its own process) at each --speed,
and prints the level's drift (p50/p99/max of send time minus the trace's time) from perf_summary.json, and the
largest gap between consecutive sends against the trace's, from perf_requests.jsonl. This is the tolerance the
tests leave to the machine: they check the schedule's order and due times, not these figures.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from mock_openai_server import running_server  # noqa: E402


def write_trace(path: Path, requests: int, rate: float, seed: int) -> None:
    rng = random.Random(seed)
    t = 0.0
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(requests):
            handle.write(json.dumps({"timestamp": round(t * 1000, 3), "input_length": 64, "output_length": 8,
                                     "hash_ids": [i % 7, 1000 + i]}) + "\n")
            t += rng.expovariate(rate)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0, help="the trace's mean request rate (req/s at speed 1)")
    parser.add_argument("--speed", type=float, nargs="+", default=[1.0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_server("--tokens", "8") as base:
        trace = Path(tmp) / "trace.jsonl"
        write_trace(trace, args.requests, args.rate, args.seed)
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "vlmkit.cli.main", "perf", "--model", "m", "--api-base", base, "--trace",
               str(trace), "--trace-speed", *map(str, args.speed), "--trace-block-tokens", "32", "--ignore-eos",
               "--out", str(out), "--no-plots"]
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        summary = json.loads((out / "perf_summary.json").read_text())
        lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    print(f"trace replay drift, {args.requests} requests at {args.rate:g}/s (x speed), instant mock server:")
    print(f"{'level':>12} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'worst gap error ms':>19}")
    for level in summary["levels"]:
        mine = sorted((x for x in lines if x["level"] == level["label"] and not x["warmup"]), key=lambda x: x["n"])
        gaps = [abs((b["start_ms"] - a["start_ms"]) - (b["sched_ms"] - a["sched_ms"])) for a, b in zip(mine, mine[1:])]
        d = level["trace"]["drift_ms"]
        print(f"{level['label']:>12} {level['request_rate']:8.1f} {d['median']:8.3f} {d['p99']:8.3f} {d['max']:8.3f} "
              f"{max(gaps, default=0.0):19.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
