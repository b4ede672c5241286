"""Videos whose frames say their own number, for checking which frames a sampler took.

Frame i is a solid colour with red 16 + 32 * (i % 8), green 16 + 32 * (i // 8 % 8) and blue 16 + 32 * (i // 64)
(up to 512 frames; levels 32 apart, so neither mp4v's loss nor a decoder's YUV conversion moves a frame to its
neighbour); `frame_number(image)` reads the number back. Frame folders
(MVBench's `00001.jpg`, ...) carry the file's number the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tests.support.media_files import write_video


def index_colour(i: int) -> tuple[int, int, int]:
    if not 0 <= i < 512:
        raise ValueError(f"frame {i}: an indexed video holds frames 0..511")
    return 16 + 32 * (i % 8), 16 + 32 * (i // 8 % 8), 16 + 32 * (i // 64)


def frame_number(image: Any) -> int:
    """The number a decoded frame (PIL image or RGB array) shows."""
    r, g, b = (int(round((c - 16) / 32)) for c in np.asarray(image, dtype=float).reshape(-1, 3).mean(axis=0))
    return r + 8 * g + 64 * b


def write_indexed_video(path: Path, frames: int, fps: float = 10.0, size: tuple[int, int] = (48, 32)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_video(path, frames=frames, fps=fps, size=size, colour=index_colour)


def write_indexed_folder(folder: Path, frames: int, size: tuple[int, int] = (48, 32)) -> Path:
    """`00001.jpg` .. : file k shows number k."""
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    width, height = size
    for k in range(1, frames + 1):
        r, g, b = index_colour(k)
        cv2.imwrite(str(folder / f"{k:05d}.jpg"), np.full((height, width, 3), (b, g, r), dtype=np.uint8),
                    [cv2.IMWRITE_JPEG_QUALITY, 95])
    return folder
