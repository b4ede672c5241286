"""The torchvision-free Qwen video processor (vlm.local.qwen_video): layout, sizes, settings, token expansion."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.support.media_files import write_video
from tests.support.tiny_models import build_tiny_qwen2_5_vl, build_tiny_qwen2_vl
from vlm.local.qwen_video import (
    DEFAULTS,
    is_torchvision_free,
    load_qwen_processor,
    preprocess_video,
    settings_from_checkpoint,
    video_metadata,
)
from vlmkit.core.qwen_resize import smart_resize
from vlmkit.core.video import sample_frames

TINY_SIZE = {"shortest_edge": 56 * 56, "longest_edge": 112 * 112}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("qwen_video")
    return {"qwen2_vl": build_tiny_qwen2_vl(root / "qwen2_vl"), "qwen2_5_vl": build_tiny_qwen2_5_vl(root / "qwen2_5_vl")}


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_video(tmp_path_factory.mktemp("qwen_clip") / "clip.mp4", frames=16, fps=8.0)


def _picture(width: int = 90, height: int = 60) -> Image.Image:
    rng = np.random.default_rng(0)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))


def test_two_equal_frames_match_the_image_processor(dirs: dict[str, Path]) -> None:
    """An image is a 2-frame video of itself in Qwen2-VL: the same patches, the same grid, in the same order."""
    processor = load_qwen_processor(str(dirs["qwen2_vl"]))
    picture = _picture()
    image = processor.image_processor(images=[picture], return_tensors="np")
    frames = np.stack([np.asarray(picture)] * 2)
    patches, grid = preprocess_video(frames, {**DEFAULTS, "size": TINY_SIZE})
    assert list(image["image_grid_thw"][0]) == list(grid)
    assert patches.shape == image["pixel_values"].shape
    assert np.max(np.abs(patches - image["pixel_values"])) < 1e-5


def test_frames_are_padded_to_the_temporal_patch_and_laid_out_in_time_order() -> None:
    frames = np.stack([np.full((56, 56, 3), 40 * i, dtype=np.uint8) for i in range(3)])
    settings = {**DEFAULTS, "size": TINY_SIZE, "do_normalize": False}
    patches, grid = preprocess_video(frames, settings)
    assert grid == (2, 4, 4)  # 3 frames -> padded to 4 (last frame repeated) -> 2 temporal groups
    per_group = 4 * 4
    rows = patches.reshape(2, per_group, 3, 2, 14 * 14)  # (group, patch, channel, frame-in-group, pixels)
    values = rows[:, 0, 0, :, 0] * 255
    assert np.allclose(values, [[0, 40], [80, 80]])  # frames 0,1 | frame 2 and its repeat


def test_smart_resize_rule() -> None:
    assert smart_resize(48, 64, 28, 56 * 56, 112 * 112) == (56, 56)
    assert smart_resize(1080, 1920, 28, 128 * 28 * 28, 768 * 28 * 28) == (560, 1008)  # under 768 tokens of 28x28
    assert smart_resize(10, 10, 28, 56 * 56, 112 * 112) == (56, 56)  # grown to the minimum
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(1, 400, 28, 56 * 56, 112 * 112)


def test_pixel_cap_shrinks_frames_as_their_number_grows() -> None:
    frames = np.zeros((16, 280, 280, 3), dtype=np.uint8)
    settings = {**DEFAULTS, "size": {"shortest_edge": 28 * 28, "longest_edge": 280 * 280}, "max_video_tokens": 400}
    _, uncapped = preprocess_video(frames, settings)
    _, capped = preprocess_video(frames, {**settings, "cap_pixels_per_frame": True})
    assert uncapped[1:] == (20, 20) and capped[1] * capped[2] < 20 * 20


def test_settings_order_follows_transformers(tmp_path: Path, dirs: dict[str, Path]) -> None:
    settings, source = settings_from_checkpoint(dirs["qwen2_vl"])
    assert source == "processor_config.json:video_processor" and settings["size"] == TINY_SIZE
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "preprocessor_config.json").write_text(json.dumps({"min_pixels": 3136, "max_pixels": 200704, "patch_size": 14}))
    settings, source = settings_from_checkpoint(legacy)
    assert source == "preprocessor_config.json" and settings["size"] == {"shortest_edge": 3136, "longest_edge": 200704}
    (legacy / "video_preprocessor_config.json").write_text(json.dumps({"max_pixels": 50176, "temporal_patch_size": 2}))
    settings, source = settings_from_checkpoint(legacy)
    assert source == "video_preprocessor_config.json" and settings["size"]["longest_edge"] == 50176
    assert settings_from_checkpoint(tmp_path)[1] == "defaults"


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl"])
def test_the_real_processor_expands_video_tokens(dirs: dict[str, Path], clip: Path, family: str) -> None:
    processor = load_qwen_processor(str(dirs[family]))
    assert is_torchvision_free(processor.video_processor)
    assert type(processor).__mro__[1].__name__ in ("Qwen2VLProcessor", "Qwen2_5_VLProcessor")
    video = sample_frames(clip, nframe=4)
    text = "<|vision_start|><|video_pad|><|vision_end|>What happens?"
    out = processor(text=[text], videos=[video.array()], video_metadata=[video_metadata(video)], return_tensors="pt")
    assert out["video_grid_thw"].tolist() == [[2, 4, 4]]
    assert tuple(out["pixel_values_videos"].shape) == (32, 3 * 2 * 14 * 14)
    video_id = processor.tokenizer.convert_tokens_to_ids("<|video_pad|>")
    assert int((out["input_ids"] == video_id).sum()) == 2 * 4 * 4 // 4  # one token per 2x2 merge window
    assert int((out["mm_token_type_ids"] == 2).sum()) == 8
    if family == "qwen2_5_vl":  # 4 frames of a 2 s clip: 2 frames/s, 2 frames per temporal group -> 1 s
        assert out["second_per_grid_ts"].tolist() == pytest.approx([1.0])
