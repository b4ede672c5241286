"""Loading a local transformers model, offline: where its files are, where it runs, its processor and its model.

- Files: a local folder, or a Hugging Face repo id looked up in the cache (`resolve_model_path`). Nothing here
  touches the network: a repo id that is not in the cache is a clear one-line error saying how to get the weights,
  never a download attempt or a hang.
- Placement: device and torch dtype (`pick_device_dtype`).
- The processor for chat generation (`load_chat_processor`: left padding, a pad token, a chat template) and the
  model (`load_image_text_model`), as `vlm.local.generic.HFVisionModel` uses them.

torch and transformers are imported inside the functions, not when this module is imported.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vlm.local.processors import load_processor
from vlm.local.qwen_video import QWEN_VIDEO_MODEL_TYPES, load_qwen_processor
from vlmkit.core.config import hf_hub_cache
from vlmkit.core.errors import ConfigError


class ModelNotFoundError(FileNotFoundError):
    """The model's files are not on this machine; the message says where the kit looked and what to do."""


def _looks_like_path(model_path: str) -> bool:
    return (
        model_path.startswith((".", "~", os.sep))
        or os.path.isabs(model_path)
        or model_path.count("/") > 1
        or (os.sep != "/" and os.sep in model_path)
    )


def _check_model_dir(path: Path, what: str) -> Path:
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(f"{what} ({path}) holds no config.json: not a transformers model folder")
    return path


def resolve_model_path(model_path: str, cache_dir: str | Path | None = None) -> Path:
    """The folder holding the model's config, weights and processor files.

    An existing folder is used as is. Anything else is taken as a Hugging Face repo id and looked up in the hub
    cache (`cache_dir`, default `vlmkit.core.config.hf_hub_cache()`) without network access.
    """
    if not model_path or not model_path.strip():
        raise ModelNotFoundError("empty model path: pass a model folder or a Hugging Face repo id")
    local = Path(model_path).expanduser()
    if local.is_dir():
        return _check_model_dir(local.resolve(), f"model folder {model_path}")
    if local.exists():
        raise ModelNotFoundError(f"model path {model_path} is a file; pass the folder that holds config.json")
    if _looks_like_path(model_path):
        raise ModelNotFoundError(f"model folder {model_path} does not exist")
    cache = Path(cache_dir).expanduser() if cache_dir is not None else hf_hub_cache()
    snapshot = _cached_snapshot(model_path, cache)
    if snapshot is None:
        raise ModelNotFoundError(
            f"model weights for {model_path} not found locally (looked in {cache}); download them with "
            f"`hf download {model_path}` or pass --model-path DIR"
        )
    return _check_model_dir(snapshot, f"cached snapshot of {model_path}")


def _cached_snapshot(repo_id: str, cache: Path) -> Path | None:
    """The cached snapshot folder of a repo (offline lookup); None when the repo is not in the cache."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    if not cache.is_dir():
        return None
    try:
        return Path(snapshot_download(repo_id, cache_dir=str(cache), local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, FileNotFoundError, OSError):
        return None


def model_type(path: str) -> str | None:
    """config.json's model_type (None when it cannot be read; loading the model will then say why)."""
    try:
        with open(f"{path}/config.json", encoding="utf-8") as handle:
            value = json.load(handle).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def pick_device_dtype(device: str | None, dtype: str) -> tuple[str, Any]:
    """cuda with bfloat16 when a GPU is there, else cpu with float32; explicit choices win.

    device="auto" spreads the model over the visible GPUs (transformers' device_map="auto", needs accelerate).
    """
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype == "auto":
        on_gpu = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
        bf16 = on_gpu and torch.cuda.is_bf16_supported()
        return device, (torch.bfloat16 if bf16 else torch.float16 if on_gpu else torch.float32)
    return device, getattr(torch, dtype)


def load_chat_processor(local_path: str, *, model_type: str | None, model_path: str) -> Any:
    """The checkpoint's multimodal processor, ready for batched chat generation: the tokenizer pads on the left
    and has a pad token, and the processor has a chat template (the tokenizer's when it has none of its own).

    Qwen2-VL-style model types get the kit's torchvision-free video processor (`vlm.local.qwen_video`). ValueError,
    naming `model_path`, for a checkpoint with only a tokenizer or with no chat template anywhere."""
    from transformers import PreTrainedTokenizerBase

    if model_type in QWEN_VIDEO_MODEL_TYPES:
        processor = load_qwen_processor(local_path, local_files_only=True)
    else:
        processor = load_processor(local_path, local_files_only=True)
    if isinstance(processor, PreTrainedTokenizerBase):
        raise ValueError(f"{model_path}: has a tokenizer but no multimodal processor; not a vision-language model")
    tokenizer = processor.tokenizer
    tokenizer.padding_side = "left"  # batched generation appends new tokens on the right
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(processor, "chat_template", None) is None:
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError(f"{model_path}: neither the processor nor the tokenizer has a chat template")
        processor.chat_template = tokenizer.chat_template
    return processor


def load_image_text_model(
    local_path: str, *, model_type: str | None, model_path: str, device: str, torch_dtype: Any
) -> Any:
    """AutoModelForImageTextToText; AutoModelForMultimodalLM for the few families registered only there.

    Placed on `device` in eval mode (device "auto": spread by transformers' device_map="auto"). A Qwen2.5-Omni
    checkpoint is refused with a ConfigError naming the class that runs it; ValueError, naming `model_path`, for a
    checkpoint neither auto class knows."""
    import transformers

    if model_type == "qwen2_5_omni":
        raise ConfigError(
            f"{model_path}: a Qwen2.5-Omni checkpoint: run it as --model qwen2.5-omni --model-path DIR "
            "(class vlm.local.audio_models.HFAudioModel, which runs its thinker only)"
        )
    placement = {"device_map": "auto"} if device == "auto" else {}
    tried = []
    for auto_name in ("AutoModelForImageTextToText", "AutoModelForMultimodalLM"):
        auto = getattr(transformers, auto_name, None)
        if auto is None:
            continue
        try:
            model = auto.from_pretrained(local_path, dtype=torch_dtype, local_files_only=True, **placement)
        except ValueError as exc:  # "Unrecognized configuration class ... for this kind of AutoModel"
            if "Unrecognized configuration class" not in str(exc):
                raise
            tried.append(auto_name)
            continue
        return (model if placement else model.to(device)).eval()
    raise ValueError(f"{model_path}: not an image-text-to-text model (no {' or '.join(tried)} class for it)")
