"""Fixtures for perf tests: the mock streaming server (tools/mock_openai_server.py) in its own process, and a
small dataset object with the runner's dataset protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[3]
MOCK = ROOT / "tools" / "mock_openai_server.py"


@dataclass
class Mock:
    base_url: str
    record: Path
    proc: subprocess.Popen

    def bodies(self) -> list[dict[str, Any]]:
        """The bodies recorded so far; a line the server is still writing is left for the next call."""
        if not self.record.exists():
            return []
        text = self.record.read_text()
        return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]


def start_mock(tmp: Path, *args: str) -> Mock:
    record = tmp / f"bodies-{len(list(tmp.glob('bodies-*')))}.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(MOCK), "--port", "0", "--record", str(record), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"mock server did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return Mock(line.split()[-1] + "/v1", record, proc)


def stop_mock(mock: Mock) -> None:
    mock.proc.terminate()
    try:
        mock.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        mock.proc.kill()
        mock.proc.wait(timeout=10)
    for stream in (mock.proc.stdout, mock.proc.stderr):
        if stream:
            stream.close()


@pytest.fixture
def mock_server(tmp_path: Path) -> Iterator[Callable[..., Mock]]:
    """mock_server("--ttft-ms", "50", ...) -> a running mock server; all are stopped at teardown."""
    started: list[Mock] = []

    def start(*args: str) -> Mock:
        mock = start_mock(tmp_path, *args)
        started.append(mock)
        return mock

    yield start
    for mock in started:
        stop_mock(mock)


class ListDataset:
    """The runner's dataset protocol over a list of prompts (text, or parts) and optional per-row params."""

    def __init__(self, prompts: list[Any], params: list[dict[str, Any] | None] | None = None, name: str = "listed") -> None:
        self.name = name
        self.file_md5 = "0" * 32
        self.prompts = prompts
        self.params = params or [None] * len(prompts)
        self.data = pd.DataFrame({"index": list(range(len(prompts)))})

    def line(self, i: int) -> dict[str, Any]:
        return {"index": i}

    def build_prompt(self, line: dict[str, Any]) -> Any:
        prompt = self.prompts[line["index"]]
        return [{"type": "text", "value": prompt}] if isinstance(prompt, str) else prompt

    def generation_params(self, line: dict[str, Any]) -> dict[str, Any] | None:
        return self.params[line["index"]]

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "n_total": len(self.prompts)}
