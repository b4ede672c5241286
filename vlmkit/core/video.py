"""Video frames: which frames a sampling rule picks, reading them (seeking, not decoding the whole file), and a
decode-once cache of the frames a dataset's video gives.

Sampling rules (``frame_indices``), for a video of n frames at v frames per second; exactly one of ``nframe=N`` and
``fps=F`` is given:
- ``"vlmevalkit"`` (the default: VLMEvalKit's `VideoBaseDataset.save_video_frames` and Video-MME's, at e8e78f05):
  nframe: ``step = n / (N + 1)``, frames ``int(i * step)`` for i = 1..N (frame 0 and the last frame are never
  taken; a video shorter than N frames repeats frames, as VLMEvalKit does); fps: ``int(n / v * F)`` frames,
  ``int(i * v / F)`` for i = 0, 1, ... (from frame 0; a video shorter than 1/F seconds gives none: an error).
- ``"segments"`` (VLMEvalKit's MVBench `get_index` and MVBench_MP4 `get_index_by_frame`): frames are numbered
  ``first .. first + n - 1`` (0 for a video file, 1 for MVBench's frame folders); a bound of seconds [s, e] at rate r
  gives ``lo = max(first, round(s * r))``, ``hi = min(round(e * r), last)`` (no bound: lo = first, hi = last);
  ``seg = (hi - lo) / N`` and frames ``int(lo + seg / 2 + round(seg * k))`` for k = 0..N-1 (round half to even, as
  numpy's). fps: VLMEvalKit's MVBench refuses it (``fps_rule=None``); MVBench_MP4 uses the "vlmevalkit" fps rule.
- ``"centre"`` (vlmkit's earlier rule, kept as an option): the centre of n' equal stretches,
  ``floor((k + 0.5) * n / n')``, with n' = N, or ``round(n / v * F)``, at most n, never a frame twice.
- ``"linspace"`` (VLMEvalKit's spatial video benchmarks: VSI-SUPER, STI-Bench, DSRBench, SiteBenchVideo, ...):
  nframe: ``np.linspace(0, n - 1, N, dtype=int)``, i.e. ``int(k * (n - 1) / (N - 1))`` for k = 0..N-1 with the last
  one n - 1 (N = 1: frame 0); fps: the "vlmevalkit" fps rule.
- ``"linspace_tail"`` (VSI-Bench's default `uniform_tail`): as "linspace", then frame n - 1 is appended when the
  last frame taken is not already n - 1 (at nframe only when N = 1; at fps whenever the step misses the last frame).
- ``"clue_average"`` (CG-Bench's clue_acc rows, VLMEvalKit's `sample_frames_clue_average` with its
  `merge_intervals`): the plan's clue intervals (seconds of the whole video) are sorted and merged (an interval that
  starts at or before the previous end joins it), then become frame ranges ``[round(s * v), round(e * v))``
  (Python's round, half to even) of lengths L_j, total T. nframe: N is capped at 32 (``CLUE_MAX_FRAMES``); when
  N >= T every frame of every range is taken; else range j gets ``max(1, int(N * L_j / T))`` frames
  ``int(lo_j + seg / 2 + seg * k)``, seg = L_j / that count. fps: per merged interval ``int(s * v)`` .. ``int(e * v)``
  in steps of v / F (``int(lo + i * v / F)`` for i < int((hi - lo) / (v / F))); fewer than 32 frames in all: the
  nframe rule with N = 32 instead. Frames past the video's last are not sent (VLMEvalKit's reader fails on them).

Timestamps are ``index / v`` seconds. Frames come back as RGB PIL images (``sample_frames``), JPEG data URLs
(``frame_data_urls``, for APIs) or JPEG files (``frame_files``).

A dataset says how its videos are sampled with a *frame plan* (``FramePlan``), written as a small JSON file beside
the video file the prompt names, ``<video>.frames.json`` (``write_plan``); every model that samples that file
(``sample_frames``, ``frame_data_urls``: API, local and vLLM models, perf) then reads the plan: the rule, the file or
frame folder the frames come from (a bounded MVBench row names its cut clip in the prompt, for ``video_url``, and
reads its frames from the whole video with the bound, as VLMEvalKit's frame path does), the bound, the frame rate
to assume (MVBench's frame folders 3, GIFs 25). A planned video's frames are decoded once and kept beside the plan,
in ``<folder>/.frames/<name>-<key>/`` (``frame_<index>.jpg`` saved by PIL at its default JPEG quality, as
VLMEvalKit saves its frames, plus ``frames.json`` written last); the key covers the source's real path, size and
mtime (a frame folder: its file count and newest mtime), the plan, the sampling and the decoder, so an edited
video or another setting never reuses stale frames. Every model, every rerun, reads the same cached files.

Decoders: ``"opencv"`` (default; ``cv2.VideoCapture``, seeking with CAP_PROP_POS_FRAMES when the next wanted frame
is more than 48 frames ahead, grabbing forward otherwise) and ``"pyav"`` (PyAV, when installed: seeks to the
keyframe before each far frame and decodes forward). `tools/bench_video_decode.py` compares them.

Only local files are sampled: a URL is a clear error (download it first, or send it as `video_url` to an API).
A file that cannot be opened, or one with no decodable frame, raises `VideoError` naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlmkit.core.files import write_bytes_atomic
from vlmkit.core.media import MediaError, bytes_to_b64, resize_longest_side
from vlmkit.core.message import is_url

_SEEK_GAP = 48  # frames: closer targets are reached by decoding forward, farther ones by seeking
_FRAMES_META = "frames.json"
PLAN_SUFFIX = ".frames.json"
RULES = ("vlmevalkit", "segments", "centre", "linspace", "linspace_tail", "clue_average")
CLUE_MAX_FRAMES = 32  # VLMEvalKit caps a clue_acc row's nframe at 32 (and fills an fps sampling up to 32)
DECODERS = ("opencv", "pyav")
FRAME_FILE_SUFFIXES = (".jpg", ".jpeg", ".png")
DEFAULT_NFRAME = 8  # frames per clip when neither --nframe nor --fps is given (VLMEvalKit's usual 8-frame setting)


class VideoError(MediaError):
    """A video that cannot be sampled; the message names the file."""


@dataclass(frozen=True)
class FramePlan:
    """How a dataset's video is sampled (module docstring). rule: one of RULES; source: the file or frame folder the
    frames come from (None: the planned file itself); bound: seconds (start, end) ("segments"); frame_rate: the rate
    to assume for the bound (None: the file's own); first: the number of the first frame (1 for frame folders);
    fps_rule: how --fps samples ("vlmevalkit", "centre"), or None where the benchmark refuses fps; intervals:
    seconds (start, end) of the whole video ("clue_average": CG-Bench's clue intervals, merged when sampled)."""

    rule: str = "vlmevalkit"
    source: str | None = None
    bound: tuple[float, float] | None = None
    frame_rate: float | None = None
    first: int = 0
    fps_rule: str | None = "vlmevalkit"
    refuse_fps: str = ""  # the reason shown when fps_rule is None
    intervals: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"frame plan: unknown rule {self.rule!r} (expected one of {', '.join(RULES)})")
        if self.fps_rule is not None and self.fps_rule not in RULES:
            raise ValueError(f"frame plan: unknown fps rule {self.fps_rule!r}")
        if "clue_average" in (self.rule, self.fps_rule) and not self.intervals:
            raise ValueError("frame plan: the clue_average rule needs the clue intervals")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["bound"] = list(self.bound) if self.bound is not None else None
        if self.intervals is None:  # left out: the plans (and frame caches) of the other rules keep their keys
            del out["intervals"]
        else:
            out["intervals"] = [list(pair) for pair in self.intervals]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FramePlan:
        bound = data.get("bound")
        return cls(rule=str(data.get("rule", "vlmevalkit")), source=data.get("source"),
                   bound=(float(bound[0]), float(bound[1])) if bound is not None else None,
                   frame_rate=float(data["frame_rate"]) if data.get("frame_rate") is not None else None,
                   first=int(data.get("first", 0)), fps_rule=data.get("fps_rule", "vlmevalkit"),
                   refuse_fps=str(data.get("refuse_fps", "")), intervals=_pairs(data.get("intervals")))


def _pairs(value: Any) -> tuple[tuple[float, float], ...] | None:
    """A plan's intervals from JSON ([[s, e], ...]); None stays None."""
    if value is None:
        return None
    return tuple((float(s), float(e)) for s, e in value)


@dataclass
class SampledVideo:
    """Frames taken from one video, with where they came from."""

    path: str
    frames: list[Image.Image]
    indices: list[int]  # frame numbers in the source, in the order sent (non-decreasing)
    timestamps: list[float]  # seconds from the start, one per frame
    video_fps: float  # the source's frame rate (0.0 when the container does not say)
    total_frames: int
    width: int
    height: int
    settings: dict[str, Any] = field(default_factory=dict)  # {"nframe": N} or {"fps": F}, plus rule and decoder

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


# -- which frames -------------------------------------------------------------------------------------------------
def frame_indices(total_frames: int, video_fps: float, *, nframe: int | None = None, fps: float | None = None,
                  rule: str = "vlmevalkit", bound: tuple[float, float] | None = None, first: int = 0,
                  fps_rule: str | None = "vlmevalkit", refuse_fps: str = "",
                  intervals: Sequence[Sequence[float]] | None = None) -> list[int]:
    """The frame numbers a rule picks, in the order they are sent (module docstring). ValueError for a sampling the
    rule cannot do (fps without a frame rate, fps where the plan refuses it)."""
    settings = check_sampling(nframe, fps)
    if rule not in RULES:
        raise ValueError(f"unknown sampling rule {rule!r} (expected one of {', '.join(RULES)})")
    if total_frames < 1:
        return []
    if "fps" in settings:
        if fps_rule is None:
            raise ValueError(refuse_fps or "this video is sampled by nframe only")
        if video_fps <= 0:
            raise ValueError("sampling by fps needs the video's frame rate, and this video does not state one")
        rule = fps_rule
    last = first + total_frames - 1
    if rule == "clue_average":
        if not intervals:
            raise ValueError("the clue_average rule needs the clue intervals")
        if video_fps <= 0:
            raise ValueError("clue intervals in seconds cannot be found: no frame rate is known")
        picked = _clue_indices(merge_intervals(intervals), video_fps, settings)
        return [first + i for i in picked if first + i <= last]
    if rule in ("linspace", "linspace_tail"):
        return _linspace_indices(total_frames, video_fps, settings, tail=rule == "linspace_tail", first=first)
    if rule == "centre":
        if "nframe" in settings:
            n = min(settings["nframe"], total_frames)
        else:
            n = min(total_frames, max(1, round(total_frames / video_fps * settings["fps"])))
        return sorted({first + min(total_frames - 1, int((k + 0.5) * total_frames / n)) for k in range(n)})
    if rule == "vlmevalkit" or "fps" in settings:
        if "nframe" in settings:
            step = total_frames / (settings["nframe"] + 1)
            return [first + int(i * step) for i in range(1, settings["nframe"] + 1)]
        required = int(total_frames / video_fps * settings["fps"])
        step = video_fps / settings["fps"]
        return [first + int(i * step) for i in range(required)]
    # "segments": MVBench's get_index
    if bound is None:  # VLMEvalKit's (-100000, 100000) seconds: every frame
        lo, hi = first, last
    else:
        if video_fps <= 0:
            raise ValueError(f"seconds {bound[0]:g}..{bound[1]:g} cannot be found: no frame rate is known")
        lo, hi = max(first, round(bound[0] * video_fps)), min(round(bound[1] * video_fps), last)
        if hi < lo:
            raise ValueError(f"seconds {bound[0]:g}..{bound[1]:g} select no frame ({total_frames} frames at "
                             f"{video_fps:g} fps)")
    seg = float(hi - lo) / settings["nframe"]
    return [int(lo + seg / 2 + np.round(seg * k)) for k in range(settings["nframe"])]


def merge_intervals(intervals: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
    """Intervals sorted by start, each one that starts at or before the previous end merged into it (VLMEvalKit's
    CG-Bench `merge_intervals`)."""
    merged: list[list[float]] = []
    for start, end in sorted(([float(s), float(e)] for s, e in intervals), key=lambda pair: pair[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def clue_average_indices(intervals: Sequence[tuple[float, float]], nframe: int, video_fps: float) -> list[int]:
    """VLMEvalKit's `sample_frames_clue_average` over already merged intervals (seconds): the "clue_average" nframe
    rule without its cap (module docstring)."""
    ranges = [(round(s * video_fps), round(e * video_fps)) for s, e in intervals]
    lengths = [hi - lo for lo, hi in ranges]
    total = sum(lengths)
    if nframe >= total:
        return [i for lo, hi in ranges for i in range(lo, hi)]
    picked: list[int] = []
    for (lo, _), length in zip(ranges, lengths):
        count = max(1, int(nframe * (length / total)))
        seg = length / count
        picked += [int(lo + seg / 2 + seg * k) for k in range(count)]
    return picked


def _clue_indices(merged: list[tuple[float, float]], video_fps: float, settings: dict[str, Any]) -> list[int]:
    if "nframe" in settings:
        return clue_average_indices(merged, min(settings["nframe"], CLUE_MAX_FRAMES), video_fps)
    step = video_fps / settings["fps"]
    picked: list[int] = []
    for start, end in merged:
        lo, hi = int(start * video_fps), int(end * video_fps)
        picked += [int(lo + i * step) for i in range(int((hi - lo) / step))]
    return picked if len(picked) >= CLUE_MAX_FRAMES else clue_average_indices(merged, CLUE_MAX_FRAMES, video_fps)


def _linspace_indices(total_frames: int, video_fps: float, settings: dict[str, Any], *, tail: bool,
                      first: int) -> list[int]:
    """The "linspace" and "linspace_tail" rules (module docstring), with numpy.linspace's float arithmetic
    (k * step + 0.0, the last point set to n - 1) so the truncated indices are VLMEvalKit's."""
    if "nframe" in settings:
        count = settings["nframe"]
        if count == 1:
            points = [0]
        else:
            step = (total_frames - 1) / (count - 1)
            points = [int(k * step + 0.0) for k in range(count - 1)] + [total_frames - 1]
    else:
        required = int(total_frames / video_fps * settings["fps"])
        step = video_fps / settings["fps"]
        points = [int(i * step) for i in range(required)]
    if tail and points and points[-1] != total_frames - 1:
        points.append(total_frames - 1)
    return [first + p for p in points]


# -- reading ------------------------------------------------------------------------------------------------------
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


def _opencv_facts(path: Path) -> tuple[float, int]:
    """(frame rate or 0.0, frame count) as opencv reports them, counted when the container does not say."""
    import cv2

    capture = _open(path)
    try:
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        if total <= 0:
            total = _count_frames(capture)
    finally:
        capture.release()
    return (fps if math.isfinite(fps) and fps > 0 else 0.0), total


def _opencv_read(path: Path, wanted: Sequence[int]) -> dict[int, Image.Image]:
    """{index: RGB image} for the wanted indices (increasing, unique), reading in order; stops at the file's end.
    Each frame becomes a PIL image as it is read (no second copy of the frames is held)."""
    import cv2

    capture = _open(path)
    out: dict[int, Image.Image] = {}
    try:
        position = 0
        for index in wanted:
            if index - position > _SEEK_GAP:
                capture.set(cv2.CAP_PROP_POS_FRAMES, index)
                position = index
            while position < index:
                if not capture.grab():
                    return out
                position += 1
            ok, frame = capture.read()
            if not ok or frame is None:
                return out
            position += 1
            out[index] = Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    finally:
        capture.release()
    return out


def _pyav() -> Any:
    try:
        import av
    except ImportError:
        raise VideoError("decoder pyav: PyAV is not installed (pip install av), use decoder opencv") from None
    return av


def _pyav_facts(path: Path) -> tuple[float, int]:
    av = _pyav()
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            rate = float(stream.average_rate or stream.guessed_rate or 0.0)
            total = int(stream.frames or 0)
            if total <= 0:
                total = sum(1 for packet in container.demux(stream) if packet.size)
    except (av.FFmpegError, IndexError) as exc:
        raise VideoError(f"video {path}: PyAV cannot open it ({exc})") from None
    return (rate if math.isfinite(rate) and rate > 0 else 0.0), total


def _pyav_read(path: Path, wanted: Sequence[int], video_fps: float) -> dict[int, Image.Image]:
    """As _opencv_read, with PyAV: a far frame is reached by seeking to the keyframe before it, then decoding."""
    av = _pyav()
    out: dict[int, Image.Image] = {}
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        base = float(stream.time_base)
        start = stream.start_time or 0
        frames = None
        position = -1
        for index in wanted:
            if frames is None or (video_fps > 0 and index - position > _SEEK_GAP):
                if frames is not None or index > 0:
                    container.seek(start + int(index / video_fps / base), stream=stream, backward=True)
                frames = container.decode(stream)
                position = -1
            for frame in frames:
                position = round((frame.pts - start) * base * video_fps) if frame.pts is not None else position + 1
                if position >= index:
                    out[index] = frame.to_image()
                    break
            else:
                return out
    return out


def _folder_frames(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in FRAME_FILE_SUFFIXES)


def _source_facts(source: Path, decoder: str) -> tuple[float, int]:
    if source.is_dir():
        return 0.0, len(_folder_frames(source))
    return _pyav_facts(source) if decoder == "pyav" else _opencv_facts(source)


def _read(source: Path, wanted: Sequence[int], decoder: str, video_fps: float, first: int) -> dict[int, Image.Image]:
    if source.is_dir():  # numbered frame files: `{index:05d}.jpg` as VLMEvalKit opens them, else by position
        files = _folder_frames(source)
        out = {}
        for index in wanted:
            named = source / f"{index:05d}.jpg"
            file = named if named.is_file() else files[index - first] if 0 <= index - first < len(files) else None
            if file is None:
                break
            with Image.open(file) as image:
                out[index] = image.convert("RGB")
        return out
    if decoder == "pyav":
        return _pyav_read(source, wanted, video_fps)
    return _opencv_read(source, wanted)


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


# -- frame plans --------------------------------------------------------------------------------------------------
def plan_file(video: str | os.PathLike[str]) -> Path:
    """Where the frame plan of a video file lives: beside it, `<video>.frames.json`."""
    path = Path(video)
    return path.with_name(path.name + PLAN_SUFFIX)


def write_plan(video: str | os.PathLike[str], plan: FramePlan) -> Path:
    """Write (or leave, when equal) the frame plan beside `video`; its path."""
    target = plan_file(video)
    text = json.dumps(plan.to_json(), sort_keys=True)
    if not (target.is_file() and target.read_text(encoding="utf-8") == text):
        write_bytes_atomic(target, text.encode("utf-8"))
    return target


def read_plan(video: str | os.PathLike[str]) -> FramePlan | None:
    """The frame plan beside a video file, or None; VideoError naming the file when it is not a plan."""
    target = plan_file(video)
    if not target.is_file():
        return None
    try:
        return FramePlan.from_json(json.loads(target.read_text(encoding="utf-8")))
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise VideoError(f"frame plan {target}: not a plan ({exc}); delete it to sample the video plainly") from None


# -- sampling -----------------------------------------------------------------------------------------------------
def _sample(file: Path, plan: FramePlan, settings: dict[str, Any], decoder: str) -> SampledVideo:
    source = Path(plan.source) if plan.source else file
    if not source.exists():
        raise VideoError(f"video {file}: its frames come from {source}, which is missing")
    file_fps, total = _source_facts(source, decoder)
    rate = plan.frame_rate or file_fps
    try:
        indices = frame_indices(total, rate, rule=plan.rule, bound=plan.bound, first=plan.first,
                                fps_rule=plan.fps_rule, refuse_fps=plan.refuse_fps, intervals=plan.intervals,
                                **settings)
    except ValueError as exc:
        raise VideoError(f"video {source}: {exc}") from None
    if not indices:
        raise VideoError(f"video {source}: {settings} selects no frame ({total} frames at {rate:g} fps)")
    wanted = sorted(set(indices))
    frames = _read(source, wanted, decoder, rate, plan.first)
    if len(frames) < len(wanted) and frames and not source.is_dir() and decoder == "opencv":
        # the container over-stated its frame count: count what is really there and sample again
        capture = _open(source)
        try:
            total = _count_frames(capture)
        finally:
            capture.release()
        try:
            indices = frame_indices(total, rate, rule=plan.rule, bound=plan.bound, first=plan.first,
                                    fps_rule=plan.fps_rule, refuse_fps=plan.refuse_fps, intervals=plan.intervals,
                                    **settings)
        except ValueError as exc:
            raise VideoError(f"video {source}: {exc}") from None
        frames = _read(source, sorted(set(indices)), decoder, rate, plan.first)
    indices = [i for i in indices if i in frames]
    if not indices:
        raise VideoError(f"video {source}: no frame could be decoded")
    images = [frames[i] for i in indices]  # a frame sent twice is one image
    return SampledVideo(
        path=str(file), frames=images, indices=indices,
        timestamps=[(i - plan.first) / rate if rate > 0 else 0.0 for i in indices], video_fps=rate,
        total_frames=total, width=images[0].width, height=images[0].height,
        settings={**settings, "rule": plan.rule, "decoder": decoder,
                  **({"source": str(source)} if plan.source else {})},
    )  # fmt: skip


def _stamp(source: Path) -> list[Any]:
    if source.is_dir():
        files = _folder_frames(source)
        return [len(files), max((p.stat().st_mtime_ns for p in files), default=0)]
    stat = source.stat()
    return [stat.st_size, stat.st_mtime_ns]


def _cache_folder(file: Path, plan: FramePlan, settings: dict[str, Any], decoder: str) -> Path:
    source = Path(plan.source) if plan.source else file
    ident = json.dumps([str(source.resolve()), _stamp(source), plan.to_json(), settings, decoder], sort_keys=True)
    key = hashlib.sha1(ident.encode()).hexdigest()[:16]
    return file.parent / ".frames" / f"{file.name[:60]}-{key}"


def _cached(file: Path, plan: FramePlan, settings: dict[str, Any], decoder: str) -> SampledVideo:
    """The planned video's frames from its cache beside the plan, decoded and saved there first when missing."""
    if plan.source and not Path(plan.source).exists():
        raise VideoError(f"video {file}: its frames come from {plan.source}, which is missing")
    folder = _cache_folder(file, plan, settings, decoder)
    meta_file = folder / _FRAMES_META
    meta = None
    if meta_file.is_file():
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            if not all((folder / name).is_file() for name in meta["files"]):
                meta = None
        except (ValueError, KeyError, TypeError):
            meta = None
    if meta is None:
        video = _sample(file, plan, settings, decoder)
        names = []
        for position, (index, frame) in enumerate(zip(video.indices, video.frames)):
            name = f"frame_{position:04d}_{index:07d}.jpg"
            buffer = io.BytesIO()
            frame.save(buffer, format="JPEG")  # PIL's default quality, as VLMEvalKit's `im.save(path.jpg)`
            write_bytes_atomic(folder / name, buffer.getvalue())
            names.append(name)
        meta = {**video.metadata(), "files": names}
        write_bytes_atomic(meta_file, json.dumps(meta, indent=1).encode())
        del video  # the frames are read back from the files: every model sees the same pixels
    frames = []
    for name in meta["files"]:
        with Image.open(folder / name) as image:
            frames.append(image.convert("RGB"))
    known = {"path", "video_fps", "total_frames", "duration", "width", "height", "indices", "timestamps", "files"}
    return SampledVideo(
        path=str(file), frames=frames, indices=list(meta["indices"]), timestamps=list(meta["timestamps"]),
        video_fps=float(meta["video_fps"]), total_frames=int(meta["total_frames"]), width=int(meta["width"]),
        height=int(meta["height"]), settings={k: v for k, v in meta.items() if k not in known},
    )  # fmt: skip


def sample_frames(path: str | os.PathLike[str], *, nframe: int | None = None, fps: float | None = None,
                  rule: str = "vlmevalkit", decoder: str = "opencv") -> SampledVideo:
    """Frames of a local video as RGB PIL images, chosen by `nframe` or `fps` (exactly one). A video with a frame
    plan beside it is sampled as the plan says, through its cache (module docstring); `rule` applies to others."""
    settings = check_sampling(nframe, fps)
    if decoder not in DECODERS:
        raise ValueError(f"unknown decoder {decoder!r} (expected one of {', '.join(DECODERS)})")
    file = _local_file(path)
    plan = read_plan(file)
    if plan is not None:
        return _cached(file, plan, settings, decoder)
    return _sample(file, FramePlan(rule=rule, fps_rule="vlmevalkit" if rule in ("vlmevalkit", "segments") else rule),
                   settings, decoder)


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
    """The sampled frames as JPEG data URLs, in the order sampled (shrunk to `max_side` when that is set)."""
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
    plan = read_plan(file)
    ident = {**settings, "plan": plan.to_json()} if plan is not None else settings
    folder = folder / f"{file.stem[:40]}-{_cache_key(file, ident, quality)}"
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
        if target not in paths:
            paths.append(target)
    meta = {**video.metadata(), "files": [p.name for p in paths]}
    write_bytes_atomic(meta_file, json.dumps(meta, indent=1).encode())
    return paths
