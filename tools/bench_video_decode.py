"""How fast, and in how much memory, vlmkit reads a video's sampled frames: opencv against PyAV, beside the floor.

    python tools/bench_video_decode.py [--minutes 5] [--fps 25] [--size 640x360] [--repeats 3] [--video PATH]

A long video is generated first (mp4v, opencv; frame i a solid colour, so decoding is cheap and the figure is the
reader's, not the codec's; pass --video to time a real file), then each figure is measured in a fresh child process
(its peak RSS over the interpreter's own says what reading cost in memory), best of --repeats:

1. floor: a bare opencv loop that seeks to each wanted frame and reads it (cv2.VideoCapture, CAP_PROP_POS_FRAMES;
   nothing else: no colour conversion, no PIL image);
2. vlmkit opencv: vlmkit.core.video.sample_frames(decoder="opencv"): the same frames as RGB PIL images;
3. vlmkit pyav: sample_frames(decoder="pyav") (skipped when PyAV is not installed: pip install av);
4. whole file: every frame decoded in order (cv2 grab), what a reader that does not seek pays;
5. cached: a planned video's second read, from the JPEG frames the first read kept beside its plan (decode once).
for nframe 8, nframe 32 and fps 1 (VLMEvalKit's rules). Printed: seconds and peak-RSS growth (MiB) per figure. Other
work on the machine skews the seconds; compare figures from one invocation.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SETTINGS: tuple[dict[str, Any], ...] = ({"nframe": 8}, {"nframe": 32}, {"fps": 1.0})


def _rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # bytes on macOS, KiB on Linux
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def make_video(path: Path, minutes: float, fps: float, size: tuple[int, int]) -> Path:
    import cv2
    import numpy as np

    width, height = size
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
    if not writer.isOpened():
        raise SystemExit("opencv cannot write mp4v here")
    frame = np.zeros((height, width, 3), dtype=np.uint8)
    for i in range(int(minutes * 60 * fps)):
        frame[:] = (i % 251, (i // 251) % 251, 128)
        writer.write(frame)
    writer.release()
    return path


def _floor(path: str, indices: list[int]) -> int:
    import cv2

    capture = cv2.VideoCapture(path)
    got = 0
    for index in indices:
        capture.set(cv2.CAP_PROP_POS_FRAMES, index)
        ok, _ = capture.read()
        got += bool(ok)
    capture.release()
    return got


def _whole(path: str) -> int:
    import cv2

    capture = cv2.VideoCapture(path)
    count = 0
    while capture.grab():
        count += 1
    capture.release()
    return count


def _measure(job: str, path: str, setting: dict[str, Any], queue: Any) -> None:
    """One figure in this (fresh) process: (seconds, peak RSS growth in MiB, frames)."""
    from vlmkit.core.video import FramePlan, frame_indices, probe_video, sample_frames, write_plan

    before = _rss_mib()
    facts = probe_video(path)
    indices = frame_indices(facts["total_frames"], facts["video_fps"], **setting)
    if job == "cached":  # the first read fills the cache beside the plan; the second is timed
        write_plan(path, FramePlan())
        sample_frames(path, **setting)
    start = time.perf_counter()
    if job == "floor":
        frames = _floor(path, sorted(set(indices)))
    elif job == "whole file":
        frames = _whole(path)
    else:
        decoder = "pyav" if job == "vlmkit pyav" else "opencv"
        frames = len(sample_frames(path, decoder=decoder, **setting).frames)
    queue.put((time.perf_counter() - start, _rss_mib() - before, frames))


def run_job(job: str, path: Path, setting: dict[str, Any], repeats: int) -> tuple[float, float, int]:
    context = multiprocessing.get_context("spawn")
    best: tuple[float, float, int] | None = None
    for _ in range(repeats):
        queue = context.Queue()
        child = context.Process(target=_measure, args=(job, str(path), setting, queue))
        child.start()
        result = queue.get(timeout=600)
        child.join()
        if best is None or result[0] < best[0]:
            best = result
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--fps", type=float, default=25.0)
    parser.add_argument("--size", default="640x360")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--video", type=Path, default=None, help="time this file instead of a generated one")
    args = parser.parse_args(argv)
    try:
        import av  # noqa: F401

        have_pyav = True
    except ImportError:
        have_pyav = False
    with tempfile.TemporaryDirectory() as tmp:
        if args.video is not None:
            path = args.video
        else:
            width, height = (int(v) for v in args.size.split("x"))
            started = time.perf_counter()
            path = make_video(Path(tmp) / "long.mp4", args.minutes, args.fps, (width, height))
            print(f"generated {args.minutes:g} min at {args.fps:g} fps, {args.size}, in "
                  f"{time.perf_counter() - started:.1f} s: {path.stat().st_size / 2**20:.1f} MiB")
        jobs = ["floor", "vlmkit opencv", *(["vlmkit pyav"] if have_pyav else []), "whole file", "cached"]
        print(f"{'setting':<12} {'reader':<15} {'seconds':>9} {'peak MiB':>9} {'frames':>7}")
        for setting in SETTINGS:
            label = ", ".join(f"{k} {v:g}" for k, v in setting.items())
            for job in jobs:
                if job == "whole file" and setting is not SETTINGS[0]:
                    continue  # the same for every setting
                copy = path
                if job == "cached":  # a copy of its own, so the plan and cache stay in the temporary folder
                    copy = Path(tmp) / f"cached-{label.replace(' ', '')}{path.suffix}"
                    if not copy.exists():
                        copy.symlink_to(path.resolve())
                seconds, peak, frames = run_job(job, copy, setting, args.repeats)
                print(f"{label:<12} {job:<15} {seconds:>9.3f} {peak:>9.1f} {frames:>7}")
        if not have_pyav:
            print("PyAV is not installed (pip install av): its figure is left out")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
