"""Processor loading without torchvision: image-only processors that construct, save, reload and refuse video."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.tiny_models import build_tiny_llava, build_tiny_qwen2_vl, build_tiny_smolvlm
from vlm.local.processors import (
    NoVideoProcessor,
    is_image_only,
    load_processor,
    processor_class_for,
    processor_takes_video,
    torchvision_available,
)
from vlmkit.core.model_calls import UnsupportedInputError

no_torchvision = pytest.mark.skipif(torchvision_available(), reason="facts about a machine without torchvision")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_proc")
    return {
        "llava": build_tiny_llava(root / "llava"),
        "qwen2_vl": build_tiny_qwen2_vl(root / "qwen2_vl"),
        "smolvlm": build_tiny_smolvlm(root / "smolvlm"),
    }


@no_torchvision
def test_auto_processor_refuses_without_torchvision(dirs: dict[str, Path]) -> None:
    """The premise: AutoProcessor cannot build a processor that declares a video processor."""
    from transformers import AutoProcessor

    with pytest.raises(Exception):  # noqa: B017 - the exact type is transformers' business
        AutoProcessor.from_pretrained(str(dirs["qwen2_vl"]))


@no_torchvision
@pytest.mark.parametrize("family, cls_name", [("qwen2_vl", "Qwen2VLProcessor"), ("smolvlm", "SmolVLMProcessor")])
def test_image_only_processor(dirs: dict[str, Path], family: str, cls_name: str) -> None:
    processor = load_processor(str(dirs[family]))
    assert type(processor).__name__ == cls_name
    assert type(processor).__mro__[1].__name__ == cls_name  # a subclass of the real processor class
    assert is_image_only(processor) and not processor_takes_video(processor)
    assert type(processor).get_attributes() == ["image_processor", "tokenizer"]
    assert isinstance(processor.video_processor, NoVideoProcessor)
    assert processor.chat_template  # kept from the checkpoint


@no_torchvision
def test_video_reaching_an_image_only_processor_fails_loudly(dirs: dict[str, Path]) -> None:
    """Without the stand-in, the processor would skip the frames and leave a lone video token: never silently."""
    processor = load_processor(str(dirs["qwen2_vl"]))
    frames = np.zeros((4, 56, 56, 3), dtype=np.uint8)
    with pytest.raises(UnsupportedInputError, match="torchvision"):
        processor(text=["<|vision_start|><|video_pad|><|vision_end|>What happens?"], videos=[frames], return_tensors="pt")


def test_image_only_processor_round_trip_keeps_its_settings(dirs: dict[str, Path], tmp_path: Path) -> None:
    processor = load_processor(str(dirs["smolvlm"]))
    assert processor.image_seq_len == 4  # not the class default (169)
    processor.save_pretrained(tmp_path / "again")
    again = load_processor(str(tmp_path / "again"))
    assert again.image_seq_len == 4
    assert again.chat_template == processor.chat_template
    assert again.image_processor.max_image_size == processor.image_processor.max_image_size


def test_processor_without_video_loads_plainly(dirs: dict[str, Path]) -> None:
    processor = load_processor(str(dirs["llava"]))
    assert type(processor).__name__ == "LlavaProcessor" and not is_image_only(processor)
    assert not processor_takes_video(processor)
    assert processor_class_for(str(dirs["llava"])).__name__ == "LlavaProcessor"
