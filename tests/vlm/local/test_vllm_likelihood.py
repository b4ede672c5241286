"""Likelihood scoring on vLLM's offline engine (vlm.local.vllm_engine / vlm.local.vllm_likelihood; issue 28): the demo
MCQ's rows scored by vLLM equal the transformers path's on the shipped vlmkit-tiny, letter by letter.

vLLM runs in an interpreter that has it (this one, or the one VLMKIT_TEST_VLLM_PYTHON names, e.g.
/tmp/vllm-venv/bin/python; vlmkit reaches it through PYTHONPATH), started once for the module: a script scores the
rows and writes its figures to a JSON file. Without such an interpreter the module is skipped and `pytest -rs` prints
why. The engine start takes a minute or more on a shared CPU. The transformers side runs here (HFVisionModel on the
same weights; its own figures are checked against plain forward passes in tests/vlm/local/test_likelihood.py).

What vLLM 0.32 needs for the shipped LLaVA weights is done as tests/vlm/local/test_vllm_backend.py does it (a copy with
the CLIP tower's keys renamed, a stand-in for the one torchvision module its LLaVA loader imports)."""

from __future__ import annotations

import json
import os
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.vlm.local.test_vllm_backend import NO_VLLM, ROOT, TINY, VLLM_PYTHON, _check_vllm_tool

pytestmark = pytest.mark.skipif(VLLM_PYTHON is None, reason=f"--backend vllm likelihood: {NO_VLLM}")

ROWS = 24  # demo MCQ rows scored in the letter mode
CONTINUATION_ROWS = 8
TOL = 2e-3  # float32 on CPU: vLLM's kernels and transformers' differ by rounding only

SCRIPT = '''
import json, sys

def main():
    from vlm.local.vllm_engine import VLLMModel
    task = json.load(open(sys.argv[1]))
    model = VLLMModel(task["weights"], max_model_len=512)
    try:
        def plain(results):
            return [{"error": repr(r)} if isinstance(r, BaseException) else r for r in results]
        letters = plain(model.option_logprobs_batch(task["msgs"], task["letters"], task["dataset"]))
        n = task["continuation_rows"]
        texts = plain(model.continuation_logprobs_batch(task["msgs"][:n], task["texts"][:n], task["dataset"]))
    finally:
        model.close()
    json.dump({"letters": letters, "texts": texts}, open(sys.argv[2], "w"))

if __name__ == "__main__":
    main()
'''


def _demo_rows(root: Path) -> tuple[list[Any], list[list[str]], list[list[str]]]:
    import vlmkit

    dataset = vlmkit.build_dataset("vlmkit_demo_mcq", root=root, progress=False)
    msgs, letters, texts = [], [], []
    for pos in range(ROWS):
        line = dataset.data.iloc[pos]
        filled = [L for L in string.ascii_uppercase if L in line and isinstance(line[L], str) and line[L].strip()]
        msgs.append(dataset.build_prompt(pos))
        letters.append(filled)
        texts.append([str(line[L]) for L in filled])
    return msgs, letters, texts


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both backends' figures on the same rows: vLLM's from one engine start, the transformers path's here."""
    import torch

    from vlm.local.generic import HFVisionModel

    root = tmp_path_factory.mktemp("vllm_likelihood")
    msgs, letters, texts = _demo_rows(root / "LMUData")
    tool = _check_vllm_tool()
    weights, _ = tool.served_copy(TINY, root / "weights")
    shim = root / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(tool.SHIM)
    (root / "score.py").write_text(SCRIPT)
    task = {"weights": str(weights), "msgs": msgs, "letters": letters, "texts": texts, "dataset": "vlmkit_demo_mcq",
            "continuation_rows": CONTINUATION_ROWS}
    (root / "task.json").write_text(json.dumps(task))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(ROOT)])}
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    run = subprocess.run([VLLM_PYTHON, str(root / "score.py"), str(root / "task.json"), str(root / "out.json")],
                         capture_output=True, text=True, cwd=root, env=env, timeout=1500, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    vllm_figures = json.loads((root / "out.json").read_text())

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    model = HFVisionModel(str(TINY), batch_size=8)
    try:
        hf_letters = model.option_logprobs_batch(msgs, letters, "vlmkit_demo_mcq")
        hf_texts = model.continuation_logprobs_batch(msgs[:CONTINUATION_ROWS], texts[:CONTINUATION_ROWS],
                                                     "vlmkit_demo_mcq")
    finally:
        model.close()
        torch.set_num_threads(before)
    return {"letters": letters, "vllm": vllm_figures, "hf_letters": hf_letters, "hf_texts": hf_texts}


def _argmax(scores: dict[str, float], order: list[str]) -> str:
    best = order[0]
    for letter in order[1:]:
        if scores[letter] > scores[best]:
            best = letter
    return best


def test_vllm_chooses_the_letters_the_transformers_path_chooses(scored: dict[str, Any]) -> None:
    got, expected = scored["vllm"]["letters"], scored["hf_letters"]
    assert len(got) == ROWS and all("error" not in row for row in got), got[:3]
    differ = []
    for order, mine, theirs in zip(scored["letters"], got, expected):
        assert not isinstance(theirs, BaseException), theirs
        if _argmax(mine, order) != _argmax(theirs, order):
            differ.append((order, mine, theirs))
        for letter in order:
            assert mine[letter] == pytest.approx(theirs[letter], abs=TOL)
    assert not differ, differ[:3]


def test_vllm_continuations_equal_the_transformers_path(scored: dict[str, Any]) -> None:
    got, expected = scored["vllm"]["texts"], scored["hf_texts"]
    assert len(got) == CONTINUATION_ROWS and all("error" not in row for row in got), got[:3]
    for mine, theirs in zip(got, expected):
        assert [n for _, n in mine] == [n for _, n in theirs]  # the same answer tokens
        assert [lp for lp, _ in mine] == pytest.approx([lp for lp, _ in theirs], abs=TOL)
