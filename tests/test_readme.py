"""The README is the front door: its Python example runs as written, and CI installs with the README's commands."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_python_example_runs_as_written(tmp_path: Path):
    (block,) = re.findall(r"```python\n(.*?)```", README.split("### From Python", 1)[1].split("\n## ", 1)[0], re.S)
    env = {**os.environ, "LMUData": str(tmp_path / "lmu"), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()  # the run's own lines (which scorer, progress) come first
    (status,) = [line for line in lines if line.startswith("success ")]
    assert 0.0 <= float(status.split()[1]) <= 1.0
    (loaded,) = [line for line in lines if line.startswith("vlmkit-tiny vlmkit_demo_mcq ")]
    assert float(loaded.split()[2]) == float(status.split()[1])  # load_results read back the run's own figure
    assert "('B', " in lines[-1]  # the answer reader found B in "I think (B)"


def test_ci_installs_what_the_readme_says():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    setup = README.split("## Set up and run the main job", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    (command,) = [line for line in setup.splitlines() if line.strip() and not line.startswith("#")]  # one command
    steps = command.split(" && ")
    assert steps[0] == "python3 -m venv .venv" and steps[0] in ci
    assert steps[1] == ". .venv/bin/activate" and steps[1] in ci
    assert steps[2].startswith("pip install torch==2.13.0") and "pip install torch==2.13.0" in ci
    assert steps[3] == 'pip install -e ".[local,dev]"' and steps[3] in ci
    assert steps[4].startswith("vlmkit run ")
    tests = README.split("## Run the tests", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    assert tests.split("#", 1)[0].strip() in ci
