"""Real video and audio files for tests, written with opencv and soundfile in the test session.

`write_video` makes an mp4 (mp4v) whose frame i is filled with `frame_colour(i)`: colours far apart, so a decoded
(lossy) frame is recognised by `nearest_frame`. `write_tone` writes a sine wave in any format soundfile writes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

# 16 colours far apart in RGB (corners and edge midpoints of the colour cube).
_PALETTE = [
    (0, 0, 0), (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 0, 255), (0, 255, 255), (255, 255, 255),
    (128, 0, 0), (0, 128, 0), (0, 0, 128), (128, 128, 0), (128, 0, 128), (0, 128, 128), (128, 128, 128),
    (255, 128, 0),
]


def frame_colour(i: int) -> tuple[int, int, int]:
    return _PALETTE[i % len(_PALETTE)]


def write_video(
    path: Path,
    frames: int = 16,
    fps: float = 8.0,
    size: tuple[int, int] = (64, 48),
    colour: Callable[[int], tuple[int, int, int]] = frame_colour,
) -> Path:
    """An mp4v video of `frames` solid-colour frames (frame i has `colour(i)`), `size` = (width, height)."""
    import cv2

    width, height = size
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
    assert writer.isOpened(), "opencv cannot write mp4v here"
    for i in range(frames):
        r, g, b = colour(i)
        writer.write(np.full((height, width, 3), (b, g, r), dtype=np.uint8))  # opencv frames are BGR
    writer.release()
    return path


def nearest_frame(rgb: tuple[int, int, int] | np.ndarray) -> int:
    """The palette index whose colour is nearest to `rgb` (a decoded frame's mean colour)."""
    colour = np.asarray(rgb, dtype=float)
    return int(np.argmin([np.sum((colour - np.asarray(c)) ** 2) for c in _PALETTE]))


def write_tone(path: Path, *, seconds: float = 0.5, rate: int = 16000, freq: float = 440.0, channels: int = 1) -> Path:
    """A sine tone at amplitude 0.5 (channel c has amplitude 0.5 / (c + 1)); the format follows the extension."""
    import soundfile as sf

    t = np.arange(int(round(seconds * rate))) / rate
    wave = 0.5 * np.sin(2 * np.pi * freq * t)
    data = np.stack([wave / (c + 1) for c in range(channels)], axis=1) if channels > 1 else wave
    sf.write(str(path), data.astype(np.float32), rate)
    return path
