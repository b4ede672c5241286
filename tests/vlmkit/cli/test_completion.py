"""Shell completion (argcomplete) of the real `vlmkit` command: flags, catalog names after --data, registry names
after --model; nothing is imported for it unless the shell asks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("argcomplete")


def complete(line: str, tmp_path: Path) -> list[str]:
    out = tmp_path / "completions.txt"
    env = {**os.environ, "COMP_LINE": line, "COMP_POINT": str(len(line)), "_ARGCOMPLETE": "1",
           "_ARGCOMPLETE_STDOUT_FILENAME": str(out)}
    subprocess.run([sys.executable, "-m", "vlmkit"], env=env, capture_output=True, timeout=120, check=True)
    return sorted(out.read_text().replace("\v", "\n").split())


def test_flags_benchmarks_and_models_complete(tmp_path: Path):
    assert complete("vlmkit run --dat", tmp_path) == ["--data", "--data-parallel", "--data-root"]
    assert complete("vlmkit run --data MMBench_DEV_E", tmp_path) == ["MMBench_DEV_EN", "MMBench_DEV_EN_V11"]
    assert complete("vlmkit run --data MMLU", tmp_path) == ["MMLU", "MMLU-Pro"]  # the text-only table too
    assert "qwen2.5-vl" in complete("vlmkit run --data POPE --model qwen", tmp_path)
    assert complete("vlmkit re", tmp_path) == ["report"]


def test_nothing_is_imported_for_completion_when_the_shell_does_not_ask():
    code = "import sys; from vlmkit.cli.main import main; main(['list', 'models']); print('argcomplete' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "_ARGCOMPLETE"})
    assert out.stdout.strip().splitlines()[-1] == "False"
