"""What a loaded transformers checkpoint takes: images, video (and how), audio (at which rate), interleaved media.

Read once from the loaded processor and model; `vlm.local.generic` (its module docstring says what each capability
means for a run) declares the answers per instance.
"""

from __future__ import annotations

import inspect
from typing import Any

from vlm.local.processors import NO_TORCHVISION, is_image_only, processor_takes_video
from vlm.local.qwen_video import is_torchvision_free

_PROBE_A, _PROBE_B = "\u27e6probe-a\u27e7", "\u27e6probe-b\u27e7"


def _forward_params(model: Any) -> Any:
    return inspect.signature(model.forward).parameters


def takes_images(processor: Any) -> bool:
    return getattr(processor, "image_processor", None) is not None


def video_input(processor: Any, model: Any, video_as_images: bool) -> tuple[str | None, str | None]:
    """("native" | "frames" | None, why not when None): how a video reaches this model (`vlm.local.generic`)."""
    video_processor = getattr(processor, "video_processor", None)
    own_video = "pixel_values_videos" in _forward_params(model) and bool(getattr(processor, "video_token", None))
    if video_as_images:
        return ("frames", None) if takes_images(processor) else (None, "this model takes no images to send frames as")
    if own_video and (is_torchvision_free(video_processor) or processor_takes_video(processor)):
        return "native", None
    if is_image_only(processor) or own_video:
        return None, f"{NO_TORCHVISION}; pass video_as_images=True to send the sampled frames as images"
    if takes_images(processor):
        return "frames", None
    return None, "this model takes no video and no images"


def audio_rate(processor: Any, model: Any) -> int | None:
    """The sample rate the processor's audio feature extractor wants; None when the model takes no audio."""
    extractor = getattr(processor, "feature_extractor", None)
    if extractor is None or not getattr(processor, "audio_token", None):
        return None
    if "input_features" not in _forward_params(model):
        return None
    return int(getattr(extractor, "sampling_rate", 16000))


def video_processor_name(processor: Any) -> str:
    """The video processor's name for settings() (the kit's torchvision-free one said as such)."""
    video_processor = getattr(processor, "video_processor", None)
    if is_torchvision_free(video_processor):
        return "vlm.local.qwen_video (torchvision-free)"
    return type(video_processor).__name__


def audio_probe() -> dict[str, Any]:
    """A short silent audio item: the media `template_interleaves` probes an audio-only model with."""
    import numpy as np

    return {"type": "audio", "audio": np.zeros(160, dtype=np.float32)}


def template_interleaves(processor: Any, media: dict[str, Any] | None = None) -> bool:
    """True when the chat template renders a media item placed between two texts between them.

    Renders [text A, media, text B] and [text A, text B]; an interleaving template puts something different
    between A and B in the two renderings. `media` is the probe item (default a 2x2 image; an audio-only model
    is probed with an audio item). A template that cannot render the probe counts as not interleaving (media
    first is always safe).
    """
    if media is None:
        from PIL import Image

        media = {"type": "image", "image": Image.new("RGB", (2, 2))}

    def between(content: list[dict[str, Any]]) -> str | None:
        text = processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )
        a, b = text.find(_PROBE_A), text.find(_PROBE_B)
        return text[a + len(_PROBE_A) : b] if 0 <= a < b else None

    a, b = {"type": "text", "text": _PROBE_A}, {"type": "text", "text": _PROBE_B}
    try:
        with_media = between([a, media, b])
        without = between([a, b])
    except Exception:
        return False
    return with_media is not None and without is not None and with_media != without
