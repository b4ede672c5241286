"""Video files made from other video material, for benchmarks whose rows point at part of a video or at frames.

Some benchmarks (MVBench) ask about seconds [start, end] of a longer video, keep a clip as a folder of numbered
JPEG frames, or ship GIFs. A model that takes the whole video (`video_url`) gets an ordinary mp4 file made from such
a row, once, and reused, as VLMEvalKit gives its video models a cut clip (the frames a model samples come from the
whole source with the bound, by the row's frame plan: `vlmkit.core.video.FramePlan`):

- `clip_file(source, start=, end=)`: the frames of `source` whose numbers fall in
  ``[round(start * fps), min(round(end * fps), last frame)]`` (VLMEvalKit's MVBench bound rule), at the source's
  frame rate. Without a bound the source is returned as it is (a GIF is still converted: see below).
- `frames_folder_clip(folder, fps=, start=, end=)`: the folder's JPEG files in name order as frames 1, 2, ...
  (VLMEvalKit numbers MVBench's frame folders from 1: `00001.jpg`), the bound applied to those numbers, written at
  `fps` frames per second.
- a `.gif` (which `vlmkit.core.message` reads as an image by its extension) becomes an mp4 at its own frame rate
  (25 when opencv reports none, the rate VLMEvalKit assumes for MVBench GIFs).

Files are written under `cache_dir` (the caller's choice), named by a digest of the source's real path, size,
mtime and the settings, atomically (a killed run leaves no half file under the final name). An empty selection is
a `VideoError` naming the file and the bound.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from vlmkit.core.video import VideoError

GIF_FPS = 25.0  # VLMEvalKit's MVBench reads GIFs as 25 fps
FRAME_SUFFIXES = (".jpg", ".jpeg", ".png")


def _digest(*parts: object) -> str:
    return hashlib.sha1(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:12]


def _stat_key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


def bound_range(start: float | None, end: float | None, fps: float, first: int, last: int) -> tuple[int, int]:
    """The first and last frame numbers (inclusive) of seconds [start, end] at `fps`, frames numbered first..last:
    VLMEvalKit's MVBench `get_index` bounds (`max(first, round(start * fps))`, `min(round(end * fps), last)`)."""
    lo = first if start is None else max(first, round(start * fps))
    hi = last if end is None else min(round(end * fps), last)
    return lo, hi


def _write_mp4(frames: Iterator[np.ndarray], fps: float, target: Path) -> int:
    """Write BGR frames (resized to the first frame's size) as an mp4v file, atomically; the number written."""
    import cv2

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.stem}.part-{os.getpid()}{target.suffix}")
    writer = None
    count = 0
    try:
        for frame in frames:
            if writer is None:
                height, width = frame.shape[:2]
                writer = cv2.VideoWriter(str(partial), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
                if not writer.isOpened():
                    raise VideoError(f"video {target}: opencv cannot write mp4 files here")
            if frame.shape[:2] != (height, width):
                frame = cv2.resize(frame, (width, height))
            writer.write(frame)
            count += 1
    finally:
        if writer is not None:
            writer.release()
    if count:
        os.replace(partial, target)
    elif partial.exists():
        partial.unlink()
    return count


def _capture_frames(source: Path, lo: int, hi: int) -> Iterator[np.ndarray]:
    import cv2

    capture = cv2.VideoCapture(str(source))
    try:
        position = 0
        if lo > 0:
            capture.set(cv2.CAP_PROP_POS_FRAMES, lo)
            position = int(capture.get(cv2.CAP_PROP_POS_FRAMES) or 0)
            if position != lo:  # the container cannot seek: read forward from the start
                capture.release()
                capture = cv2.VideoCapture(str(source))
                position = 0
        while position <= hi:
            ok, frame = capture.read()
            if not ok or frame is None:
                return
            if position >= lo:
                yield frame
            position += 1
    finally:
        capture.release()


def _video_facts(source: Path) -> tuple[float, int]:
    """(frame rate, frame count) as opencv reports them; VideoError when it cannot open the file."""
    import cv2

    if not source.is_file():
        raise VideoError(f"video {source}: no such file")
    capture = cv2.VideoCapture(str(source))
    try:
        if not capture.isOpened():
            raise VideoError(f"video {source}: opencv cannot open it (not a video, or a codec opencv lacks)")
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    finally:
        capture.release()
    if total <= 0:  # containers that do not state it (some GIFs): count
        total = sum(1 for _ in _capture_frames(source, 0, 10**9))
    return (fps if math.isfinite(fps) and fps > 0 else 0.0), total


def clip_file(source: str | os.PathLike[str], *, start: float | None = None, end: float | None = None,
              cache_dir: str | os.PathLike[str]) -> Path:
    """Seconds [start, end] of a video as an mp4 under cache_dir (see the module docstring); the source itself when
    there is no bound and it is not a GIF."""
    file = Path(source)
    is_gif = file.suffix.lower() == ".gif"
    if start is None and end is None and not is_gif:
        if not file.is_file():
            raise VideoError(f"video {file}: no such file")
        return file
    fps, total = _video_facts(file)
    if fps <= 0:
        if not is_gif and (start is not None or end is not None):
            raise VideoError(f"video {file}: opencv reports no frame rate, so seconds {start}..{end} cannot be cut")
        fps = GIF_FPS
    lo, hi = bound_range(start, end, fps, 0, total - 1)
    if hi < lo:
        raise VideoError(f"video {file}: seconds {start}..{end} select no frame ({total} frames at {fps:g} fps)")
    target = Path(cache_dir) / f"{file.stem[:60]}-{_digest(*_stat_key(file), lo, hi, fps)}.mp4"
    if target.is_file():
        return target
    if not _write_mp4(_capture_frames(file, lo, hi), fps, target):
        raise VideoError(f"video {file}: no frame could be decoded in frames {lo}..{hi}")
    return target


def folder_frames(folder: Path) -> list[Path]:
    """The frame files of a frame folder, in name order."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in FRAME_SUFFIXES)


def frames_folder_clip(folder: str | os.PathLike[str], *, fps: float, start: float | None = None,
                       end: float | None = None, cache_dir: str | os.PathLike[str]) -> Path:
    """A folder of numbered frames (1, 2, ... in name order) as an mp4 at `fps`, bounded to seconds [start, end]
    (see the module docstring)."""
    import cv2

    path = Path(folder)
    if not path.is_dir():
        raise VideoError(f"frame folder {path}: no such folder")
    files = folder_frames(path)
    if not files:
        raise VideoError(f"frame folder {path}: no .jpg/.png frame in it")
    lo, hi = bound_range(start, end, fps, 1, len(files))
    if hi < lo:
        raise VideoError(f"frame folder {path}: seconds {start}..{end} select no frame ({len(files)} at {fps:g} fps)")
    chosen = files[lo - 1:hi]
    newest = max(p.stat().st_mtime_ns for p in chosen)
    target = Path(cache_dir) / f"{path.name[:60]}-{_digest(path.resolve(), len(files), newest, lo, hi, fps)}.mp4"
    if target.is_file():
        return target

    def frames() -> Iterator[np.ndarray]:
        for file in chosen:
            frame = cv2.imread(str(file), cv2.IMREAD_COLOR)
            if frame is None:
                raise VideoError(f"frame {file}: opencv cannot read it")
            yield frame

    _write_mp4(frames(), fps, target)
    return target
