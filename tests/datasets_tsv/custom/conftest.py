"""Fixtures for the custom-dataset tests: the seed example files, and real media made in the test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# The media files the seed's mm_custom scenes name (their jsonl fixtures use these basenames as relative paths).
SEED_IMAGES = ("59027d7563eba210.jpg", "8abf34fc9c4016a6.jpg", "cd34jojof2334jo34.jpg")
SEED_VIDEOS = ("93.mp4", "83.mp4")
SEED_AUDIO = ("f1874_0_cough.wav", "m1855_0_sniff.wav")


def make_image(path: Path, colour: str = "red", size: tuple[int, int] = (32, 24)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = "PNG" if path.suffix.lower() == ".png" else "JPEG"
    Image.new("RGB", size, colour).save(path, format=fmt)
    return path


def make_video(path: Path, frames: int = 6, size: tuple[int, int] = (32, 24), fps: float = 4.0) -> Path:
    import cv2

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, size)
    assert writer.isOpened(), "opencv cannot write mp4v here"
    for k in range(frames):
        frame = np.full((size[1], size[0], 3), (k * 40) % 256, dtype=np.uint8)
        writer.write(frame)
    writer.release()
    assert path.stat().st_size > 0
    return path


def make_audio(path: Path, seconds: float = 0.25, rate: int = 16000) -> Path:
    import soundfile as sf

    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * rate)) / rate
    sf.write(str(path), 0.2 * np.sin(2 * np.pi * 440 * t), rate)
    return path


def make_seed_media(folder: Path) -> Path:
    """Every media file the seed scenes name, made for real in folder."""
    for colour, name in zip(("red", "green", "blue"), SEED_IMAGES):
        make_image(folder / name, colour)
    for name in SEED_VIDEOS:
        make_video(folder / name)
    for name in SEED_AUDIO:
        make_audio(folder / name)
    return folder


@pytest.fixture
def seed_mm(tmp_path: Path) -> Path:
    """A folder holding the seed's mm_custom jsonl files and the media they name."""
    folder = tmp_path / "mm_custom"
    folder.mkdir()
    for jsonl in (FIXTURES / "mm_custom").glob("*.jsonl"):
        shutil.copy(jsonl, folder / jsonl.name)
    return make_seed_media(folder)


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path
