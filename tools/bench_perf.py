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

`--evalscope PYTHON` also runs `evalscope perf` (installed in another environment, e.g. a venv under /tmp) in
scenarios 1 and 2 and reads its per-request figures from its benchmark_data.db. Load on the machine from other
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
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vlmkit.perf import PerfOptions, run_perf  # noqa: E402

MOCK = ROOT / "tools" / "mock_openai_server.py"
TRUE_MS = 20.0
_PIN = True  # pin the mock server and evalscope to their cores (--no-pin: leave placement to the OS)


def _pinned(core: int) -> Any:
    return (lambda: os.sched_setaffinity(0, {core})) if _PIN else None


@contextmanager
def mock_server(core: int, *args: str) -> Iterator[str]:
    """A mock server pinned to `core`; yields its /v1 base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(MOCK), "--port", "0", *args],
        stdout=subprocess.PIPE, text=True, preexec_fn=_pinned(core),
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("listening on "):
            raise RuntimeError(f"mock server did not start: {line!r}")
        yield line.split()[-1] + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()


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
    from vlmkit.openai_format import to_openai_messages
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
    parser.add_argument("--only", choices=("overhead", "fidelity", "payloads", "figures"), nargs="+", default=None)
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
    only = set(args.only or ("overhead", "fidelity", "payloads", "figures"))
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
