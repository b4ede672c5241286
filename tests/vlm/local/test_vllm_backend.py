"""`--backend vllm` (vlm.local.vllm_engine): the answer budget it shares with the transformers path, what it refuses in
one line, and, where an interpreter with vLLM is found, the demo MCQ set through the CLI on vLLM's offline engine
with every prediction equal to the transformers path's.

The end-to-end test runs with the current interpreter when `import vllm` works here, else with the one named by the
test-only environment variable VLMKIT_TEST_VLLM_PYTHON (e.g. /tmp/vllm-venv/bin/python, an environment holding vLLM
and vlmkit's dependencies; vlmkit itself reaches it through PYTHONPATH); with neither it is skipped, and
`pytest -rs` prints why. It takes minutes on a CPU build (engine start), so the default suite skips it.
What vLLM 0.32 needs for the shipped LLaVA weights is done here, as tools/check_vllm.py does it, not in vlmkit:
a copy of the weights with the CLIP tower's keys renamed (`served_copy`), and a stand-in for the one torchvision
module its LLaVA loader imports where torchvision is not installed (`SHIM`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from vlm.local.answer_budget import answer_budget, folder_checkpoint_values
from vlm.local.decoding import DEFAULT_MAX_NEW_TOKENS
from vlmkit.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
TINY = ROOT / "vlm" / "weights" / "vlmkit_tiny"
DATASET = "vlmkit_demo_mcq"
VLLM_TARGET = "vlm.local.vllm_engine:VLLMModel"
PYTHON_VAR = "VLMKIT_TEST_VLLM_PYTHON"  # test-only: an interpreter with vLLM installed


def _vllm_python() -> tuple[str | None, str]:
    """(an interpreter that can import vllm, or None; why not)."""
    if importlib.util.find_spec("vllm") is not None:
        return sys.executable, ""
    named = os.environ.get(PYTHON_VAR)
    if not named:
        return None, f"vLLM is not installed for {sys.executable} and {PYTHON_VAR} names no interpreter that has it"
    try:
        probe = subprocess.run([named, "-c", "import importlib.util as u; raise SystemExit(u.find_spec('vllm') is None)"],
                               capture_output=True, timeout=120, check=False)
    except OSError as exc:
        return None, f"{PYTHON_VAR}={named} cannot run ({exc.strerror or exc})"
    if probe.returncode != 0:
        return None, f"{PYTHON_VAR}={named} cannot import vllm"
    return named, ""


VLLM_PYTHON, NO_VLLM = _vllm_python()
needs_vllm = pytest.mark.skipif(VLLM_PYTHON is None, reason=f"--backend vllm end to end: {NO_VLLM}")


def _check_vllm_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_vllm", ROOT / "tools" / "check_vllm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# -- no vLLM needed ---------------------------------------------------------------------------------------------


def test_answer_budget_is_the_users_then_the_presets_then_the_checkpoints():
    checkpoint = folder_checkpoint_values(TINY)
    assert checkpoint["max_new_tokens"] == 8  # vlmkit_tiny's generation_config.json
    assert answer_budget(None, None, checkpoint) == (8, "checkpoint")
    assert answer_budget(None, 64, checkpoint) == (64, "preset")
    assert answer_budget(3, 64, checkpoint) == (3, "user")
    assert answer_budget(None, None, {"max_new_tokens": 0, "max_length": 20}) == (DEFAULT_MAX_NEW_TOKENS, "default")
    assert folder_checkpoint_values(ROOT / "vlm") == {}  # no generation_config.json


def test_a_torchrun_rank_gpu_is_refused_in_one_line_before_anything_loads():
    from vlm.local.vllm_engine import VLLMModel

    with pytest.raises(ConfigError, match=r"cuda:1.*--tensor-parallel N.*--data-parallel-size") as caught:
        VLLMModel("/no/such/model", device="cuda:1")
    assert "\n" not in str(caught.value)


def test_missing_vllm_stops_the_cli_in_one_line_naming_the_install_command(tmp_path):
    # sys.modules["vllm"] = None makes `import vllm` fail whether or not vLLM is installed for this interpreter
    code = "import sys; sys.modules['vllm'] = None; from vlmkit.cli.main import main; raise SystemExit(main(sys.argv[1:]))"
    work = tmp_path / "work"
    proc = subprocess.run(
        [sys.executable, "-c", code, "run", "--data", DATASET, "--model", "vlmkit-tiny", "--backend", "vllm",
         "--work-dir", str(work), "--lmudata", str(tmp_path / "lmu")],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("vlmkit: error: --backend vllm needs vLLM")
    assert "`pip install vllm`" in lines[0] and 'README section "--backend vllm"' in lines[0]
    assert not work.exists()  # stopped before anything was written


# -- vLLM's offline engine against the transformers path ----------------------------------------------------------


def _run_cli(python: str, extra: list[str], work: Path, lmudata: Path, env: dict[str, str] | None = None
             ) -> tuple[subprocess.CompletedProcess, float]:
    cmd = [python, "-m", "vlmkit.cli", "run", "--data", DATASET, "--work-dir", str(work), "--lmudata", str(lmudata),
           *extra]
    began = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=1800, check=False)
    return proc, time.monotonic() - began


def _records(work: Path) -> dict[str, dict]:
    path = work / "vlmkit-tiny" / DATASET / "predictions.jsonl"
    return {str(r["index"]): r for r in map(json.loads, path.read_text().splitlines()) if r}


@needs_vllm
def test_vllm_backend_predicts_what_the_transformers_path_predicts(tmp_path):
    tool = _check_vllm_tool()
    weights, renamed = tool.served_copy(TINY, tmp_path / "weights")  # vLLM 0.32 wants vision_tower.vision_model.*
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(tool.SHIM)
    lmudata = tmp_path / "lmu"

    reference, tf_seconds = _run_cli(sys.executable, ["--model", "vlmkit-tiny"], tmp_path / "tf", lmudata)
    assert reference.returncode == 0, reference.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(ROOT)])}
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache on a CPU build (vLLM's default is far more)
    run, vllm_seconds = _run_cli(
        VLLM_PYTHON, ["--model", "vlmkit-tiny", "--model-path", str(weights), "--backend", "vllm", "--batch-size", "32"],
        tmp_path / "vllm", lmudata, env,
    )
    assert run.returncode == 0, run.stderr[-3000:]

    expected, got = _records(tmp_path / "tf"), _records(tmp_path / "vllm")
    assert len(expected) == 180 and set(got) == set(expected)
    assert all(r["error"] is None for r in got.values())
    differ = {k: (expected[k]["prediction"], got[k]["prediction"]) for k in expected
              if expected[k]["prediction"] != got[k]["prediction"]}
    assert not differ, f"{len(differ)} predictions differ (transformers, vllm): {dict(list(differ.items())[:5])}"
    assert all(r["usage"]["input_tokens"] > 0 and r["usage"]["output_tokens"] > 0 for r in got.values())
    assert [r["usage"] for r in got.values()] == [expected[k]["usage"] for k in got]  # same prompt, same answer

    results = json.loads((tmp_path / "vllm" / "vlmkit-tiny" / DATASET / "results.json").read_text())
    settings = results["model"]["settings"]
    assert results["model"]["target"] == VLLM_TARGET and settings["backend"] == "vllm"
    assert settings["generation"] == {"passed": {"max_tokens": 8, "temperature": 0.0}, "max_new_tokens_source": "checkpoint"}
    assert settings["engine"]["dtype"] == "float32" and settings["batch_size"] == 32
    print(f"\n{DATASET}, 180 rows: transformers {tf_seconds:.0f} s, vLLM ({settings['vllm']}, {renamed} keys renamed) "
          f"{vllm_seconds:.0f} s including engine start")
