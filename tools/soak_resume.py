"""Soak test of `vlmkit run`'s journal: faults, SIGKILL at random moments, resume; nothing lost, nothing asked twice.

    python tools/soak_resume.py                       # 2,000 samples, 20% faults, 10 kills
    python tools/soak_resume.py --rows 300 --kills 3  # a quick look

An in-process OpenAI-compatible server answers each prompt with a letter derived from the prompt's text (so an
answer never depends on timing) and fails a fraction of requests on purpose: 429 with Retry-After, 500, a dropped
connection, a body cut short, and a reply slower than the client's --timeout. `vlmkit run` (the real command, as
a subprocess) is killed with SIGKILL after a random number of newly journalled answers, `--kills` times, then run
to the end (again while any row still holds an error). A reference run of the same data on a fault-free server
gives the uninterrupted result.

It prints: predictions present (goal: every row), samples asked again after being journalled (goal 0), whether
the score and every prediction equal the uninterrupted run's (goal: identical), and errors scored as answers
(goal 0: a fault's text never becomes a prediction, and no row ends with an error).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
from PIL import Image

import vlmkit

FAULTS = ("429", "500", "drop", "truncate", "timeout")
FAULT_TEXT = "injected fault"  # the body of every failed reply: it must never become a prediction
COLOURS = ["red", "green", "blue", "yellow", "purple", "orange", "black", "white"]


# -- data ----------------------------------------------------------------------------------------------------------
def write_dataset(path: Path, rows: int, seed: int) -> None:
    """An MCQ TSV of `rows` rows, each with its own small PNG and a question text no other row has."""
    rng = random.Random(seed)
    records = []
    for i in range(rows):
        colour = rng.choice(COLOURS)
        buffer = io.BytesIO()
        Image.new("RGB", (8, 8), colour).save(buffer, format="PNG")
        options = rng.sample(COLOURS, 4)
        if colour not in options:
            options[rng.randrange(4)] = colour
        records.append({
            "index": i, "image": vlmkit.bytes_to_b64(buffer.getvalue()),
            "question": f"Item {i}: which colour fills the picture?",
            "A": options[0], "B": options[1], "C": options[2], "D": options[3],
            "answer": "ABCD"[options.index(colour)], "category": f"c{i % 5}",
        })
    pd.DataFrame(records).to_csv(path, sep="\t", index=False)


def answer_for(text: str) -> str:
    """The server's answer: a letter chosen by the prompt's text, the same on every attempt and in every run."""
    return "The answer is " + "ABCD"[hashlib.sha256(text.encode()).digest()[0] % 4] + "."


# -- the server ----------------------------------------------------------------------------------------------------
@dataclass
class ServerLog:
    fault_rate: float
    timeout_s: float
    seed: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    segment: int = 0
    asked: list[tuple[int, str]] = field(default_factory=list)  # (segment, prompt text) of every request
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULTS, 0))
    requests: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def draw(self) -> str | None:
        with self.lock:
            self.requests += 1
            if self.rng.random() >= self.fault_rate:
                return None
            fault = self.rng.choice(FAULTS)
            self.faults[fault] += 1
            return fault


def prompt_text(body: dict[str, Any]) -> str:
    parts = body["messages"][-1]["content"]
    if isinstance(parts, str):
        return parts
    return "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")


def make_handler(log: ServerLog) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None,
                  cut: bool = False) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if cut:  # promise the whole body, send half of it, hang up
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, {"object": "list", "data": [{"id": "soak-model", "object": "model"}]})

        def do_POST(self) -> None:
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                text = prompt_text(body)
            except (ValueError, KeyError, IndexError, TypeError):  # a body cut short by a killed client
                return self._send(400, {"error": {"message": "unreadable request"}})
            with log.lock:
                log.asked.append((log.segment, text))
            fault = log.draw()
            error = {"error": {"message": FAULT_TEXT}}
            if fault == "429":
                return self._send(429, error, {"Retry-After": "0.2"})
            if fault == "500":
                return self._send(500, error)
            if fault == "drop":
                self.close_connection = True
                return
            if fault == "timeout":
                time.sleep(log.timeout_s + 0.5)
                return self._send(500, error)  # too late: the client has given up on this attempt
            reply = {
                "id": "soak", "object": "chat.completion", "model": "soak-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer_for(text)},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
            if fault == "truncate":
                return self._send(200, reply, cut=True)
            self._send(200, reply)

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout fault) or was killed closes its socket mid-reply: expected here."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Server:
    def __init__(self, log: ServerLog) -> None:
        self.log = log
        self.httpd = _QuietServer(("127.0.0.1", 0), make_handler(log))
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# -- running vlmkit ------------------------------------------------------------------------------------------------
def vlmkit_command(data: Path, base_url: str, work_dir: Path, lmu: Path, args: argparse.Namespace) -> list[str]:
    return [sys.executable, "-m", "vlmkit.cli", "run", "--data", str(data), "--model", "soak-model",
            "--api-base", base_url, "--nproc", str(args.nproc), "--work-dir", str(work_dir), "--lmudata", str(lmu),
            "--timeout", str(args.timeout), "--retries", str(args.retries)]


def journal_lines(path: Path) -> int:
    try:
        with open(path, "rb") as handle:
            return sum(1 for _ in handle)
    except FileNotFoundError:
        return 0


def journalled_texts(run_dir: Path) -> set[str]:
    """The prompt texts of every successful record in the run's journals."""
    texts = set()
    for path in run_dir.glob("journal*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # the line a kill cut short
            if isinstance(record, dict) and "prompt" in record and record.get("error") is None:
                content = record["prompt"][-1]["content"]
                texts.add("\n".join(p["value"] for p in content if p["type"] == "text"))
    return texts


def run_killed(cmd: list[str], journal: Path, rng: random.Random, env: dict[str, str]) -> bool:
    """Start the run and SIGKILL it once `rng` more answers are journalled; False when it finished first."""
    start_lines = journal_lines(journal)
    target = start_lines + rng.randint(20, 180)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    while proc.poll() is None:
        if journal_lines(journal) >= target:
            time.sleep(rng.uniform(0.0, 0.05))  # land anywhere, mid-write included
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.005)
    return False


def run_to_end(cmd: list[str], env: dict[str, str]) -> int:
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True).returncode


def read_outcome(run_dir: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    results = json.loads((run_dir / "results.json").read_text())
    records = {}
    for line in (run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records[str(record["index"])] = record
    return results, records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--fault-rate", type=float, default=0.2)
    parser.add_argument("--nproc", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=1.0, help="the client's --timeout (a 'timeout' fault waits longer)")
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep the files (default: a temp dir)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        lmu = root / "LMUData"
        lmu.mkdir(parents=True, exist_ok=True)
        data = lmu / "SoakMCQ.tsv"
        write_dataset(data, args.rows, args.seed)
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL")}

        # The uninterrupted run: the same data, a server without faults.
        clean = Server(ServerLog(fault_rate=0.0, timeout_s=args.timeout, seed=args.seed))
        began = time.perf_counter()
        code = run_to_end(vlmkit_command(data, clean.base_url, root / "reference", lmu, args), env)
        reference_s = time.perf_counter() - began
        clean.close()
        if code != 0:
            print(f"the reference run failed (exit {code})")
            return 1
        ref_results, ref_records = read_outcome(root / "reference" / "soak-model" / "SoakMCQ")

        # The soak: faults, kills, resumes.
        log = ServerLog(fault_rate=args.fault_rate, timeout_s=args.timeout, seed=args.seed + 1)
        server = Server(log)
        run_dir = root / "soak" / "soak-model" / "SoakMCQ"
        cmd = vlmkit_command(data, server.base_url, root / "soak", lmu, args)
        rng = random.Random(args.seed)
        journalled_before: dict[int, set[str]] = {}
        killed = 0
        began = time.perf_counter()
        for segment in range(args.kills):
            log.segment = segment
            journalled_before[segment] = journalled_texts(run_dir)
            killed += run_killed(cmd, run_dir / "journal.jsonl", rng, env)
        reruns = 0
        while True:
            log.segment = args.kills + reruns
            journalled_before[log.segment] = journalled_texts(run_dir)
            code = run_to_end(cmd, env)
            reruns += 1
            results, records = read_outcome(run_dir)
            if results["counts"]["inference_errors"] == 0 or reruns >= 5:
                break
        soak_s = time.perf_counter() - began
        server.close()

    asked_again = sum(1 for segment, text in log.asked if text in journalled_before.get(segment, set()))
    present = sum(1 for r in records.values() if r.get("error") is None and r.get("prediction") is not None)
    differ = sum(1 for k, r in ref_records.items() if records.get(k, {}).get("prediction") != r["prediction"])
    ref_score = ref_results["scoring"]["primary_metric"]
    score = (results.get("scoring") or {}).get("primary_metric")
    faults_as_answers = sum(1 for r in records.values() if FAULT_TEXT in str(r.get("prediction")))
    rows_with_errors = sum(1 for r in records.values() if r.get("error") is not None)

    print(f"rows {args.rows}, faults {args.fault_rate:.0%} of {log.requests} requests "
          f"({', '.join(f'{k} {v}' for k, v in log.faults.items())}), SIGKILL mid-run {killed} of {args.kills}, "
          f"final runs {reruns} (last exit {code})")
    print(f"predictions present: {present} / {args.rows}")
    print(f"samples asked again after being journalled: {asked_again}")
    print(f"score: {score['value'] if score else None} vs uninterrupted {ref_score['value']} "
          f"({'identical' if score == ref_score and differ == 0 else 'DIFFERENT'}; {differ} predictions differ)")
    print(f"errors scored as answers: {faults_as_answers} (rows still holding an error: {rows_with_errors})")
    print(f"time: reference {reference_s:.1f} s, soak {soak_s:.1f} s")
    ok = present == args.rows and asked_again == 0 and differ == 0 and score == ref_score and faults_as_answers == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
