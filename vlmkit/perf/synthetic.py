"""`--synthetic-image WxH[,COUNT]` and `--synthetic-video WxHxFRAMES`: requests with media of a chosen size and no
dataset (as vLLM's `random-mm`, guidellm's synthetic image/video and EvalScope's `random_vl` make them). With neither
(and no other source), `--prefix-share` requests are text only: "Request r: write a short story." after the prefix.

Each row is its own request: COUNT images (and/or one video) of random pixels, then a short text naming the row, so
that no two rows share an image or a prompt (a server's multimodal or prefix cache must not turn a payload test into
a cache test; `--prefix-share` is the way to ask for shared prefixes). Random pixels are the worst case for an
image codec, as in vLLM's random-mm: the payload a server decodes is as large as the size asked can make it.

Deterministic: row r's pixels come from numpy's PCG64 seeded with (seed, r), so the same seed sends the same bytes.
Images are JPEG (quality 90) data URLs, built when the dataset is built (before timing). A video is an MJPG .avi file
of FRAMES frames at 8 fps in a folder of its own (removed by `close()`): the run's `--video-mode` decides how it is
sent (`frames`: --nframe frames sampled from it, as a dataset's video is; `video_url`: the whole file).
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlmkit.perf.options import PerfInputError

VIDEO_FPS = 8
JPEG_QUALITY = 90
MAX_SIDE = 8192
MAX_COUNT = 64
MAX_FRAMES = 4096
DEFAULT_ROWS = 64  # rows when the run's length is a duration (request n uses row n % rows)
_IMAGE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*(?:,\s*(\d+)\s*)?$")
_VIDEO = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*$")


@dataclass(frozen=True)
class MediaSpec:
    """Width and height in pixels; `count`: images per request, or frames of the one video."""

    width: int
    height: int
    count: int


def _check_side(flag: str, text: str, width: int, height: int) -> None:
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise PerfInputError(f"{flag} {text!r}: width and height must be 1..{MAX_SIDE} pixels")


def parse_image_spec(text: str) -> MediaSpec:
    """`512x512` (one image a request) or `512x512,3` (three)."""
    found = _IMAGE.match(text)
    if not found:
        raise PerfInputError(f"--synthetic-image {text!r}: expected WxH or WxH,COUNT, e.g. 512x512,2")
    width, height, count = int(found.group(1)), int(found.group(2)), int(found.group(3) or 1)
    _check_side("--synthetic-image", text, width, height)
    if not 1 <= count <= MAX_COUNT:
        raise PerfInputError(f"--synthetic-image {text!r}: COUNT must be 1..{MAX_COUNT}")
    return MediaSpec(width, height, count)


def parse_video_spec(text: str) -> MediaSpec:
    """`320x240x16`: one video a request, 320x240 pixels, 16 frames."""
    found = _VIDEO.match(text)
    if not found:
        raise PerfInputError(f"--synthetic-video {text!r}: expected WxHxFRAMES, e.g. 320x240x16")
    width, height, frames = (int(g) for g in found.groups())
    _check_side("--synthetic-video", text, width, height)
    if not 1 <= frames <= MAX_FRAMES:
        raise PerfInputError(f"--synthetic-video {text!r}: FRAMES must be 1..{MAX_FRAMES}")
    return MediaSpec(width, height, frames)


def _pixels(seed: int, row: int, item: int, width: int, height: int) -> Any:
    import numpy as np

    rng = np.random.Generator(np.random.PCG64([seed, row, item]))
    return rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)


def image_data_url(seed: int, row: int, item: int, width: int, height: int) -> str:
    """Row `row`'s image `item` as a JPEG data URL (the same bytes for the same arguments)."""
    from PIL import Image

    from vlmkit.core.media import bytes_to_b64

    buffer = io.BytesIO()
    Image.fromarray(_pixels(seed, row, item, width, height)).save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return "data:image/jpeg;base64," + bytes_to_b64(buffer.getvalue())


def write_video(path: Path, seed: int, row: int, spec: MediaSpec) -> Path:
    """Row `row`'s video: spec.count random frames, MJPG in an .avi at VIDEO_FPS (opencv)."""
    import cv2

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), VIDEO_FPS, (spec.width, spec.height))
    if not writer.isOpened():
        raise PerfInputError(f"--synthetic-video: opencv cannot write an MJPG video at {path}")
    try:
        for frame in range(spec.count):
            writer.write(_pixels(seed, row, frame, spec.width, spec.height))
    finally:
        writer.release()
    return path


class SyntheticDataset:
    """The runner's dataset protocol over generated rows (see the module's docstring)."""

    def __init__(self, rows: int, *, image: MediaSpec | None = None, video: MediaSpec | None = None,
                 seed: int = 0, text_only: bool = False) -> None:
        import pandas as pd

        if image is None and video is None and not text_only:
            raise PerfInputError("a synthetic dataset needs --synthetic-image or --synthetic-video")
        self.image, self.video, self.seed = image, video, seed
        parts = [f"image{image.width}x{image.height}x{image.count}" if image else "",
                 f"video{video.width}x{video.height}x{video.count}" if video else ""]
        self.name = "synthetic-" + ("-".join(p for p in parts if p) or "text")
        self.file_md5 = hashlib.md5(f"{self.name}-seed{seed}-rows{rows}".encode()).hexdigest()
        self.data = pd.DataFrame({"index": list(range(max(1, rows)))})
        self._folder: Path | None = None

    def line(self, i: int) -> dict[str, Any]:
        return {"index": i}

    def build_prompt(self, line: dict[str, Any]) -> list[dict[str, str]]:
        row = int(line["index"])
        parts: list[dict[str, str]] = []
        if self.image is not None:
            parts += [{"type": "image", "value": image_data_url(self.seed, row, k, self.image.width, self.image.height)}
                      for k in range(self.image.count)]
        if self.video is not None:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="vlmkit-synthetic-"))
            path = write_video(self._folder / f"row{row}.avi", self.seed, row, self.video)
            parts.append({"type": "video", "value": str(path)})
        what = " and ".join(w for w in ("the images" if self.image else "", "the video" if self.video else "") if w)
        ask = f"describe {what} in detail" if what else "write a short story"
        parts.append({"type": "text", "value": f"Request {row}: {ask}."})
        return parts

    def generation_params(self, line: dict[str, Any]) -> None:
        return None

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "n_total": len(self.data), "synthetic": True, "seed": self.seed}
        if self.image is not None:
            info["image"] = {"width": self.image.width, "height": self.image.height, "per_request": self.image.count}
        if self.video is not None:
            info["video"] = {"width": self.video.width, "height": self.video.height, "frames": self.video.count,
                             "fps": VIDEO_FPS}
        return info

    def close(self) -> None:
        """Remove the generated video files (the request bodies hold what they were)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def synthetic_rows(num_requests: int | None, warmup: int) -> int:
    """Rows to generate: one per request sent (warm-up included), or DEFAULT_ROWS for a run of a set duration."""
    return warmup + num_requests if num_requests is not None else DEFAULT_ROWS
