"""`vlmkit perf` against a real vLLM server (issue 29): the server's own prefix-cache hit rate rises with
`--prefix-share`, and `--slo ... --search-rate` ends on a rate. Runs tools/check_vllm_perf.py, which serves the
shipped demo model with vLLM and says what held.

It needs an interpreter with vLLM: the test-only environment variable VLMKIT_TEST_VLLM_PYTHON (e.g.
/tmp/vllm-venv/bin/python; README "Checking against a real vLLM"). Without one it is skipped and `pytest -rs` prints
why; the default suite (and CI) skip it: vLLM is a 3.4 GB install and takes minutes to start on a CPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PYTHON_VAR = "VLMKIT_TEST_VLLM_PYTHON"  # test-only: an interpreter with vLLM installed


def _vllm_python() -> str:
    named = os.environ.get(PYTHON_VAR)
    if not named:
        pytest.skip(f"no vLLM to test against: {PYTHON_VAR} names no interpreter with vLLM installed")
    probe = subprocess.run([named, "-c", "import importlib.util as u; raise SystemExit(u.find_spec('vllm') is None)"],
                           capture_output=True, timeout=120, check=False)
    if probe.returncode != 0:
        pytest.skip(f"{PYTHON_VAR}={named} cannot import vllm")
    return named


def test_prefix_cache_hits_rise_and_the_slo_search_converges(tmp_path: Path) -> None:
    python = _vllm_python()
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "check_vllm_perf.py"), "--vllm-python", python,
                           "--requests", "40", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=1800, check=False, cwd=ROOT)
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-2000:]
    assert "[ok] the server's prefix-cache hit rate rises with --prefix-share" in out
    assert "[ok] the SLO search" in out and "ends on a rate" in out
    # the files the claims were read from are there: three prefix runs and the search, each with its summary
    for name in ("prefix_0", "prefix_0.8", "prefix_1", "slo_search"):
        assert (tmp_path / name / "perf_summary.json").exists(), name
