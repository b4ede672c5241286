"""What a VLMEvalKit preset (`vlm.presets`) and a system prompt do to a local transformers model.

- Image resolution limits (min_pixels / max_pixels) go to a Qwen2-VL-style image processor (Qwen2-VL, Qwen2.5-VL,
  Qwen2.5-Omni): its `size` holds them as shortest_edge / longest_edge, in pixels, and every image is resized so
  that its area lies between them with sides multiples of patch * merge size, as qwen_vl_utils does for VLMEvalKit
  (which then hands the processor an image it leaves as is). Videos keep their own processor's limits. A preset
  with limits for a processor that has none fails loudly: data that cannot reach the model is an error.
- Generation settings are defaults under the user's: `--max-tokens` (or max_new_tokens passed to the model) and a
  setting passed by name win over the preset's.
- Per-dataset image settings (a prompt family's `processor_kwargs(dataset)`, `vlm.prompts`) become the image
  processor's arguments for that call only (`image_call_kwargs`): min_pixels / max_pixels merged into the pixel
  limits in use, other keys passed as they are when the image processor takes them.
- The system prompt (the user's, else the preset's) becomes a system turn before a conversation that has none;
  a row's own system turn wins. An empty text sends none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from vlmkit.core.message import Turn

_LIMIT_FIELDS = {"min_pixels": "shortest_edge", "max_pixels": "longest_edge"}


def preset_values(preset: dict[str, Any] | None) -> dict[str, Any]:
    """The preset's values (min_pixels, max_new_tokens, system_prompt, ...); {} for no preset."""
    if preset is None:
        return {}
    if not isinstance(preset, dict) or not isinstance(preset.get("values", {}), dict):
        raise TypeError(f"preset must be a dict with a `values` dict (vlm.presets.Preset.as_kwarg); got {preset!r}")
    return dict(preset.get("values") or {})


@dataclasses.dataclass(frozen=True)
class PresetDefaults:
    """A preset's generation settings under the user's (both local engines apply them alike)."""

    system_prompt: str | None  # the user's, else the preset's
    sampling: dict[str, Any]  # the preset's repetition_penalty, then the user's own sampling settings over it
    overridden: list[str]  # the preset values the user's settings replaced, for results.json


def preset_defaults(values: dict[str, Any], *, max_new_tokens: int | None, system_prompt: str | None,
                    sampling: dict[str, Any]) -> PresetDefaults:
    """What `values` (preset_values) leave once the user's max_new_tokens, system prompt and sampling settings
    (transformers' generate kwargs or vLLM's SamplingParams fields) are taken first."""
    overridden = sorted(
        k for k in values if (k == "max_new_tokens" and max_new_tokens is not None)
        or (k == "system_prompt" and system_prompt is not None) or k in sampling
    )
    return PresetDefaults(
        system_prompt=system_prompt if system_prompt is not None else values.get("system_prompt"),
        sampling={**{k: values[k] for k in ("repetition_penalty",) if k in values}, **sampling},
        overridden=overridden,
    )


def apply_pixel_limits(processor: Any, limits: dict[str, int], where: str) -> dict[str, int]:
    """Set min_pixels / max_pixels on the processor's image processor; returns what was set ({} when no limits).

    ValueError (naming `where`) when the image processor keeps no such limits."""
    wanted = {k: int(v) for k, v in limits.items() if k in _LIMIT_FIELDS}
    if not wanted:
        return {}
    image_processor = getattr(processor, "image_processor", None)
    size = getattr(image_processor, "size", None)
    current = _as_dict(size)
    if current is None or not all(current.get(field) for field in _LIMIT_FIELDS.values()):
        raise ValueError(
            f"{where}: the preset sets {', '.join(sorted(wanted))}, but the image processor "
            f"({type(image_processor).__name__}) keeps no pixel limits (size: {size!r})"
        )
    updated = {**current, **{_LIMIT_FIELDS[k]: v for k, v in wanted.items()}}
    image_processor.size = type(size)(**updated) if dataclasses.is_dataclass(size) else updated
    return wanted


def image_call_kwargs(processor: Any, settings: dict[str, Any] | None, where: str) -> dict[str, Any]:
    """The processor call's `images_kwargs` for per-dataset image settings ({} when there are none).

    min_pixels / max_pixels replace the matching limit in use (the other one stays) and go as a full `size`; any
    other key must be an argument the image processor names in its `valid_kwargs`. ValueError (naming `where`)
    for a setting the image processor cannot take."""
    if not settings:
        return {}
    image_processor = getattr(processor, "image_processor", None)
    out: dict[str, Any] = {}
    limits = {k: int(v) for k, v in settings.items() if k in _LIMIT_FIELDS}
    if limits:
        current = pixel_limits_in_use(processor)
        if current is None:
            raise ValueError(f"{where}: sets {', '.join(sorted(limits))}, but the image processor "
                             f"({type(image_processor).__name__}) keeps no pixel limits")
        merged = {**current, **limits}
        out["size"] = {_LIMIT_FIELDS[k]: merged[k] for k in _LIMIT_FIELDS}
    others = {k: v for k, v in settings.items() if k not in _LIMIT_FIELDS}
    valid = set(getattr(getattr(image_processor, "valid_kwargs", None), "__annotations__", {}))
    unknown = sorted(set(others) - valid)
    if unknown:
        raise ValueError(f"{where}: the image processor ({type(image_processor).__name__}) takes no "
                         f"{', '.join(unknown)}")
    out.update(others)
    return out


def pixel_limits_in_use(processor: Any) -> dict[str, int] | None:
    """The image processor's min_pixels / max_pixels as it will resize (None when it keeps none)."""
    current = _as_dict(getattr(getattr(processor, "image_processor", None), "size", None))
    if current is None or not all(current.get(field) for field in _LIMIT_FIELDS.values()):
        return None
    return {key: int(current[field]) for key, field in _LIMIT_FIELDS.items()}


def _as_dict(size: Any) -> dict[str, Any] | None:
    if isinstance(size, dict):
        return dict(size)
    if dataclasses.is_dataclass(size) and not isinstance(size, type):
        return dataclasses.asdict(size)
    return None


def with_system_turn(turns: Sequence[Turn], system_prompt: str | None) -> list[Turn]:
    """The conversation with a system turn first, unless it has its own or the prompt is None or empty."""
    turns = list(turns)
    if not system_prompt or (turns and turns[0]["role"] == "system"):
        return turns
    return [{"role": "system", "content": [{"type": "text", "value": system_prompt}]}, *turns]
