"""`transformers serve` (a real third-party OpenAI-compatible server) on a local model directory, for tests.

A test that needs it is skipped only when `transformers serve` is not installed (no transformers CLI, or no
fastapi/uvicorn); a server that exits or never becomes healthy fails the test with the tail of its log.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

STARTUP_TIMEOUT_S = 90.0


def serve_executable() -> str | None:
    if importlib.util.find_spec("transformers") is None:
        return None
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
        return None
    beside = Path(sys.executable).parent / "transformers"
    return str(beside) if beside.is_file() else shutil.which("transformers")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tail(path: Path, n: int = 3000) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else "(no log)"


@contextmanager
def transformers_serve(model_dir: Path, workdir: Path, *, threads: int | None = None) -> Iterator[str]:
    """Serve `model_dir` on 127.0.0.1 (CPU, offline); yields the `/v1` base URL; terminated on exit.
    Requests must name the model by the served path, `str(model_dir)`."""
    exe = serve_executable()
    if exe is None:
        pytest.skip("`transformers serve` is unavailable (needs transformers with fastapi and uvicorn: transformers[serving])")
    cache = workdir / "hf_cache"
    cache.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log_path = workdir / "serve.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(cache))
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    command = [exe, "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"transformers serve exited with code {proc.returncode}:\n{_tail(log_path)}")
            try:
                if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve not healthy after {STARTUP_TIMEOUT_S:g} s:\n{_tail(log_path)}")
            time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
