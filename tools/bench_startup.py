"""How long `vlmkit --help` and `vlmkit list ...` take from a cold interpreter (median of several runs).

    python tools/bench_startup.py [--repeats 7]

Each command runs as a fresh process, so the figure includes interpreter start-up and every import it triggers.
It also reports whether torch was imported (it must not be, until a local model is used).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = (["--help"], ["list", "datasets"], ["list", "models"])


def time_command(args: list[str], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "vlmkit.cli", *args], check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def torch_imported(args: list[str]) -> bool:
    code = (
        "import sys, contextlib, io\n"
        "from vlmkit.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main(sys.argv[1:])\n"
        "    except SystemExit: pass\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True).stdout
    return out.strip().endswith("True")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    for command in COMMANDS:
        seconds = time_command(command, args.repeats)
        print(f"vlmkit {' '.join(command):<15} median {seconds:.3f} s  torch imported: {torch_imported(command)}")


if __name__ == "__main__":
    main()
