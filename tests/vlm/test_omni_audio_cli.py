"""Qwen2-Audio and Qwen2.5-Omni from the command line by registry alias, repo id or folder: tiny models built from
configs answer a small audio dataset end to end (`vlmkit run`), on the audio class, with their modalities declared
and Qwen2.5-Omni's VLMEvalKit preset recorded. (Before: a Qwen2.5-Omni folder ended in a traceback asking for a
class the command line could not reach.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.run_helpers import vlmkit_cli
from tests.support.media_files import write_tone
from tests.support.tiny_models import build_tiny_qwen2_5_omni, build_tiny_qwen2_audio
from vlm.local.audio_models import HFAudioModel
from vlm.registry import model_registry
from vlmkit.core.model_calls import Generation
from vlmkit.run.resolve import ModelOptions, resolve_model

AUDIO_TARGET = "vlm.local.audio_models:HFAudioModel"  # as results.json names the class
ORDER = ("text", "image", "video", "audio")


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_audio_cli")
    return {"qwen2_audio": build_tiny_qwen2_audio(root / "qwen2_audio"),
            "qwen2_5_omni": build_tiny_qwen2_5_omni(root / "qwen2_5_omni")}


@pytest.fixture(scope="module")
def audio_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-row multimodal custom dataset (mm_custom jsonl) of tones and questions about them."""
    root = tmp_path_factory.mktemp("audio_data")
    write_tone(root / "low.wav", seconds=0.5, freq=440.0)
    write_tone(root / "high.wav", seconds=0.3, freq=2000.0)
    rows = [
        {"type": "audio", "path": ["low.wav"], "question": "Is the tone high or low?", "answer": "low"},
        {"type": "audio", "path": ["high.wav"], "question": "Is the tone high or low?", "answer": "high"},
    ]
    data = root / "tones.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


def _run(work: Path, data: Path, *model_args: str) -> dict[str, Any]:
    result = vlmkit_cli("run", *model_args, "--custom-dataset-path", str(data), "--work-dir", str(work),
                        "--max-tokens", "3", env={"LMUData": str(work / "LMUData")})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    results = json.loads(next(work.rglob("results.json")).read_text())
    predictions = [json.loads(line) for line in next(work.rglob("predictions.jsonl")).read_text().splitlines()]
    assert len(predictions) == 2 and all(isinstance(p.get("prediction"), str) for p in predictions), predictions
    assert not results.get("errors_by_kind"), results.get("errors_by_kind")
    return results


def test_qwen2_audio_by_alias(tiny: dict[str, Path], audio_data: Path, tmp_path: Path) -> None:
    results = _run(tmp_path, audio_data, "--model", "qwen2-audio", "--model-path", str(tiny["qwen2_audio"]))
    model = results["model"]
    assert model["target"] == AUDIO_TARGET
    assert model["settings"]["modalities"] == ["audio", "text"]
    assert model["settings"]["model_class"] == "Qwen2AudioForConditionalGeneration"
    assert model["settings"]["max_new_tokens"] == 3
    assert model["settings"]["preset"] is None  # VLMEvalKit has no Qwen2-Audio entry


def test_qwen2_5_omni_by_alias_with_its_preset(tiny: dict[str, Path], audio_data: Path, tmp_path: Path) -> None:
    results = _run(tmp_path, audio_data, "--model", "qwen2.5-omni", "--model-path", str(tiny["qwen2_5_omni"]))
    settings = results["model"]["settings"]
    assert results["model"]["target"] == AUDIO_TARGET
    assert settings["modalities"] == ["audio", "image", "text", "video"] and settings["omni_thinker_only"] is True
    assert settings["preset"]["name"] == "Qwen2.5-Omni-7B" and settings["preset"]["overridden"] == ["max_new_tokens"]
    assert settings["image_pixel_limits"] == {"min_pixels": 1280 * 28 * 28, "max_pixels": 16384 * 28 * 28}
    assert settings["max_new_tokens"] == 3 and settings["generation"]["max_new_tokens_source"] == "user"


def test_a_qwen2_5_omni_folder_needs_no_name(tiny: dict[str, Path], audio_data: Path, tmp_path: Path) -> None:
    results = _run(tmp_path, audio_data, "--model", str(tiny["qwen2_5_omni"]))
    assert results["model"]["target"] == AUDIO_TARGET and results["model"]["settings"]["preset"] is None


def test_repo_ids_resolve_build_and_generate(tiny: dict[str, Path], audio_data: Path) -> None:
    for repo, family in (("Qwen/Qwen2.5-Omni-7B", "qwen2_5_omni"), ("Qwen/Qwen2-Audio-7B-Instruct", "qwen2_audio")):
        spec = resolve_model(repo, ModelOptions(model_path=str(tiny[family]), max_tokens=2))
        assert spec.target == AUDIO_TARGET and spec.is_local
        model = spec.build()
        declared = model_registry().get(repo.split("/", 1)[1]).description  # what `vlmkit list models` shows
        assert isinstance(model, HFAudioModel) and f"({', '.join(sorted(model.modalities, key=ORDER.index))})" in declared
        result = model.generate_full([str(audio_data.parent / "low.wav"), "Is the tone high or low?"])
        assert isinstance(result, Generation) and 0 < result.usage.output_tokens <= 2
        model.close()
