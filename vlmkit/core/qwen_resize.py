"""The Qwen2-VL processor's resize rule (`smart_resize`), written once: the local video processor resizes frames with
it, and GUI grounding maps a click given in the resized image's pixels back to the screenshot."""

from __future__ import annotations

import math

QWEN2VL_FACTOR = 28  # patch 14 x spatial merge 2
QWEN2VL_MIN_PIXELS = 56 * 56  # the Qwen2-VL image processor's defaults
QWEN2VL_MAX_PIXELS = 28 * 28 * 1280


def smart_resize(height: int, width: int, factor: int = QWEN2VL_FACTOR, min_pixels: int = QWEN2VL_MIN_PIXELS,
                 max_pixels: int = QWEN2VL_MAX_PIXELS) -> tuple[int, int]:
    """(height, width) after the resize: each side rounded to a multiple of `factor`, then scaled (keeping the aspect)
    so that the area lies within [min_pixels, max_pixels]. Sides must be positive and the aspect ratio at most 200,
    as in the processor."""
    if height <= 0 or width <= 0:
        raise ValueError(f"image size {width}x{height}: both sides must be positive")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"image size {width}x{height}: aspect ratio above 200 is not supported")
    h_bar, w_bar = round(height / factor) * factor, round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar
