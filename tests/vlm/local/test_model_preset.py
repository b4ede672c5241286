"""vlm.local.model_preset called directly: a preset's values under the user's settings, pixel limits on a real
Qwen2-VL image processor (built from its defaults, no weights), per-call image settings, and the system turn."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from transformers import Qwen2VLImageProcessorPil

from vlm.local.model_preset import (
    apply_pixel_limits,
    image_call_kwargs,
    pixel_limits_in_use,
    preset_defaults,
    preset_values,
    with_system_turn,
)


def _processor() -> SimpleNamespace:
    """A processor holding a real Qwen2-VL image processor (defaults: 3136 .. 1003520 pixels)."""
    return SimpleNamespace(image_processor=Qwen2VLImageProcessorPil())


def test_preset_values() -> None:
    assert preset_values(None) == {}
    assert preset_values({"name": "p", "values": {"max_pixels": 100}}) == {"max_pixels": 100}
    assert preset_values({"name": "p"}) == {}
    with pytest.raises(TypeError, match="preset must be a dict with a `values` dict"):
        preset_values({"values": [1, 2]})


def test_the_users_settings_win_over_the_presets() -> None:
    values = {"max_new_tokens": 64, "system_prompt": "Preset.", "repetition_penalty": 1.05, "min_pixels": 10}
    mine = preset_defaults(values, max_new_tokens=8, system_prompt="Mine.", sampling={"repetition_penalty": 1.0})
    assert (mine.system_prompt, mine.sampling) == ("Mine.", {"repetition_penalty": 1.0})
    assert mine.overridden == ["max_new_tokens", "repetition_penalty", "system_prompt"]
    theirs = preset_defaults(values, max_new_tokens=None, system_prompt=None, sampling={"top_p": 0.9})
    assert (theirs.system_prompt, theirs.sampling) == ("Preset.", {"repetition_penalty": 1.05, "top_p": 0.9})
    assert theirs.overridden == []
    # an empty system prompt given by the user is still the user's
    assert preset_defaults(values, max_new_tokens=None, system_prompt="", sampling={}).system_prompt == ""


def test_pixel_limits_on_a_real_image_processor() -> None:
    processor = _processor()
    assert pixel_limits_in_use(processor) == {"min_pixels": 3136, "max_pixels": 1003520}
    assert apply_pixel_limits(processor, {"max_pixels": "401408", "other": 1}, "qwen2-vl") == {"max_pixels": 401408}
    assert pixel_limits_in_use(processor) == {"min_pixels": 3136, "max_pixels": 401408}
    assert processor.image_processor.size.longest_edge == 401408  # still the processor's own size type
    assert apply_pixel_limits(processor, {}, "qwen2-vl") == {}
    no_limits = SimpleNamespace(image_processor=SimpleNamespace(size={"height": 224, "width": 224}))
    assert pixel_limits_in_use(no_limits) is None
    with pytest.raises(ValueError, match=r"^llava: the preset sets max_pixels, min_pixels, but the image processor "
                                         r"\(SimpleNamespace\) keeps no pixel limits"):
        apply_pixel_limits(no_limits, {"min_pixels": 1, "max_pixels": 2}, "llava")


def test_image_settings_for_one_call() -> None:
    processor = _processor()
    assert image_call_kwargs(processor, None, "w") == {} and image_call_kwargs(processor, {}, "w") == {}
    # one limit replaced, the other kept; sent as a full size
    assert image_call_kwargs(processor, {"min_pixels": 1024}, "w") == {
        "size": {"shortest_edge": 1024, "longest_edge": 1003520}}
    assert image_call_kwargs(processor, {"do_resize": False}, "w") == {"do_resize": False}
    with pytest.raises(ValueError, match=r"^MME: the image processor \(Qwen2VLImageProcessorPil\) takes no "
                                         r"flip, zoom$"):
        image_call_kwargs(processor, {"zoom": 2, "flip": True}, "MME")
    no_limits = SimpleNamespace(image_processor=SimpleNamespace(size={"height": 224}))
    with pytest.raises(ValueError, match=r"^MME: sets max_pixels, but the image processor \(SimpleNamespace\) keeps "
                                         r"no pixel limits$"):
        image_call_kwargs(no_limits, {"max_pixels": 5}, "MME")


def test_system_turn() -> None:
    user = {"role": "user", "content": [{"type": "text", "value": "hi"}]}
    system = {"role": "system", "content": [{"type": "text", "value": "Own."}]}
    assert with_system_turn([user], "Be brief.") == [
        {"role": "system", "content": [{"type": "text", "value": "Be brief."}]}, user]
    assert with_system_turn([system, user], "Be brief.") == [system, user]  # the row's own wins
    assert with_system_turn([user], "") == [user] and with_system_turn([user], None) == [user]
    assert with_system_turn([], "S") == [{"role": "system", "content": [{"type": "text", "value": "S"}]}]
