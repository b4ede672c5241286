"""HFVisionModel on real tiny random models (built in the session, loaded through from_pretrained).

Outputs of random models are gibberish, so the assertions are about behaviour: batched generation (one left-padded
`generate`) equals one-by-one generation token for token under greedy decoding, images reach the model (they add
prompt tokens), interleaving follows the chat template, and what cannot reach the model fails loudly.
Batch-vs-single equality holds exactly here (float32 on CPU, fixed seed in the builders); the output token counts
are compared too, so differing token ids that decode to the same replacement characters would still be caught.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.support.tiny_models import (
    build_tiny_gemma3,
    build_tiny_internvl,
    build_tiny_llava,
    build_tiny_llava_onevision,
    build_tiny_qwen2_5_vl,
    build_tiny_qwen2_vl,
    build_tiny_smolvlm,
)
from vlm.local.generic import HFVisionModel
from vlm.local.processors import torchvision_available
from vlm.registry import model_registry
from vlmkit.core.model_calls import Generation, UnsupportedInputError
from vlmkit.core.media import MediaError
from vlmkit.core.video import VideoError

BUILDERS: dict[str, Callable[[Path], Path]] = {
    "llava": build_tiny_llava,
    "qwen2_vl": build_tiny_qwen2_vl,
    "qwen2_5_vl": build_tiny_qwen2_5_vl,
    "smolvlm": build_tiny_smolvlm,
}
# More families, checked for batch-vs-single equality and capabilities only (to keep the file fast).
EXTRA_BUILDERS: dict[str, Callable[[Path], Path]] = {
    "llava_onevision": build_tiny_llava_onevision,
    "gemma3": build_tiny_gemma3,
    "internvl": build_tiny_internvl,
}
ALL_FAMILIES = [*BUILDERS, *EXTRA_BUILDERS]
INTERLEAVES = {
    "llava": False, "qwen2_vl": True, "qwen2_5_vl": True, "smolvlm": True,
    "llava_onevision": False, "gemma3": True, "internvl": True,
}
# How a video reaches each family: Qwen through the kit's torchvision-free video processor, families with no video
# input as frames; families whose own video processor needs torchvision take none without it (checked then only).
VIDEO_INPUT = {
    "llava": "frames", "qwen2_vl": "native", "qwen2_5_vl": "native", "gemma3": "frames",
    "smolvlm": None, "llava_onevision": None, "internvl": None,
}


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_hf")
    return {name: build(root / name) for name, build in {**BUILDERS, **EXTRA_BUILDERS}.items()}


@pytest.fixture(scope="module")
def models(tiny_dirs: dict[str, Path]) -> dict[str, HFVisionModel]:
    return {name: HFVisionModel(str(path), max_new_tokens=6, batch_size=3) for name, path in tiny_dirs.items()}


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("media")
    png, jpg = root / "red.png", root / "wide_blue.jpg"
    Image.new("RGB", (40, 30), (220, 20, 20)).save(png)
    image = Image.new("RGB", (120, 50), (10, 20, 200))
    image.paste((250, 250, 0), (30, 10, 60, 40))
    image.save(jpg, quality=90)
    return {"png": str(png), "jpg": str(jpg)}


def _batch(media: dict[str, str]) -> list[Any]:
    """Three prompts of different lengths: interleaved 2 images + text, a multi-turn conversation, text only."""
    return [
        [
            {"type": "text", "value": "Look at the first image"},
            {"type": "image", "value": media["png"]},
            {"type": "text", "value": "and at the second one"},
            {"type": "image", "value": media["jpg"]},
            {"type": "text", "value": "Which one is blue? Answer with one word."},
        ],
        [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": [{"type": "image", "value": media["jpg"]}, {"type": "text", "value": "Describe."}]},
            {"role": "assistant", "content": "A blue picture."},
            {"role": "user", "content": "Is there a yellow square?"},
        ],
        ["What is 2 + 2?"],
    ]


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_batch_equals_one_by_one(family: str, models: dict[str, HFVisionModel], media: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    model = models[family]
    calls: list[int] = []
    real_generate = model.model.generate

    def counting_generate(**kwargs: Any) -> Any:  # the real generate, counted
        calls.append(kwargs["input_ids"].shape[0])
        return real_generate(**kwargs)

    monkeypatch.setattr(model.model, "generate", counting_generate)
    batch = _batch(media)
    batched = model.generate_batch(batch)
    assert calls == [3]  # one padded generate for the whole batch
    singles = [model.generate_full(msgs) for msgs in batch]
    assert calls == [3, 1, 1, 1]
    for got, single in zip(batched, singles):
        assert isinstance(got, Generation), got
        assert isinstance(got.text, str) and got.text == got.text.strip()
        assert got.text == single.text
        assert got.usage == single.usage  # input tokens without padding, output tokens
        assert got.usage.input_tokens > 0 and 0 < got.usage.output_tokens <= 6
    # the prompts really differ in length (left padding was exercised)
    assert len({g.usage.input_tokens for g in batched}) == 3


@pytest.mark.parametrize("family", list(BUILDERS))
def test_images_reach_the_model(family: str, models: dict[str, HFVisionModel], media: dict[str, str]) -> None:
    model = models[family]
    text_only = model.generate_full(["Which one is blue?"])
    one_image = model.generate_full([media["png"], "Which one is blue?"])
    two_images = model.generate_full([media["png"], media["jpg"], "Which one is blue?"])
    # every image expands into placeholder tokens that carry its features
    assert text_only.usage.input_tokens < one_image.usage.input_tokens < two_images.usage.input_tokens


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_declared_capabilities(family: str, models: dict[str, HFVisionModel]) -> None:
    model = models[family]
    assert model.interleave is INTERLEAVES[family]
    assert "image" in model.modalities and "audio" not in model.modalities
    if VIDEO_INPUT[family] is not None or not torchvision_available():
        assert model.video_input == VIDEO_INPUT[family]
        assert ("video" in model.modalities) is (VIDEO_INPUT[family] is not None)
    assert model.settings()["video_input"] == model.video_input
    assert type(model).modalities == frozenset({"text", "image"})  # the instance overrides, the class is untouched


def test_non_interleaving_template_gets_images_first(models: dict[str, HFVisionModel], media: dict[str, str]) -> None:
    model = models["llava"]
    interleaved = [
        {"type": "text", "value": "Before."},
        {"type": "image", "value": media["png"]},
        {"type": "text", "value": "After."},
    ]
    reordered = [{"type": "image", "value": media["png"]}, {"type": "text", "value": "Before.\nAfter."}]
    a, b = model.generate_full(interleaved), model.generate_full(reordered)
    assert (a.text, a.usage) == (b.text, b.usage)


@pytest.mark.parametrize("family", ["qwen2_vl", "smolvlm", "llava"])
def test_video_and_audio_fail_loudly(family: str, models: dict[str, HFVisionModel], media: dict[str, str], tmp_path: Path) -> None:
    model = models[family]
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\x00" * 64)
    batch = [
        [{"type": "video", "value": str(video)}, {"type": "text", "value": "What happens?"}],
        [media["png"], "Colour?"],
        [{"type": "audio", "value": str(tmp_path / "a.wav")}, {"type": "text", "value": "Transcribe."}],
    ]
    results = model.generate_batch(batch)
    if VIDEO_INPUT[family] is None and not torchvision_available():
        # SmolVLM's video processor needs torchvision: the reason is the missing torchvision
        assert isinstance(results[0], UnsupportedInputError) and "torchvision" in str(results[0])
    else:
        # this family takes video (natively or as frames): the unreadable file fails, naming it
        assert isinstance(results[0], VideoError) and "clip.mp4" in str(results[0])
    assert isinstance(results[1], Generation)
    assert isinstance(results[2], UnsupportedInputError) and "audio" in str(results[2])
    with pytest.raises(UnsupportedInputError):
        model.generate([{"type": "audio", "value": str(tmp_path / "a.wav")}])


def test_a_bad_image_fails_alone(models: dict[str, HFVisionModel], media: dict[str, str], tmp_path: Path) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    results = models["qwen2_vl"].generate_batch([[media["png"], "ok?"], [{"type": "image", "value": str(broken)}, "bad"]])
    assert isinstance(results[0], Generation)
    assert isinstance(results[1], MediaError) and "broken.png" in str(results[1])


def test_registry_build_and_settings(tiny_dirs: dict[str, Path], media: dict[str, str]) -> None:
    model = model_registry().build("qwen2.5-vl", model_path=str(tiny_dirs["qwen2_5_vl"]), max_new_tokens=3)
    assert isinstance(model, HFVisionModel)
    text = model.generate([media["jpg"], "Describe."])
    assert isinstance(text, str)
    settings = model.settings()
    assert settings["model_path"] == str(tiny_dirs["qwen2_5_vl"])
    assert settings["device"] == "cpu" or settings["device"].startswith("cuda")
    assert settings["torch_dtype"] in ("float32", "bfloat16", "float16")
    assert settings["max_new_tokens"] == 3 and settings["temperature"] == 0.0 and settings["do_sample"] is False
    assert settings["model_class"] == "Qwen2_5_VLForConditionalGeneration"
    assert settings["image_only_processor"] is False  # Qwen: the real processor class + the kit's video processor
    assert settings["video_input"] == "native" and settings["nframe"] == 8 and settings["fps"] is None


def test_sampling_and_explicit_settings(tiny_dirs: dict[str, Path], media: dict[str, str]) -> None:
    import torch

    model = HFVisionModel(str(tiny_dirs["llava"]), dtype="float32", device="cpu", temperature=0.8, max_new_tokens=4, top_k=5)
    assert model.settings()["do_sample"] is True and model.settings()["generate_kwargs"] == {"top_k": 5}
    torch.manual_seed(0)
    first = model.generate_full([media["png"], "Say something."])
    torch.manual_seed(0)
    again = model.generate_full([media["png"], "Say something."])
    assert first.text == again.text  # seeded sampling is reproducible
    with pytest.raises(ValueError, match="dtype"):
        HFVisionModel(str(tiny_dirs["llava"]), dtype="fp8")


def test_output_tokens_stop_at_the_first_end_token() -> None:
    from vlm.local.decoding import _count_new_tokens

    assert _count_new_tokens([5, 6, 2, 0, 0], {2}) == 3  # eos counted, padding after it not
    assert _count_new_tokens([5, 6, 7], {2}) == 3  # ran to max_new_tokens
    assert _count_new_tokens([9, 0, 0], {9, 10}) == 1


class _TileFamily:
    """A prompt family as vlm/prompts documents it: per-dataset image-processor settings by dataset name."""

    def __init__(self, settings: dict[str, dict[str, Any]]) -> None:
        self.settings = settings

    def processor_kwargs(self, dataset: str | None) -> dict[str, Any]:
        return dict(self.settings.get(dataset or "", {}))


def test_per_dataset_image_settings_apply_to_that_call_only(models: dict[str, HFVisionModel], media: dict[str, str]) -> None:
    model = models["internvl"]
    assert model.prompts is None and model.settings()["prompt_family"] is None and model.dataset_image_kwargs("X") == {}
    assert model.use_custom_prompt(type("D", (), {"name": "X", "kind": "mcq"})()) is False
    conversation = model._conversation(model.prepare([media["jpg"], "Describe."]))

    def tiles(dataset: str | None) -> int:
        return int(model._model_inputs([conversation], model.dataset_image_kwargs(dataset))["pixel_values"].shape[0])

    before = tiles(None)
    model.prompts = _TileFamily({"FewTiles": {"crop_to_patches": True, "min_patches": 1, "max_patches": 2},
                                 "Bad": {"tiles_please": 3}, "Pixels": {"min_pixels": 10}})
    try:
        assert model.dataset_image_kwargs("FewTiles") == {"crop_to_patches": True, "min_patches": 1, "max_patches": 2}
        assert tiles("FewTiles") == 3 < before  # two tiles and the thumbnail
        assert tiles("Other") == before == tiles(None)  # nothing stays set after the call
        few = model.generate_full([media["jpg"], "Describe."], dataset="FewTiles").usage.input_tokens
        assert few < model.generate_full([media["jpg"], "Describe."], dataset="Other").usage.input_tokens
        with pytest.raises(ValueError, match=r"dataset Bad.*takes no tiles_please"):
            model.dataset_image_kwargs("Bad")
        with pytest.raises(ValueError, match=r"dataset Pixels.*keeps no pixel limits"):
            model.dataset_image_kwargs("Pixels")
    finally:
        model.prompts = None
