"""The shipped demo: `vlmkit-tiny` (trained by tools/train_demo_model.py, weights in vlm/weights/vlmkit_tiny) on the
shipped demo benchmark, through exactly the paths a user runs: the CLI, the registry, from_pretrained, the
dataset's VLMEvalKit prompts and scoring. If image preprocessing, prompts or scoring break, these scores fall.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = ROOT / "vlm" / "weights" / "vlmkit_tiny"
DEMOS = ("vlmkit_demo_mcq", "vlmkit_demo_yorn", "vlmkit_demo_vqa")
# The floors for the shipped weights (chance: MCQ 0.25, Y/N 0.50; the README and the model card give the scores).
FLOORS = {"vlmkit_demo_mcq": 0.80, "vlmkit_demo_yorn": 0.85, "vlmkit_demo_vqa": 0.70}
# With every picture grey the scores must stay near chance: the scores above come from the pictures.
BLANK_CEILINGS = {"vlmkit_demo_mcq": 0.35, "vlmkit_demo_yorn": 0.60, "vlmkit_demo_vqa": 0.40}


def vlmkit(*args: str, lmu_root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, LMUData=str(lmu_root), OMP_NUM_THREADS="2")
    return subprocess.run([sys.executable, "-m", "vlmkit.cli", *args], capture_output=True, text=True, env=env, timeout=600)


def overall(work: Path, model: str, dataset: str) -> float:
    """The headline accuracy of a run as a fraction. results.json keeps VLMEvalKit's scales: MCQ accuracy is a
    fraction, Y/N and VQA accuracies are percentages."""
    results = json.loads((work / model / dataset / "results.json").read_text())
    value = results["scoring"]["metrics"]["Overall"]
    return value if results["scoring"]["scorer"].startswith("mcq") else value / 100


def predictions(work: Path, model: str, dataset: str) -> dict[str, str]:
    lines = (work / model / dataset / "predictions.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert all(r["error"] is None for r in records), [r["error"] for r in records if r["error"]][:3]
    return {str(r["index"]): r["prediction"] for r in records}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(LMUData, work dir) after the README's first command, batched."""
    lmu = tmp_path_factory.mktemp("LMUData")
    work = tmp_path_factory.mktemp("demo_out")
    result = vlmkit("run", "--data", *DEMOS, "--model", "vlmkit-tiny", "--batch-size", "16",
                    "--work-dir", str(work), lmu_root=lmu)
    assert result.returncode == 0, result.stderr[-3000:]
    return lmu, work


@pytest.mark.parametrize("dataset", sorted(FLOORS))
def test_the_shipped_model_scores_far_above_chance(demo_run: tuple[Path, Path], dataset: str) -> None:
    _, work = demo_run
    assert overall(work, "vlmkit-tiny", dataset) >= FLOORS[dataset]


def _grey_jpeg_b64() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (112, 112), (128, 128, 128)).save(buffer, format="JPEG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _blank_copy(source: Path, target: Path) -> None:
    """The same TSV with every picture flat grey (index references and multi-image lists kept as they are)."""
    table = pd.read_csv(source, sep="\t", dtype=str, keep_default_na=False)
    grey = _grey_jpeg_b64()

    def blank(value: str) -> str:
        if value.startswith("["):
            return json.dumps([grey] * len(json.loads(value)))
        return value if len(value) <= 64 else grey

    table["image"] = table["image"].map(blank)
    table.to_csv(target, sep="\t", index=False)


def test_with_blank_images_the_scores_fall_to_chance(demo_run: tuple[Path, Path]) -> None:
    """The control: the same questions with grey pictures. The scores came from the images, not the text."""
    lmu, work = demo_run
    blanks = {dataset: "Blank_" + dataset for dataset in DEMOS}
    for dataset, blank in blanks.items():
        _blank_copy(lmu / f"{dataset}.tsv", lmu / f"{blank}.tsv")
    result = vlmkit("run", "--data", *blanks.values(), "--model", "vlmkit-tiny", "--batch-size", "16",
                    "--work-dir", str(work), lmu_root=lmu)
    assert result.returncode == 0, result.stderr[-3000:]
    for dataset, blank in blanks.items():
        assert overall(work, "vlmkit-tiny", blank) <= BLANK_CEILINGS[dataset], dataset


def test_served_predictions_equal_local_ones(demo_run: tuple[Path, Path], tmp_path: Path) -> None:
    """`transformers serve` on the shipped weights through the API model path gives the local path's greedy
    answers: a user can check a serving stack against local inference this way."""
    from tests.support.serve import transformers_serve

    lmu, _ = demo_run
    work = tmp_path / "out"
    limit = ["--limit", "24"]
    local = vlmkit("run", "--data", *DEMOS, "--model", "vlmkit-tiny", "--work-dir", str(work), *limit, lmu_root=lmu)
    assert local.returncode == 0, local.stderr[-3000:]
    with transformers_serve(WEIGHTS.resolve(), tmp_path) as api_base:
        served = vlmkit("run", "--data", *DEMOS, "--model", str(WEIGHTS.resolve()), "--api-base", api_base,
                        "--nproc", "2", "--max-tokens", "8", "--work-dir", str(work), *limit, lmu_root=lmu)
    assert served.returncode == 0, served.stderr[-3000:]
    for dataset in DEMOS:
        mine = predictions(work, "vlmkit-tiny", dataset)
        theirs = predictions(work, "vlmkit_tiny", dataset)
        assert len(mine) == 24 and mine == theirs, dataset


def test_the_training_script_runs(tmp_path: Path) -> None:
    """A few steps of tools/train_demo_model.py (not the shipped run): it trains, saves a model that loads
    through the Auto classes, and scores it (with and without images)."""
    out, report = tmp_path / "model", tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "train_demo_model.py"), "--smoke", "--out", str(out), "--report", str(report)],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="2"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    scores = json.loads(report.read_text())
    assert scores["steps"] == 3 and set(scores["eval"]) == {"mcq", "yorn", "vqa"}
    assert (out / "config.json").is_file() and (out / "processor_config.json").is_file()


def _trainer():
    spec = importlib.util.spec_from_file_location("train_demo_model", ROOT / "tools" / "train_demo_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_bucketed_training_step_equals_one_padded_batch() -> None:
    """The trainer sends a batch through the model in buckets of one kind and image count to skip padding; its loss
    and gradient are those of the one padded batch."""
    import torch
    from transformers import AutoProcessor, LlavaForConditionalGeneration

    trainer = _trainer()
    processor = AutoProcessor.from_pretrained(WEIGHTS)
    model = LlavaForConditionalGeneration.from_pretrained(WEIGHTS, dtype=torch.float32).train()
    stream = trainer.demo_tasks.training_examples(seed=3)
    examples = [next(stream) for _ in range(12)]
    assert len({(example.kind, len(example.scenes)) for example in examples}) >= 3  # really several buckets

    loss, per_kind = trainer.forward_backward(model, processor, examples)
    bucketed = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    reference = model(**trainer.encode_batch(processor, examples)).loss
    reference.backward()

    assert loss == pytest.approx(reference.item(), rel=1e-5)
    reached = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
    assert set(reached) == set(bucketed) and len(reached) > 90  # all but the unused vision head
    for name, gradient in reached.items():
        torch.testing.assert_close(bucketed[name], gradient, rtol=1e-4, atol=1e-7, msg=name)
    assert set(per_kind) == {example.kind for example in examples}


def test_every_trained_answer_scores_as_the_rows_answer() -> None:
    """The model is trained to answer "red" for an MCQ and "red vs blue: No" for a Y/N question
    (`demo_tasks.training_target`); vlmkit's own extraction must read each as the row's answer, or the training
    would teach answers that score wrong."""
    from vlmkit.scoring.kinds.mcq import extract_choice
    from vlmkit.scoring.kinds.yorn import extract_yes_no

    tasks = _trainer().demo_tasks
    stream = tasks.training_examples(seed=5)
    examples = [next(stream) for _ in range(1500)]
    assert {(e.kind, e.category) for e in examples} == {(k, c) for k in tasks.KINDS for c in tasks.CATEGORIES}
    for example in examples:
        target = tasks.training_target(example)
        if example.kind == "mcq":
            letter, method = extract_choice(target, dict(zip(tasks.LETTERS, example.options)))
            assert (letter, method) == (example.answer, "exact"), (target, example)
        elif example.kind == "yorn":
            assert extract_yes_no(target) == example.answer and target.endswith(example.answer), (target, example)
        else:
            assert target == example.answer
