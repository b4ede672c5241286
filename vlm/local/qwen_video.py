"""Qwen2-VL / Qwen2.5-VL (and Qwen2.5-Omni) video input without torchvision.

transformers' Qwen2-VL video processor needs torchvision, which has no working CPU wheel here (see
docs of `vlm.local.processors`). This module does the same preparation with PIL and numpy:
1. each frame is resized (PIL, the checkpoint's resample filter, bicubic by default) to sides that are multiples
   of patch_size * merge_size (28), keeping the pixel count within the configured range (`smart_resize`, the
   rule of the HF processor; with `cap_pixels_per_frame` the per-frame budget also shrinks with the frame count);
2. rescaled to [0, 1] and normalised with the checkpoint's mean/std;
3. padded to a multiple of temporal_patch_size frames by repeating the last frame;
4. cut into patches in the layout of the HF video processor: one row per (t, h, w) patch, ordered by temporal
   group, then merge-window row/column, then position inside the window; each row holds channel x temporal x
   patch x patch values. `video_grid_thw` is (frames / temporal_patch_size, height / patch, width / patch).

`QwenVideoProcessor` (built by `video_processor_class()`) wraps that in a video processor object the real
processor classes accept (a `VideoProcessorMixin`, no torchvision needed), so `Qwen2VLProcessor`,
`Qwen2_5_VLProcessor` and `Qwen2_5OmniProcessor` themselves expand the video tokens in the prompt, build
`mm_token_type_ids`, and (Qwen2.5-VL) compute `second_per_grid_ts` from the frames' metadata. The kit uses this
path with or without torchvision, so results do not depend on whether torchvision is installed. Numbers can
differ from the torchvision processor in the last bits (PIL vs torchvision resampling).

Settings come from the checkpoint in transformers' order: the `video_processor` section of
processor_config.json, else video_preprocessor_config.json, else preprocessor_config.json, else the
`image_processor` section of processor_config.json; missing keys take the HF Qwen2-VL video processor defaults.
Frames arrive already sampled (by `vlmkit.core.video`); this module never decodes or samples.

torch and transformers are imported inside functions: importing this module is cheap.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlmkit.core.qwen_resize import smart_resize

# model_type values whose processors take a Qwen2-VL style video processor.
QWEN_VIDEO_MODEL_TYPES = frozenset({"qwen2_vl", "qwen2_5_vl", "qwen2_5_omni", "qwen2_5_omni_thinker"})

_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
DEFAULTS: dict[str, Any] = {
    "size": {"shortest_edge": 128 * 28 * 28, "longest_edge": 28 * 28 * 768},
    "patch_size": 14,
    "temporal_patch_size": 2,
    "merge_size": 2,
    "image_mean": list(_CLIP_MEAN),
    "image_std": list(_CLIP_STD),
    "rescale_factor": 1 / 255,
    "do_resize": True,
    "do_rescale": True,
    "do_normalize": True,
    "resample": 3,  # PIL bicubic
    "cap_pixels_per_frame": False,
    "max_video_tokens": 128000,
}
_KEYS = frozenset(DEFAULTS) | {"min_pixels", "max_pixels"}


def normalise_settings(raw: dict[str, Any]) -> dict[str, Any]:
    """The keys this module uses, with defaults; min_pixels/max_pixels override `size` (as in HF)."""
    settings = {k: v for k, v in DEFAULTS.items()}
    settings.update({k: v for k, v in raw.items() if k in _KEYS and v is not None})
    size = dict(settings["size"])
    if "min_pixels" in settings:
        size["shortest_edge"] = settings.pop("min_pixels")
    if "max_pixels" in settings:
        size["longest_edge"] = settings.pop("max_pixels")
    if not size.get("shortest_edge") or not size.get("longest_edge"):
        raise ValueError(f"Qwen video settings need size.shortest_edge and size.longest_edge (pixels); got {size}")
    settings["size"] = {"shortest_edge": int(size["shortest_edge"]), "longest_edge": int(size["longest_edge"])}
    return settings


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def settings_from_checkpoint(path: str | Path) -> tuple[dict[str, Any], str]:
    """(normalised settings, where they came from) for the checkpoint folder `path`."""
    folder = Path(path)
    nested = _read_json(folder / "processor_config.json") or {}
    candidates = [
        ("processor_config.json:video_processor", nested.get("video_processor")),
        ("video_preprocessor_config.json", _read_json(folder / "video_preprocessor_config.json")),
        ("preprocessor_config.json", _read_json(folder / "preprocessor_config.json")),
        ("processor_config.json:image_processor", nested.get("image_processor")),
    ]
    for source, raw in candidates:
        if isinstance(raw, dict):
            return normalise_settings(raw), source
    return normalise_settings({}), "defaults"


def frames_array(video: Any) -> np.ndarray:
    """One video as uint8 (frames, height, width, 3): from such an array, (frames, 3, h, w), or PIL frames."""
    if isinstance(video, (list, tuple)):
        video = np.stack([np.asarray(Image.fromarray(f) if isinstance(f, np.ndarray) else f.convert("RGB")) for f in video])
    array = np.asarray(video)
    if array.ndim != 4:
        raise ValueError(f"a video must be 4-D (frames, height, width, 3); got shape {array.shape}")
    if array.shape[-1] != 3 and array.shape[1] == 3:
        array = np.moveaxis(array, 1, -1)
    if array.shape[-1] != 3:
        raise ValueError(f"video frames must be RGB; got shape {array.shape}")
    if array.dtype != np.uint8:
        raise ValueError(f"video frames must be uint8 pixels; got {array.dtype}")
    return array


def preprocess_video(frames: np.ndarray, settings: dict[str, Any]) -> tuple[np.ndarray, tuple[int, int, int]]:
    """(patches of shape (t*h*w, 3*temporal*patch*patch) float32, (grid_t, grid_h, grid_w)) for one video."""
    frames = frames_array(frames)
    count, height, width = frames.shape[0], frames.shape[1], frames.shape[2]
    patch, temporal, merge = settings["patch_size"], settings["temporal_patch_size"], settings["merge_size"]
    factor = patch * merge
    if settings["do_resize"]:
        min_pixels, max_pixels = settings["size"]["shortest_edge"], settings["size"]["longest_edge"]
        if settings["cap_pixels_per_frame"]:
            budget = int(settings["max_video_tokens"] * factor * factor * 0.9)
            max_pixels = max(min(max_pixels, budget * temporal // count), int(min_pixels * 1.05))
        new_h, new_w = smart_resize(height, width, factor, min_pixels, max_pixels)
        resample = Image.Resampling(int(settings["resample"]))
        frames = np.stack([np.asarray(Image.fromarray(f).resize((new_w, new_h), resample)) for f in frames])
    else:
        new_h, new_w = height, width
        if height % factor or width % factor:
            raise ValueError(f"video frames {width}x{height} are not multiples of {factor} and resizing is off")
    pixels = frames.astype(np.float32)
    if settings["do_rescale"]:
        pixels = pixels * np.float32(settings["rescale_factor"])
    if settings["do_normalize"]:
        mean = np.asarray(settings["image_mean"], dtype=np.float32)
        std = np.asarray(settings["image_std"], dtype=np.float32)
        pixels = (pixels - mean) / std
    pixels = np.moveaxis(pixels, -1, 1)  # (frames, channels, h, w)
    if pad := -count % temporal:
        pixels = np.concatenate([pixels, np.repeat(pixels[-1:], pad, axis=0)])
    grid_t, grid_h, grid_w = pixels.shape[0] // temporal, new_h // patch, new_w // patch
    channels = pixels.shape[1]
    patches = pixels.reshape(
        grid_t, temporal, channels, grid_h // merge, merge, patch, grid_w // merge, merge, patch
    ).transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    flat = patches.reshape(grid_t * grid_h * grid_w, channels * temporal * patch * patch)
    return np.ascontiguousarray(flat, dtype=np.float32), (grid_t, grid_h, grid_w)


@lru_cache(maxsize=1)
def video_processor_class() -> type:
    """`QwenVideoProcessor`: a transformers `VideoProcessorMixin` (no torchvision) running `preprocess_video`."""
    from transformers.video_processing_utils import VideoProcessorMixin

    class QwenVideoProcessor(VideoProcessorMixin):
        """Torchvision-free stand-in for Qwen2VLVideoProcessor; takes already-sampled frames.

        Call: `processor(videos, video_metadata=None, size=None, return_metadata=False, **ignored)`.
        `video_metadata` (one `transformers.video_utils.VideoMetadata` or dict per video) is returned as is when
        `return_metadata` is set (Qwen2.5-VL reads its `sampled_fps`); without it a video gets HF's default.
        """

        model_input_names = ["pixel_values_videos", "video_grid_thw"]
        torchvision_free = True

        def __init__(self, **settings: Any) -> None:
            settings = normalise_settings(settings)
            super().__init__(**settings)
            self.settings = settings

        def preprocess(self, videos: Any, **kwargs: Any) -> Any:
            import torch
            from transformers.image_processing_utils import BatchFeature
            from transformers.video_utils import VideoMetadata, make_batched_videos

            settings = dict(self.settings)
            if kwargs.get("size"):
                settings["size"] = normalise_settings({"size": dict(kwargs["size"])})["size"]
            batch = make_batched_videos(videos)
            all_patches, grids = [], []
            for video in batch:
                patches, grid = preprocess_video(frames_array(video), settings)
                all_patches.append(torch.from_numpy(patches))
                grids.append(list(grid))
            data: dict[str, Any] = {
                "pixel_values_videos": torch.cat(all_patches, dim=0),
                "video_grid_thw": torch.tensor(grids, dtype=torch.long),
            }
            if kwargs.get("return_metadata"):
                metadata = kwargs.get("video_metadata")
                if metadata is None:
                    metadata = [VideoMetadata(total_num_frames=len(v)) for v in batch]
                metadata = [VideoMetadata(**m) if isinstance(m, dict) else m for m in _flat(metadata)]
                if len(metadata) != len(batch):
                    raise ValueError(f"{len(batch)} videos but {len(metadata)} video_metadata entries")
                data["video_metadata"] = metadata
            return BatchFeature(data=data, skip_tensor_conversion=["video_metadata"])

        def to_dict(self) -> dict[str, Any]:
            # Saved as the settings of the HF class it stands in for, so that transformers with torchvision
            # loads a saved processor with its own video processor.
            return {**self.settings, "video_processor_type": "Qwen2VLVideoProcessor"}

        def __repr__(self) -> str:
            return f"QwenVideoProcessor({self.settings})"

    return QwenVideoProcessor


def _flat(metadata: Any) -> list[Any]:
    if not isinstance(metadata, (list, tuple)):
        return [metadata]
    out: list[Any] = []
    for item in metadata:
        out.extend(_flat(item) if isinstance(item, (list, tuple)) else [item])
    return out


def is_torchvision_free(video_processor: Any) -> bool:
    return bool(getattr(video_processor, "torchvision_free", False))


def build_video_processor(path: str | Path) -> Any:
    """A `QwenVideoProcessor` with the checkpoint's video settings (see the module docstring for the order)."""
    settings, _ = settings_from_checkpoint(path)
    return video_processor_class()(**settings)


def video_metadata(sampled: Any) -> Any:
    """A transformers `VideoMetadata` for a `vlmkit.core.video.SampledVideo` (frame rate, count, indices)."""
    from transformers.video_utils import VideoMetadata

    return VideoMetadata(
        total_num_frames=sampled.total_frames,
        fps=sampled.video_fps or None,
        width=sampled.width,
        height=sampled.height,
        duration=sampled.duration or None,
        video_backend="opencv",
        frames_indices=list(sampled.indices),
    )


@lru_cache(maxsize=None)
def with_torchvision_free_video(cls: type) -> type:
    """A subclass of processor class `cls` (same name and signature) that accepts a `QwenVideoProcessor`.

    transformers checks each sub-processor's class by looking `VideoProcessorMixin` up in its top-level
    namespace, which has no such name without torchvision; only that check is widened, for this video processor.
    """

    def check_argument_for_proper_class(self: Any, argument_name: str, argument: Any) -> Any:
        if argument_name == "video_processor" and is_torchvision_free(argument):
            return type(argument)
        return cls.check_argument_for_proper_class(self, argument_name, argument)

    namespace = {
        "check_argument_for_proper_class": check_argument_for_proper_class,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "torchvision_free_video": True,
    }
    return type(cls.__name__, (cls,), namespace)


def load_qwen_processor(path: str, **hub_kwargs: Any) -> Any:
    """The checkpoint's processor class (Qwen2VLProcessor, Qwen2_5_VLProcessor, Qwen2_5OmniProcessor) built with
    its image processor, tokenizer, feature extractor where it takes one, and a `QwenVideoProcessor`."""
    import inspect

    from transformers import AutoFeatureExtractor, AutoImageProcessor, AutoTokenizer

    from vlm.local.processors import processor_class_for

    cls = processor_class_for(path, **hub_kwargs)
    if cls is None:
        raise ValueError(f"{path}: no processor class named in the checkpoint")
    processor_dict, _ = cls.get_processor_dict(path, **hub_kwargs)
    params = inspect.signature(cls.__init__).parameters
    if "video_processor" not in params:
        raise ValueError(f"{path}: {cls.__name__} takes no video processor")
    parts: dict[str, Any] = {
        "image_processor": AutoImageProcessor.from_pretrained(path, **hub_kwargs),
        "tokenizer": AutoTokenizer.from_pretrained(path, **hub_kwargs),
        "video_processor": build_video_processor(path),
    }
    if "feature_extractor" in params:
        parts["feature_extractor"] = AutoFeatureExtractor.from_pretrained(path, **hub_kwargs)
    skip = set(parts) | {"self", "chat_template", "args", "kwargs"}
    extra = {k: v for k, v in processor_dict.items() if k in params and k not in skip}
    return with_torchvision_free_video(cls)(**parts, chat_template=processor_dict.get("chat_template"), **extra)
