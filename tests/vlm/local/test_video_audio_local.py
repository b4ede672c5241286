"""Video and audio through local tiny models built from configs (no torchvision needed).

Random tiny models answer gibberish, so the checks are about what reaches them: the prompt grows by the expected
number of video/audio tokens, the vision/audio tower sees the frames/waveform, different media give different
logits, batches equal one-by-one runs, and what a model cannot take fails that row alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from tests.support.media_files import write_tone, write_video
from tests.support.tiny_models import (
    build_tiny_llava,
    build_tiny_qwen2_5_omni,
    build_tiny_qwen2_5_vl,
    build_tiny_qwen2_audio,
    build_tiny_qwen2_vl,
    build_tiny_smolvlm,
)
from vlm.local.audio_models import HFAudioModel
from vlm.local.generic import HFVisionModel
from vlm.local.processors import torchvision_available
from vlmkit.core.audio import AudioError
from vlmkit.core.model_calls import Generation, UnsupportedInputError
from vlmkit.core.video import sample_frames

BUILDERS = {
    "qwen2_vl": build_tiny_qwen2_vl,
    "qwen2_5_vl": build_tiny_qwen2_5_vl,
    "llava": build_tiny_llava,
    "smolvlm": build_tiny_smolvlm,
    "qwen2_audio": build_tiny_qwen2_audio,
    "qwen2_5_omni": build_tiny_qwen2_5_omni,
}


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_av")
    return {name: build(root / name) for name, build in BUILDERS.items()}


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("av_media")
    colours = write_video(root / "colours.mp4", frames=16, fps=8.0)
    grey = write_video(root / "grey.mp4", frames=16, fps=8.0, colour=lambda i: (100 + 5 * i,) * 3)
    png = root / "square.png"
    Image.new("RGB", (40, 30), (220, 20, 20)).save(png)
    return {
        "video": colours,
        "grey": grey,
        "png": png,
        "wav": write_tone(root / "a.wav", seconds=0.5, rate=16000, freq=440.0),
        "flac": write_tone(root / "a.flac", seconds=0.5, rate=22050, freq=440.0, channels=2),
        "ogg": write_tone(root / "a.ogg", seconds=0.5, rate=44100, freq=440.0),
        "mp3": write_tone(root / "a.mp3", seconds=0.5, rate=16000, freq=440.0),
        "short": write_tone(root / "short.wav", seconds=0.3, rate=16000, freq=440.0),
        "long": write_tone(root / "long.wav", seconds=0.9, rate=16000, freq=440.0),
        "high": write_tone(root / "high.wav", seconds=0.5, rate=16000, freq=2000.0),
        "too_long": write_tone(root / "too_long.wav", seconds=2.5, rate=16000, freq=440.0),
    }


@pytest.fixture(scope="module")
def models(dirs: dict[str, Path]) -> dict[str, Any]:
    return {
        "qwen2_vl": HFVisionModel(str(dirs["qwen2_vl"]), max_new_tokens=4, batch_size=3, nframe=4),
        "qwen2_5_vl": HFVisionModel(str(dirs["qwen2_5_vl"]), max_new_tokens=4, batch_size=3, nframe=4),
        "llava": HFVisionModel(str(dirs["llava"]), max_new_tokens=4, nframe=3),
        "qwen2_audio": HFAudioModel(str(dirs["qwen2_audio"]), max_new_tokens=4, batch_size=3),
        "qwen2_5_omni": HFAudioModel(str(dirs["qwen2_5_omni"]), max_new_tokens=4, nframe=2),
    }


def _last_logits(model: HFVisionModel, msgs: list) -> Any:
    """The next-token logits for one message (the real processor and model, one forward pass)."""
    import torch

    inputs = model._model_inputs([model._conversation(model.prepare(msgs))]).to(model.input_device)
    with torch.inference_mode():
        return model.model(**inputs).logits[0, -1]


def _video(path: Path) -> dict[str, str]:
    return {"type": "video", "value": str(path)}


# ------------------------------------------------------------------------------------------------- video


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl"])
def test_qwen_video_tokens_and_pixels_reach_the_model(family: str, models: dict[str, Any], media: dict[str, Path]) -> None:
    model = models[family]
    assert model.video_input == "native" and "video" in model.modalities
    assert model.settings()["video_processor"] == "vlm.local.qwen_video (torchvision-free)"
    seen: list[tuple[int, ...]] = []
    hook = model.model.model.visual.register_forward_hook(lambda mod, args, out: seen.append(tuple(args[0].shape)))
    try:
        with_video = model.generate_full([_video(media["video"]), "What happens?"])
    finally:
        hook.remove()
    text_only = model.generate_full(["What happens?"])
    # 4 frames of 64x48 -> 56x56 -> 2 temporal groups x 4x4 patches = 32 patches, 8 tokens (+ vision start/end)
    assert seen == [(32, 3 * 2 * 14 * 14)]
    assert with_video.usage.input_tokens - text_only.usage.input_tokens == 8 + 2
    # different pictures in the same prompt give different next-token logits: the pixels are used
    colours = _last_logits(model, [_video(media["video"]), "What happens?"])
    grey = _last_logits(model, [_video(media["grey"]), "What happens?"])
    assert not np.allclose(colours.numpy(), grey.numpy())


def test_input_tokens_grow_with_nframe(dirs: dict[str, Path], media: dict[str, Path]) -> None:
    counts = {}
    for nframe in (2, 4, 8):
        model = HFVisionModel(str(dirs["qwen2_vl"]), max_new_tokens=2, nframe=nframe)
        counts[nframe] = model.generate_full([_video(media["video"]), "What happens?"]).usage.input_tokens
        assert model.settings()["nframe"] == nframe
    assert counts[4] - counts[2] == 4 and counts[8] - counts[4] == 8  # 4 tokens per 2-frame group
    by_fps = HFVisionModel(str(dirs["qwen2_vl"]), max_new_tokens=2, fps=2.0)  # 2 s clip -> 4 frames
    assert by_fps.generate_full([_video(media["video"]), "What happens?"]).usage.input_tokens == counts[4]
    assert (by_fps.settings()["nframe"], by_fps.settings()["fps"]) == (None, 2.0)


def test_qwen2_5_gets_seconds_per_grid_from_the_sampled_frames(models: dict[str, Any], media: dict[str, Path]) -> None:
    model = models["qwen2_5_vl"]
    inputs = model._model_inputs([model._conversation(model.prepare([_video(media["video"]), "What happens?"]))])
    # 4 frames over 2 s = 2 frames/s; 2 frames per temporal group -> 1 s per grid step
    assert inputs["second_per_grid_ts"].tolist() == pytest.approx([1.0])
    assert inputs["video_grid_thw"].tolist() == [[2, 4, 4]]


def test_video_batches_equal_one_by_one(models: dict[str, Any], media: dict[str, Path]) -> None:
    model = models["qwen2_vl"]
    batch = [
        [_video(media["video"]), "What happens?"],
        [str(media["png"]), "then", _video(media["grey"]), "Compare them."],
        ["No media at all."],
    ]
    batched = model.generate_batch(batch)
    singles = [model.generate_full(msgs) for msgs in batch]
    for got, single in zip(batched, singles):
        assert isinstance(got, Generation)
        assert (got.text, got.usage) == (single.text, single.usage)
    assert len({g.usage.input_tokens for g in batched}) == 3


def test_a_family_without_video_gets_the_frames_as_images(models: dict[str, Any], media: dict[str, Path], tmp_path: Path) -> None:
    model = models["llava"]
    assert model.video_input == "frames" and "video" in model.modalities
    frames = sample_frames(media["video"], nframe=3).frames
    paths = []
    for i, frame in enumerate(frames):
        frame.save(tmp_path / f"f{i}.png")  # lossless: the same pixels the video path decodes
        paths.append(str(tmp_path / f"f{i}.png"))
    as_video = model.generate_full([_video(media["video"]), "What happens?"])
    as_images = model.generate_full([*paths, "What happens?"])
    assert (as_video.text, as_video.usage) == (as_images.text, as_images.usage)
    assert as_video.usage.input_tokens > model.generate_full(["What happens?"]).usage.input_tokens


def test_native_video_family_without_torchvision_refuses_or_takes_frames(dirs: dict[str, Path], media: dict[str, Path]) -> None:
    refusing = HFVisionModel(str(dirs["smolvlm"]), max_new_tokens=2)
    if not torchvision_available():
        assert refusing.video_input is None and "video" not in refusing.modalities
        results = refusing.generate_batch([[_video(media["video"]), "What happens?"], ["Hello?"]])
        assert isinstance(results[0], UnsupportedInputError)
        assert "torchvision" in str(results[0]) and "video_as_images" in str(results[0])
        assert isinstance(results[1], Generation)
    frames = HFVisionModel(str(dirs["smolvlm"]), max_new_tokens=2, nframe=2, video_as_images=True)
    assert frames.video_input == "frames" and frames.settings()["video_as_images"] is True
    with_video = frames.generate_full([_video(media["video"]), "What happens?"])
    assert with_video.usage.input_tokens > frames.generate_full(["What happens?"]).usage.input_tokens


# ------------------------------------------------------------------------------------------------- audio


def test_qwen2_audio_declares_audio_only(models: dict[str, Any]) -> None:
    model = models["qwen2_audio"]
    assert model.modalities == frozenset({"text", "audio"})
    assert model.interleave is True  # probed with an audio item: its template puts audio where it appears
    settings = model.settings()
    assert settings["audio_sample_rate"] == 16000 and settings["model_class"] == "Qwen2AudioForConditionalGeneration"


@pytest.mark.parametrize("kind", ["wav", "flac", "ogg", "mp3"])
def test_qwen2_audio_generates_from_each_format(models: dict[str, Any], media: dict[str, Path], kind: str) -> None:
    model = models["qwen2_audio"]
    seen: list[tuple[int, ...]] = []
    hook = model.model.model.audio_tower.register_forward_hook(lambda mod, args, out: seen.append(tuple(args[0].shape)))
    try:
        result = model.generate_full([str(media[kind]), "What is this sound?"])
    finally:
        hook.remove()
    assert isinstance(result, Generation) and 0 < result.usage.output_tokens <= 4
    assert seen == [(1, 16, 100)]  # 16 mel bins x one 1 s window at 16 kHz, whatever the file's own rate


def test_audio_tokens_follow_the_length_and_content(models: dict[str, Any], media: dict[str, Path]) -> None:
    model = models["qwen2_audio"]
    short = model.generate_full([str(media["short"]), "Sound?"]).usage.input_tokens
    long = model.generate_full([str(media["long"]), "Sound?"]).usage.input_tokens
    assert long - short == 15  # 0.6 s more = 60 mel frames = 15 audio tokens (two 2x reductions)
    low = _last_logits(model, [str(media["wav"]), "Sound?"])
    high = _last_logits(model, [str(media["high"]), "Sound?"])
    assert not np.allclose(low.numpy(), high.numpy())
    # longer than the feature extractor's window: cut to it, as transformers does, not an error
    assert isinstance(model.generate_full([str(media["too_long"]), "Sound?"]), Generation)


def test_audio_batches_equal_one_by_one(models: dict[str, Any], media: dict[str, Path]) -> None:
    model = models["qwen2_audio"]
    batch = [
        [str(media["short"]), "Sound?"],
        ["First:", str(media["long"]), "second:", str(media["high"]), "Compare."],
        ["Text only."],
    ]
    batched = model.generate_batch(batch)
    for got, msgs in zip(batched, batch):
        single = model.generate_full(msgs)
        assert isinstance(got, Generation) and (got.text, got.usage) == (single.text, single.usage)


def test_rows_a_model_cannot_take_fail_alone(models: dict[str, Any], media: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.flac"
    broken.write_bytes(b"fLaC and then nothing sensible")
    results = models["qwen2_audio"].generate_batch([
        [str(media["png"]), "What colour?"],  # an image for an audio-only model
        [_video(media["video"]), "What happens?"],
        [str(broken), "Sound?"],
        [str(media["wav"]), "Sound?"],
    ])
    assert isinstance(results[0], UnsupportedInputError) and "image" in str(results[0])
    assert isinstance(results[1], UnsupportedInputError) and "video" in str(results[1])
    assert isinstance(results[2], AudioError) and "broken.flac" in str(results[2])
    assert isinstance(results[3], Generation)
    image_model = models["llava"]
    results = image_model.generate_batch([[str(media["wav"]), "Sound?"], [str(media["png"]), "Colour?"]])
    assert isinstance(results[0], UnsupportedInputError) and "audio" in str(results[0])
    assert isinstance(results[1], Generation)


def test_omni_thinker_takes_all_four(models: dict[str, Any], media: dict[str, Path]) -> None:
    model = models["qwen2_5_omni"]
    assert model.modalities == frozenset({"text", "image", "video", "audio"})
    assert type(model.model).__name__ == "Qwen2_5OmniThinkerForConditionalGeneration"
    assert model.settings()["omni_thinker_only"] is True
    text_only = model.generate_full(["Describe."]).usage.input_tokens
    audio = model.generate_full([str(media["wav"]), "Describe."]).usage.input_tokens
    everything = model.generate_full([str(media["png"]), _video(media["video"]), str(media["wav"]), "Describe."])
    assert isinstance(everything, Generation)
    assert text_only < audio < everything.usage.input_tokens
    inputs = model._model_inputs([model._conversation(model.prepare([_video(media["video"]), "Describe."]))])
    # 2 frames over 2 s = 1 frame/s, 2 frames per temporal group -> 2 s per grid step (not the fixed 2 fps)
    assert inputs["video_second_per_grid"].tolist() == pytest.approx([2.0])


def test_wrong_class_for_the_checkpoint_is_a_clear_error(dirs: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="takes no audio"):
        HFAudioModel(str(dirs["llava"]))
    with pytest.raises(ValueError, match="HFAudioModel"):
        HFVisionModel(str(dirs["qwen2_5_omni"]))
