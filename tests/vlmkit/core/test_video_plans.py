"""Frame plans and the decode-once cache of vlmkit.core.video, on generated videos whose frames carry their number;
PyAV against opencv where PyAV is installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.indexed_video import frame_number, write_indexed_folder, write_indexed_video
from vlmkit.core.video import (
    FramePlan,
    VideoError,
    frame_data_urls,
    plan_file,
    read_plan,
    sample_frames,
    write_plan,
)


def _numbers(video) -> list[int]:
    return [frame_number(f) for f in video.frames]


def test_a_plan_beside_the_file_chooses_rule_source_and_bound(tmp_path: Path) -> None:
    source = write_indexed_video(tmp_path / "snap" / "long.mp4", frames=300, fps=10.0)
    shown = write_indexed_video(tmp_path / "data" / "cut.mp4", frames=5, fps=10.0)  # what video_url would send
    write_plan(shown, FramePlan(rule="segments", source=str(source), bound=(3.0, 12.0), fps_rule=None,
                                refuse_fps="MVBench refuses fps"))
    assert plan_file(shown) == tmp_path / "data" / "cut.mp4.frames.json"
    video = sample_frames(shown, nframe=8)
    # frames 30..120 of the whole source, seg 11.25: worked out in test_video.test_frame_indices_rules
    assert video.indices == [35, 46, 57, 69, 80, 91, 103, 114] and _numbers(video) == video.indices
    assert video.settings["rule"] == "segments" and video.settings["source"] == str(source)
    with pytest.raises(VideoError, match="MVBench refuses fps"):
        sample_frames(shown, fps=1.0)
    # the data URLs an API model sends carry the same frames, in order
    assert len(frame_data_urls(shown, nframe=8)) == 8


def test_planned_frames_are_decoded_once_and_redone_when_the_video_changes(tmp_path: Path) -> None:
    video_file = write_indexed_video(tmp_path / "data" / "v.mp4", frames=100, fps=10.0)
    write_plan(video_file, FramePlan())
    first = sample_frames(video_file, nframe=4)
    assert first.indices == [20, 40, 60, 80] and _numbers(first) == first.indices
    [folder] = list((tmp_path / "data" / ".frames").iterdir())
    files = sorted(folder.glob("*.jpg"))
    assert len(files) == 4 and (folder / "frames.json").is_file()
    stamps = [f.stat().st_mtime_ns for f in files]
    again = sample_frames(video_file, nframe=4)
    assert again.indices == first.indices and [f.stat().st_mtime_ns for f in files] == stamps  # read, not rewritten
    assert [a.tobytes() for a in again.frames] == [f.tobytes() for f in first.frames]
    # another sampling: another folder; a damaged folder (a frame file gone) is redone
    sample_frames(video_file, fps=1.0)
    assert len(list((tmp_path / "data" / ".frames").iterdir())) == 2
    files[0].unlink()
    assert _numbers(sample_frames(video_file, nframe=4)) == [20, 40, 60, 80]
    # an edited video (other size, later mtime) never reuses the old frames
    write_indexed_video(video_file, frames=50, fps=10.0)
    os.utime(video_file, ns=(stamps[0] + 10**9, stamps[0] + 10**9))
    edited = sample_frames(video_file, nframe=4)
    assert edited.indices == [10, 20, 30, 40] and _numbers(edited) == edited.indices


def test_a_frame_folder_is_numbered_from_one(tmp_path: Path) -> None:
    folder = write_indexed_folder(tmp_path / "snap" / "ep1", frames=12)
    shown = write_indexed_video(tmp_path / "data" / "ep1.mp4", frames=3)
    write_plan(shown, FramePlan(rule="segments", source=str(folder), bound=(1.0, 3.0), frame_rate=3.0, first=1))
    video = sample_frames(shown, nframe=4)
    assert video.indices == [3, 5, 6, 7] and _numbers(video) == [3, 5, 6, 7]  # files 00003.jpg, 00005.jpg, ...
    assert video.video_fps == 3.0


def test_a_plan_that_is_not_one_is_named(tmp_path: Path) -> None:
    video_file = write_indexed_video(tmp_path / "v.mp4", frames=10)
    plan_file(video_file).write_text('{"rule": "sideways"}')
    with pytest.raises(VideoError, match=r"v\.mp4\.frames\.json: not a plan"):
        sample_frames(video_file, nframe=2)
    assert read_plan(tmp_path / "other.mp4") is None
    write_plan(video_file, FramePlan(source=str(tmp_path / "gone.mp4")))
    with pytest.raises(VideoError, match="gone.mp4, which is missing"):
        sample_frames(video_file, nframe=2)


def test_pyav_reads_the_same_frames_as_opencv(tmp_path: Path) -> None:
    pytest.importorskip("av")
    path = write_indexed_video(tmp_path / "v.mp4", frames=400, fps=25.0)
    for settings in ({"nframe": 8}, {"nframe": 3}, {"fps": 1.0}):
        ours = sample_frames(path, decoder="opencv", **settings)
        theirs = sample_frames(path, decoder="pyav", **settings)
        assert theirs.indices == ours.indices and _numbers(theirs) == _numbers(ours) == ours.indices
        assert (theirs.total_frames, theirs.video_fps) == (ours.total_frames, ours.video_fps)
