"""The "clue_average" sampling rule (CG-Bench's clue_acc rows): VLMEvalKit's `merge_intervals` and
`sample_frames_clue_average` (vlmeval/dataset/utils/cgbench.py at e8e78f05) and its fps path in `save_video_frames`,
checked against frames worked out by hand, against a second implementation of the formula written here, and on a video
whose frames carry their own number."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.support.indexed_video import frame_number, write_indexed_video
from vlmkit.core.video import (
    CLUE_MAX_FRAMES,
    FramePlan,
    VideoError,
    frame_indices,
    merge_intervals,
    plan_file,
    read_plan,
    sample_frames,
    write_plan,
)

# at 1 frame a second: merged (10, 40), (100.5 -> 100 (half to even), 124.4 -> 124), (200, 203): lengths 30, 24, 3
INTERVALS = ((10.0, 30.0), (25.0, 40.0), (100.5, 124.4), (200.0, 203.0))


def reference(intervals: list[list[float]], nframe: int, fps: float) -> list[int]:
    """The formula as the brief and VLMEvalKit state it, written again: merge (sort by start, join an interval that
    starts at or before the previous end), frame ranges by round(t * fps), N capped at 32, every frame when N >= the
    frame count, else int(N * len / total) (at least 1) frames int(lo + seg / 2 + seg * k) per range."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    ranges = [(round(s * fps), round(e * fps)) for s, e in merged]
    total = sum(hi - lo for lo, hi in ranges)
    n = min(nframe, 32)
    out: list[int] = []
    for lo, hi in ranges:
        if n >= total:
            out.extend(range(lo, hi))
            continue
        count = int(n * ((hi - lo) / total)) or 1
        seg = (hi - lo) / count
        out.extend(int(lo + seg / 2 + seg * k) for k in range(count))
    return out


def clue(total: int, rate: float, **settings) -> list[int]:
    return frame_indices(total, rate, rule="clue_average", fps_rule="clue_average", intervals=INTERVALS, **settings)


def test_merge_joins_overlapping_and_touching_intervals_in_start_order() -> None:
    assert merge_intervals([[40, 100], [0, 50], [100, 120], [130, 140]]) == [(0.0, 120.0), (130.0, 140.0)]
    assert merge_intervals([[5, 9], [6, 7]]) == [(5.0, 9.0)]  # one inside another


def test_frames_worked_by_hand() -> None:
    # counts int(8 * 30 / 57) = 4, int(8 * 24 / 57) = 3, int(8 * 3 / 57) = 0 -> 1; segs 7.5, 8, 3
    assert clue(250, 1.0, nframe=8) == [13, 21, 28, 36, 104, 112, 120, 201]
    # N >= the 57 frames of the ranges... only up to 32: 32 < 57, so spread
    assert len(clue(250, 1.0, nframe=60)) == len(clue(250, 1.0, nframe=CLUE_MAX_FRAMES))
    assert clue(250, 1.0, nframe=60) == clue(250, 1.0, nframe=32)
    # every frame when N is at least the frame count: ranges (3, 5) and (7, 8)
    assert frame_indices(20, 1.0, nframe=4, rule="clue_average", intervals=[[7, 8], [3, 5]]) == [3, 4, 7]
    # at 10 frames a second: (100, 400), (1005, 1244), (2000, 2030), 569 frames; N = 2 gives each range 1 frame
    # (int(2 * 300 / 569) = 1, the others 0 -> 1), at its middle: 100 + 150, int(1005 + 119.5), 2000 + 15
    assert frame_indices(3000, 10.0, nframe=2, rule="clue_average", intervals=INTERVALS) == [250, 1124, 2015]


def test_the_formula_on_many_interval_sets() -> None:
    rng = random.Random(7)
    for _ in range(300):
        fps = rng.choice([1.0, 2.5, 10.0, 29.97, 30.0])
        intervals = []
        for _ in range(rng.randint(1, 5)):
            start = round(rng.uniform(0, 60), rng.choice([0, 1, 2]))
            intervals.append([start, start + round(rng.uniform(0.1, 20), rng.choice([0, 1]))])
        nframe = rng.randint(1, 48)
        total = int(100 * fps)
        expected = [i for i in reference(intervals, nframe, fps) if i < total]
        got = frame_indices(total, fps, nframe=nframe, rule="clue_average", intervals=intervals)
        assert got == expected, (intervals, nframe, fps)


def test_fps_takes_f_frames_a_second_inside_the_intervals_and_at_least_32() -> None:
    # int(s * v) .. int(e * v) by steps of v / F: (10, 40) -> 15, (100, 124) -> 12, (200, 203) -> 1 at F = 0.5
    many = clue(250, 1.0, fps=2.0)  # steps of 0.5 frame: int(lo + i / 2), twice each frame
    assert many[:4] == [10, 10, 11, 11] and len(many) == 60 + 48 + 6
    few = clue(250, 1.0, fps=0.5)  # 28 frames: fewer than 32, so the nframe rule with 32
    assert few == clue(250, 1.0, nframe=32) == reference([list(p) for p in INTERVALS], 32, 1.0)


def test_frames_past_the_end_are_not_sent_and_none_at_all_is_an_error() -> None:
    assert frame_indices(30, 1.0, nframe=8, rule="clue_average", intervals=[[20, 40]]) == [21, 23, 26, 28]
    with pytest.raises(ValueError, match="needs the clue intervals"):
        frame_indices(30, 1.0, nframe=8, rule="clue_average")
    with pytest.raises(ValueError, match="needs the clue intervals"):
        FramePlan(rule="clue_average")


def test_a_plan_samples_the_whole_video_at_the_clue_frames(tmp_path: Path) -> None:
    whole = write_indexed_video(tmp_path / "whole.mp4", 250, fps=1.0)
    shown = write_indexed_video(tmp_path / "clip.mp4", 20, fps=1.0)  # what a video_url model would get
    plan = FramePlan(rule="clue_average", fps_rule="clue_average", source=str(whole), intervals=INTERVALS)
    write_plan(shown, plan)
    assert read_plan(shown) == plan
    assert json.loads(plan_file(shown).read_text())["intervals"] == [list(p) for p in INTERVALS]
    video = sample_frames(shown, nframe=8)
    assert [frame_number(f) for f in video.frames] == video.indices == [13, 21, 28, 36, 104, 112, 120, 201]
    assert video.settings["rule"] == "clue_average"
    again = sample_frames(shown, nframe=8)  # from the cache beside the plan
    assert [frame_number(f) for f in again.frames] == again.indices == video.indices


def test_other_plans_keep_their_json_and_a_clue_outside_the_video_is_one_line(tmp_path: Path) -> None:
    assert "intervals" not in FramePlan().to_json()  # their frame caches keep their keys
    whole = write_indexed_video(tmp_path / "whole.mp4", 30, fps=1.0)
    write_plan(whole, FramePlan(rule="clue_average", fps_rule="clue_average", intervals=((100.0, 120.0),)))
    with pytest.raises(VideoError, match=r"whole\.mp4.*selects no frame"):
        sample_frames(whole, nframe=4)
