"""Helpers for the `vlmkit run` end-to-end tests: a small Y/N TSV and responders for tests.support.servers.FaultServer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.support.servers import Recorded, Reply, Responder, chat_reply


def chat_only(responder: Responder) -> Responder:
    """responder for chat completions; `GET .../models` (the runner's probe) answers 404, as a server without a
    model list does (the probe then lets the run go on)."""

    def answer(request: Recorded) -> Reply:
        if request.method == "GET":
            return Reply(404, {"error": {"message": "no such route"}})
        return responder(request)

    return answer


def chat_requests(requests: list[Recorded]) -> list[Recorded]:
    """The chat-completions requests among what a server received (not the probe, nor a stray request from
    another process that reached a recycled port)."""
    return [r for r in requests if r.method == "POST" and r.path.endswith("/chat/completions")
            and isinstance(r.body, dict) and "messages" in r.body]


def probes(requests: list[Recorded]) -> list[Recorded]:
    """The runner's probes (`GET .../models`) among what a server received."""
    return [r for r in requests if r.method == "GET" and r.path.endswith("/models")]


COLOURS = ("red", "blue")


def write_yorn_tsv(path: Path, n: int = 10) -> Path:
    """n yes/no questions about solid-colour pictures; each question names its row (`[3] Is the picture red?`)."""
    rows = [
        {"index": i, "image": b64(image_bytes(COLOURS[i % 2])), "question": f"[{i}] Is the picture {COLOURS[i % 2]}?",
         "answer": "Yes" if i % 3 else "No", "category": "colour"}
        for i in range(n)
    ]
    return write_tsv(path, rows)


def question_of(request: Recorded) -> str:
    """The text of the last user turn of a chat-completions request (a prefill, an assistant message, may follow it)."""
    content = next(m for m in reversed(request.body["messages"]) if m["role"] == "user")["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if p.get("type") == "text")


def row_of(request: Recorded) -> int:
    return int(re.search(r"\[(\d+)\]", question_of(request)).group(1))


def answer_yes(request: Recorded) -> Reply:
    return chat_reply("Yes")


def files_holding(text: str, *folders: Path) -> list[Path]:
    """Every file under the folders whose bytes contain text."""
    needle = text.encode()
    return [p for folder in folders for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def vlmkit_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m vlmkit.cli ARGS` in a subprocess (stdout and stderr captured as text)."""
    return subprocess.run([sys.executable, "-m", "vlmkit.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def stderr_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def run_served(api_base: str, work: Path, lmu: Path, *extra: str, data: str = "MyYN") -> subprocess.CompletedProcess:
    """`vlmkit run --data DATA --model served --api-base URL --work-dir WORK` with $LMUData at lmu."""
    return vlmkit_cli("run", "--data", data, "--model", "served", "--api-base", api_base, "--work-dir", str(work),
                      *extra, env={"LMUData": str(lmu)})


def ctrl_c_as_a_terminal_gives_it() -> None:
    """preexec_fn for a child the test sends SIGINT: the default disposition, so the child's Python raises
    KeyboardInterrupt as under a terminal. A process started in the background by a non-interactive shell (`cmd &`, as
    a CI job may start pytest) inherits SIGINT ignored, and Python keeps an inherited SIG_IGN."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
