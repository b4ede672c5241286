"""What a loaded checkpoint takes (vlm.local.capabilities), asked of real tiny checkpoints: LLaVA (images, a
template that puts media first), Qwen2-VL (its own video input) and Qwen2-Audio (audio at 16 kHz, a template that
places audio between texts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.support.tiny_models import build_tiny_llava, build_tiny_qwen2_audio, build_tiny_qwen2_vl
from vlm.local import capabilities as caps
from vlm.local.loading import load_chat_processor, load_image_text_model
from vlm.local.processors import NO_TORCHVISION, load_processor, torchvision_available


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    root = tmp_path_factory.mktemp("caps")
    out: dict[str, tuple[Any, Any]] = {}
    for name, build in {"llava": build_tiny_llava, "qwen2_vl": build_tiny_qwen2_vl}.items():
        path = str(build(root / name))
        processor = load_chat_processor(path, model_type=name, model_path=path)
        model = load_image_text_model(path, model_type=name, model_path=path, device="cpu", torch_dtype=None)
        out[name] = (processor, model)
    from transformers import Qwen2AudioForConditionalGeneration

    audio = str(build_tiny_qwen2_audio(root / "qwen2_audio"))
    out["qwen2_audio"] = (load_processor(audio, local_files_only=True),
                          Qwen2AudioForConditionalGeneration.from_pretrained(audio, local_files_only=True))
    out["qwen2_vl_plain"] = (load_processor(str(root / "qwen2_vl"), local_files_only=True), out["qwen2_vl"][1])
    return out


def test_images(loaded):
    assert caps.takes_images(loaded["llava"][0]) and caps.takes_images(loaded["qwen2_vl"][0])
    assert not caps.takes_images(loaded["qwen2_audio"][0])


def test_video_native_frames_or_refused(loaded):
    processor, model = loaded["qwen2_vl"]
    assert caps.video_input(processor, model, False) == ("native", None)
    assert caps.video_input(processor, model, True) == ("frames", None)
    assert caps.video_processor_name(processor) == "vlm.local.qwen_video (torchvision-free)"
    # LLaVA has no video input of its own: sampled frames go as images either way
    assert caps.video_input(*loaded["llava"], False) == ("frames", None)
    assert caps.video_input(*loaded["llava"], True) == ("frames", None)
    assert caps.video_input(*loaded["qwen2_audio"], False) == (None, "this model takes no video and no images")
    assert caps.video_input(*loaded["qwen2_audio"], True) == (None, "this model takes no images to send frames as")


@pytest.mark.skipif(torchvision_available(), reason="a fact about a machine without torchvision")
def test_own_video_without_a_torchvision_free_processor_is_refused_with_the_way_out(loaded):
    processor, model = loaded["qwen2_vl_plain"]
    assert caps.video_input(processor, model, False) == (
        None, f"{NO_TORCHVISION}; pass video_as_images=True to send the sampled frames as images"
    )
    assert caps.video_input(processor, model, True) == ("frames", None)


def test_audio_rate(loaded):
    assert caps.audio_rate(*loaded["qwen2_audio"]) == 16000
    assert caps.audio_rate(*loaded["llava"]) is None
    assert caps.audio_rate(*loaded["qwen2_vl"]) is None


def test_audio_probe_is_a_short_silence():
    probe = caps.audio_probe()
    assert probe["type"] == "audio" and probe["audio"].dtype == np.float32 and probe["audio"].shape == (160,)
    assert not probe["audio"].any()


def test_interleaving_templates(loaded):
    # LLaVA's template writes every image before every text: nothing lands between the two texts
    assert caps.template_interleaves(loaded["llava"][0]) is False
    # Qwen2-Audio's writes each audio where it stands; an image it drops, so the image probe sees no difference
    assert caps.template_interleaves(loaded["qwen2_audio"][0], caps.audio_probe()) is True
    assert caps.template_interleaves(loaded["qwen2_audio"][0]) is False


def test_a_template_that_cannot_render_the_probe_does_not_interleave(loaded):
    processor = loaded["llava"][0]
    saved = processor.chat_template
    processor.chat_template = "{{ raise_exception('no media here') }}"
    try:
        assert caps.template_interleaves(processor) is False
    finally:
        processor.chat_template = saved
