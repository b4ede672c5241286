"""Video frames sampled with opencv: evenly by count (`nframe`) or by time (`fps`), with their timestamps.

Sampling rule (one rule for both settings, so a frame always stands for the middle of the stretch it covers):
the video is cut into n equal stretches and the frame at the centre of each is taken,
``index_i = floor((i + 0.5) * total_frames / n)`` for i in 0..n-1.
- ``nframe=N``: n = N. A video with fewer than N frames gives each of its frames once (never duplicates).
- ``fps=F``: n = max(1, round(duration * F)) (one frame per 1/F seconds), at most the video's frame count.
Exactly one of the two is given. Timestamps are ``index / video_fps`` seconds.

Frames come back as RGB PIL images (`sample_frames`), as JPEG data URLs (`frame_data_urls`, for APIs), or as JPEG
files in a cache folder (`frame_files`). The cache folder defaults to ``<system temp>/vlmkit-frames`` (never the
user's data folder); a video's frames live in a subfolder keyed by the file's real path, size, mtime and the
sampling settings, so an edited video or other settings never reuse stale frames.

Only local files are sampled: a URL is a clear error (download it first, or send it as `video_url` to an API).
A file opencv cannot open, or one with no decodable frame, raises `VideoError` naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlmkit.core.files import write_bytes_atomic
from vlmkit.core.media import MediaError, bytes_to_b64, resize_longest_side
from vlmkit.core.message import is_url

_SEEK_GAP = 48  # frames: closer targets are reached by grabbing forward, farther ones by seeking
_FRAMES_META = "frames.json"


class VideoError(MediaError):
    """A video that cannot be sampled; the message names the file."""


@dataclass
class SampledVideo:
    """Frames taken from one video, with where they came from."""

    path: str
    frames: list[Image.Image]
    indices: list[int]  # frame numbers in the video, increasing
    timestamps: list[float]  # seconds from the start, one per frame
    video_fps: float  # the file's frame rate (0.0 when the container does not say)
    total_frames: int
    width: int
    height: int
    settings: dict[str, Any] = field(default_factory=dict)  # {"nframe": N} or {"fps": F}

    @property
    def duration(self) -> float:
        """Seconds (0.0 when the frame rate is unknown)."""
        return self.total_frames / self.video_fps if self.video_fps > 0 else 0.0

    @property
    def sampled_fps(self) -> float:
        """Frames taken per second of video (what Qwen2.5-VL's temporal positions are based on)."""
        return len(self.frames) / self.duration if self.duration > 0 else 0.0

    def array(self) -> np.ndarray:
        """The frames as one uint8 array of shape (frames, height, width, 3)."""
        return np.stack([np.asarray(frame.convert("RGB"), dtype=np.uint8) for frame in self.frames])

    def metadata(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "video_fps": self.video_fps,
            "total_frames": self.total_frames,
            "duration": round(self.duration, 6),
            "width": self.width,
            "height": self.height,
            "indices": list(self.indices),
            "timestamps": [round(t, 6) for t in self.timestamps],
            **self.settings,
        }


DEFAULT_NFRAME = 8  # frames per clip when neither --nframe nor --fps is given (VLMEvalKit's usual 8-frame setting)


def check_sampling(nframe: int | None, fps: float | None) -> dict[str, Any]:
    """{"nframe": N} or {"fps": F}; ValueError unless exactly one is given and it is positive."""
    if (nframe is None) == (fps is None):
        raise ValueError(f"give exactly one of nframe and fps (got nframe={nframe!r}, fps={fps!r})")
    if nframe is not None:
        if isinstance(nframe, bool) or not isinstance(nframe, int) or nframe < 1:
            raise ValueError(f"nframe must be a positive integer; got {nframe!r}")
        return {"nframe": nframe}
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
        raise ValueError(f"fps must be a positive number; got {fps!r}")
    return {"fps": float(fps)}


def frame_indices(total_frames: int, video_fps: float, *, nframe: int | None = None, fps: float | None = None) -> list[int]:
    """The frame numbers the sampling rule picks (see the module docstring)."""
    settings = check_sampling(nframe, fps)
    if total_frames < 1:
        return []
    if "nframe" in settings:
        n = min(settings["nframe"], total_frames)
    else:
        if video_fps <= 0:
            raise ValueError("sampling by fps needs the video's frame rate, and this video does not state one")
        n = min(total_frames, max(1, round(total_frames / video_fps * settings["fps"])))
    return sorted({min(total_frames - 1, int((i + 0.5) * total_frames / n)) for i in range(n)})


def _local_file(value: str | os.PathLike[str]) -> Path:
    text = os.fspath(value)
    if text.startswith("data:") or is_url(text):
        shown = text if len(text) <= 80 else text[:80] + "..."
        raise VideoError(f"video {shown}: frames are sampled from local files only; download it first")
    path = Path(text)
    if not path.is_file():
        raise VideoError(f"video {text}: no such file")
    return path


def _open(path: Path) -> Any:
    import cv2

    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        capture.release()
        raise VideoError(f"video {path}: opencv cannot open it (not a video, or a codec opencv lacks)")
    return capture


def _count_frames(capture: Any) -> int:
    """Frames by decoding through the file: for containers that do not state their frame count."""
    count = 0
    while count < 10_000_000 and capture.grab():
        count += 1
    return count


def _read_frames(capture: Any, indices: Sequence[int]) -> tuple[list[int], list[np.ndarray]]:
    """(indices read, BGR frames), reading in order; stops early when the file ends before a wanted frame."""
    import cv2

    got_indices: list[int] = []
    frames: list[np.ndarray] = []
    position = 0
    for index in indices:
        if index - position > _SEEK_GAP:
            capture.set(cv2.CAP_PROP_POS_FRAMES, index)
            position = index
        while position < index:
            if not capture.grab():
                return got_indices, frames
            position += 1
        ok, frame = capture.read()
        if not ok or frame is None:
            return got_indices, frames
        position += 1
        got_indices.append(index)
        frames.append(frame)
    return got_indices, frames


def probe_video(path: str | os.PathLike[str]) -> dict[str, Any]:
    """{"video_fps", "total_frames", "width", "height"} of a local video opencv can open and decode a frame of;
    VideoError naming the file otherwise."""
    import cv2

    file = _local_file(path)
    capture = _open(file)
    try:
        ok, frame = capture.read()
        if not ok or frame is None:
            raise VideoError(f"video {file}: no frame could be decoded")
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        return {
            "video_fps": fps if math.isfinite(fps) and fps > 0 else 0.0,
            "total_frames": int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0),
            "width": int(frame.shape[1]),
            "height": int(frame.shape[0]),
        }
    finally:
        capture.release()


def sample_frames(path: str | os.PathLike[str], *, nframe: int | None = None, fps: float | None = None) -> SampledVideo:
    """Frames of a local video as RGB PIL images, chosen by `nframe` or `fps` (exactly one)."""
    import cv2

    settings = check_sampling(nframe, fps)
    file = _local_file(path)
    capture = _open(file)
    try:
        video_fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        video_fps = video_fps if math.isfinite(video_fps) and video_fps > 0 else 0.0
        total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        if total <= 0:
            total = _count_frames(capture)
            capture.release()
            capture = _open(file)
        try:
            indices = frame_indices(total, video_fps, **settings)
        except ValueError as exc:
            raise VideoError(f"video {file}: {exc}") from None
        got, bgr = _read_frames(capture, indices)
        if len(got) < len(indices) and got:
            # The container over-stated its frame count: count what is really there and sample again.
            capture.release()
            capture = _open(file)
            total = _count_frames(capture)
            capture.release()
            capture = _open(file)
            got, bgr = _read_frames(capture, frame_indices(total, video_fps, **settings))
    finally:
        capture.release()
    if not bgr:
        raise VideoError(f"video {file}: no frame could be decoded")
    frames = [Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)) for frame in bgr]
    timestamps = [i / video_fps if video_fps > 0 else 0.0 for i in got]
    return SampledVideo(
        path=str(file),
        frames=frames,
        indices=got,
        timestamps=timestamps,
        video_fps=video_fps,
        total_frames=total,
        width=frames[0].width,
        height=frames[0].height,
        settings=settings,
    )


def _jpeg(image: Image.Image, quality: int) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def frame_data_urls(
    path: str | os.PathLike[str],
    *,
    nframe: int | None = None,
    fps: float | None = None,
    max_side: int | None = None,
    quality: int = 90,
) -> list[str]:
    """The sampled frames as JPEG data URLs, in time order (shrunk to `max_side` when that is set)."""
    video = sample_frames(path, nframe=nframe, fps=fps)
    frames = [resize_longest_side(f, max_side) if max_side else f for f in video.frames]
    return ["data:image/jpeg;base64," + bytes_to_b64(_jpeg(f, quality)) for f in frames]


def default_cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / "vlmkit-frames"


def _cache_key(file: Path, settings: dict[str, Any], quality: int) -> str:
    stat = file.stat()
    ident = json.dumps([str(file.resolve()), stat.st_size, stat.st_mtime_ns, settings, quality], sort_keys=True)
    return hashlib.sha1(ident.encode()).hexdigest()[:16]


def frame_files(
    path: str | os.PathLike[str],
    *,
    nframe: int | None = None,
    fps: float | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    quality: int = 90,
) -> list[Path]:
    """The sampled frames as JPEG files under `cache_dir` (default `default_cache_dir()`), reused when cached.

    The frames of one video and setting live in ``<cache_dir>/<stem>-<key>/frame_<index>.jpg`` with a
    ``frames.json`` written last (the metadata of `SampledVideo.metadata()`); a folder without it is redone.
    """
    settings = check_sampling(nframe, fps)
    file = _local_file(path)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    folder = folder / f"{file.stem[:40]}-{_cache_key(file, settings, quality)}"
    meta_file = folder / _FRAMES_META
    if meta_file.is_file():
        try:
            names = json.loads(meta_file.read_text())["files"]
            paths = [folder / name for name in names]
            if paths and all(p.is_file() for p in paths):
                return paths
        except (ValueError, KeyError, TypeError):
            pass
    video = sample_frames(file, **settings)
    paths = []
    for index, frame in zip(video.indices, video.frames):
        target = folder / f"frame_{index:07d}.jpg"
        write_bytes_atomic(target, _jpeg(frame, quality))
        paths.append(target)
    meta = {**video.metadata(), "files": [p.name for p in paths]}
    write_bytes_atomic(meta_file, json.dumps(meta, indent=1).encode())
    return paths
