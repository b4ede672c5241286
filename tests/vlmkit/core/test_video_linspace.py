"""The "linspace" and "linspace_tail" sampling rules (VLMEvalKit's spatial video benchmarks and VSI-Bench's
`uniform_tail`), checked against VLMEvalKit's own formula (written out below from vlmeval/dataset/vsibench.py at
e8e78f05), by hand, and on a real video whose frames show their number."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.indexed_video import frame_number, write_indexed_video
from vlmkit.core.video import FramePlan, frame_indices, sample_frames, write_plan


def vsibench_indices(video_nframes: int, video_fps: float, nframe: int = 0, fps: float = -1,
                     tail: bool = True) -> list[int]:
    """VLMEvalKit's VsiBench.save_video_frames index choice ('uniform_tail' when tail, else VsiSuperBase's)."""
    if nframe > 0 and fps < 0:
        indices = np.linspace(0, video_nframes - 1, nframe, dtype=int).tolist()
        if tail and (video_nframes - 1) != indices[-1]:
            indices.append(video_nframes - 1)
    else:
        total_duration = video_nframes / video_fps
        required_frames = int(total_duration * fps)
        step_size = video_fps / fps
        indices = [int(i * step_size) for i in range(required_frames)]
        if tail and (video_nframes - 1) != indices[-1]:
            indices.append(video_nframes - 1)
    return indices


def test_worked_by_hand():
    assert frame_indices(50, 10.0, nframe=8, rule="linspace") == [0, 7, 14, 21, 28, 35, 42, 49]  # step 49/7 = 7
    assert frame_indices(50, 10.0, nframe=8, rule="linspace_tail") == [0, 7, 14, 21, 28, 35, 42, 49]
    assert frame_indices(50, 10.0, nframe=4, rule="linspace") == [0, 16, 32, 49]  # 16.33.., 32.67..
    assert frame_indices(50, 10.0, nframe=1, rule="linspace") == [0]
    assert frame_indices(50, 10.0, nframe=1, rule="linspace_tail") == [0, 49]  # the always-appended last frame
    # fps: 13.7 s at 0.5 fps -> int(6.85) = 6 frames, step 20; the tail adds 136
    assert frame_indices(137, 10.0, fps=0.5, rule="linspace", fps_rule="linspace") == [0, 20, 40, 60, 80, 100]
    assert frame_indices(137, 10.0, fps=0.5, rule="linspace_tail", fps_rule="linspace_tail") == [
        0, 20, 40, 60, 80, 100, 136]
    assert frame_indices(3, 10.0, nframe=6, rule="linspace") == [0, 0, 0, 1, 1, 2]  # shorter than N: repeats
    assert frame_indices(50, 10.0, nframe=4, rule="linspace", first=1) == [1, 17, 33, 50]


@pytest.mark.parametrize("tail", [False, True])
def test_nframe_matches_vlmevalkits_formula(tail: bool):
    rule = "linspace_tail" if tail else "linspace"
    for n in list(range(1, 130)) + [1000, 4321, 18000]:
        for count in (1, 2, 3, 7, 8, 16, 30, 32, 64, 128):
            assert frame_indices(n, 30.0, nframe=count, rule=rule) == vsibench_indices(n, 30.0, nframe=count,
                                                                                     tail=tail), (n, count)


@pytest.mark.parametrize("tail", [False, True])
def test_fps_matches_vlmevalkits_formula(tail: bool):
    rule = "linspace_tail" if tail else "linspace"
    for n in (10, 25, 49, 50, 137, 300, 1799):
        for rate in (10.0, 24.0, 29.97, 30.0):
            for fps in (0.5, 1.0, 2.0):
                if int(n / rate * fps) == 0:
                    continue  # VLMEvalKit fails there (indices[-1] of an empty list)
                assert frame_indices(n, rate, fps=fps, rule=rule, fps_rule=rule) == vsibench_indices(
                    n, rate, fps=fps, tail=tail), (n, rate, fps)


def test_a_planned_video_sends_those_frames(tmp_path: Path):
    video = write_indexed_video(tmp_path / "v.mp4", frames=45, fps=10.0)
    write_plan(video, FramePlan(rule="linspace_tail", fps_rule="linspace_tail"))
    assert [frame_number(f) for f in sample_frames(video, nframe=4).frames] == [0, 14, 29, 44]
    # 4.5 s at 1 fps: 4 frames 0, 10, 20, 30, then the last frame 44
    assert [frame_number(f) for f in sample_frames(video, fps=1.0).frames] == [0, 10, 20, 30, 44]
    plain = write_indexed_video(tmp_path / "w.mp4", frames=45, fps=10.0)
    assert sample_frames(plain, fps=1.0, rule="linspace_tail").indices == [0, 10, 20, 30, 44]
    assert sample_frames(plain, fps=1.0, rule="linspace").indices == [0, 10, 20, 30]
