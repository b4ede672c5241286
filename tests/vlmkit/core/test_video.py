"""vlmkit.core.video on real mp4 files written with opencv: sampling rules (VLMEvalKit's, worked by hand), timestamps,
caching, clear errors."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.support.media_files import nearest_frame, write_video
from vlmkit.core.media import MediaError
from vlmkit.core.video import (
    VideoError,
    check_sampling,
    frame_data_urls,
    frame_files,
    frame_indices,
    probe_video,
    sample_frames,
)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16 frames of changing colours at 8 fps: 2 seconds."""
    return write_video(tmp_path_factory.mktemp("video") / "clip.mp4", frames=16, fps=8.0)


def _seen(frames: list[Image.Image]) -> list[int]:
    """Which source frame each decoded frame shows (by its mean colour)."""
    return [nearest_frame(np.asarray(f).reshape(-1, 3).mean(axis=0)) for f in frames]


def test_nframe_takes_vlmevalkits_frames(clip: Path) -> None:
    video = sample_frames(clip, nframe=4)
    assert video.indices == [3, 6, 9, 12]  # int(i * 16 / 5), i = 1..4
    assert _seen(video.frames) == video.indices  # the pixels really are those frames, in order
    assert video.timestamps == pytest.approx([0.375, 0.75, 1.125, 1.5])
    assert (video.video_fps, video.total_frames, video.duration) == (8.0, 16, 2.0)
    assert (video.width, video.height) == (64, 48) and all(f.size == (64, 48) for f in video.frames)
    assert video.array().shape == (4, 48, 64, 3) and video.array().dtype == np.uint8
    assert video.settings == {"nframe": 4, "rule": "vlmevalkit", "decoder": "opencv"}
    assert video.sampled_fps == pytest.approx(2.0)
    assert sample_frames(clip, nframe=3).indices == [4, 8, 12]
    assert sample_frames(clip, nframe=1).indices == [8]
    assert sample_frames(clip, nframe=4, rule="centre").indices == [2, 6, 10, 14]  # the earlier rule, on request


def test_far_apart_frames_are_reached_by_seeking(tmp_path: Path) -> None:
    path = write_video(tmp_path / "long.mp4", frames=240, fps=24.0, size=(32, 32))
    video = sample_frames(path, nframe=3)  # 60 frames apart: beyond the distance grabbed forward, so seeks
    assert video.indices == [60, 120, 180]
    assert _seen(video.frames) == [i % 16 for i in video.indices]  # the frame colours cycle through 16
    near = sample_frames(path, nframe=7)  # 30 apart: grabbed forward
    assert near.indices == [30, 60, 90, 120, 150, 180, 210]
    assert _seen(near.frames) == [i % 16 for i in near.indices]


def test_more_frames_asked_than_the_video_has(clip: Path) -> None:
    video = sample_frames(clip, nframe=40)
    # VLMEvalKit's rule repeats frames: int(i * 16 / 41), i = 1..40
    assert len(video.indices) == 40 and video.indices == sorted(video.indices)
    assert video.indices[:5] == [0, 0, 1, 1, 1] and set(video.indices) == set(range(16))
    assert _seen(video.frames) == video.indices


def test_fps_sampling_and_timestamps(clip: Path) -> None:
    two = sample_frames(clip, fps=2)  # 2 s: int(2 * 2) = 4 frames, every 8 / 2 = 4th from frame 0
    assert two.indices == [0, 4, 8, 12] and two.timestamps == pytest.approx([0.0, 0.5, 1.0, 1.5])
    one = sample_frames(clip, fps=1.0)
    assert one.indices == [0, 8] and one.settings["fps"] == 1.0
    assert len(sample_frames(clip, fps=100).indices) == 200  # int(2 * 100) frames, as VLMEvalKit takes them
    with pytest.raises(VideoError, match="clip.mp4.*selects no frame"):
        sample_frames(clip, fps=0.1)  # int(2 * 0.1) = 0
    assert np.diff(sample_frames(clip, fps=4).timestamps) == pytest.approx([0.25] * 7)
    assert sample_frames(clip, fps=2, rule="centre").indices == [2, 6, 10, 14]


def test_a_one_frame_video(tmp_path: Path) -> None:
    path = write_video(tmp_path / "still.mp4", frames=1, fps=25.0)
    video = sample_frames(path, nframe=8)
    assert video.indices == [0] * 8 and video.timestamps == [0.0] * 8
    assert _seen(video.frames) == [0] * 8
    assert sample_frames(path, nframe=8, rule="centre").indices == [0]


def test_frame_indices_rules() -> None:
    # VLMEvalKit's VideoBaseDataset / Video-MME: step = n / (N + 1), frames int(i * step) for i = 1..N
    assert frame_indices(50, 25.0, nframe=8) == [5, 11, 16, 22, 27, 33, 38, 44]
    assert frame_indices(100, 25.0, nframe=4) == [20, 40, 60, 80]
    assert frame_indices(100, 25.0, fps=1.0) == [0, 25, 50, 75]  # 4 s at 1 fps, from frame 0
    assert frame_indices(99, 25.0, fps=1.0) == [0, 25, 50]  # 3.96 s: int() gives 3
    assert frame_indices(3, 25.0, nframe=4) == [0, 1, 1, 2]
    assert frame_indices(0, 25.0, nframe=8) == []
    # vlmkit's earlier rule: the centre of N equal stretches
    assert frame_indices(50, 25.0, nframe=8, rule="centre") == [3, 9, 15, 21, 28, 34, 40, 46]
    # MVBench's get_index: seg = (49 - 0) / 8 = 6.125, int(seg / 2 + round(seg * k)); round(24.5) = 24 (half to even)
    assert frame_indices(50, 25.0, nframe=8, rule="segments") == [3, 9, 15, 21, 27, 34, 40, 46]
    # a bound of seconds 3..12 at 10 fps: frames 30..120, seg = 11.25; round(22.5) = 22, round(67.5) = 68
    assert frame_indices(300, 10.0, nframe=8, rule="segments", bound=(3.0, 12.0)) == [35, 46, 57, 69, 80, 91, 103, 114]
    # a frame folder of 12 files numbered from 1 at 3 fps, seconds 1..3: frames 3..9, seg = 1.5
    assert frame_indices(12, 3.0, nframe=4, rule="segments", bound=(1.0, 3.0), first=1) == [3, 5, 6, 7]
    with pytest.raises(ValueError, match="frame rate"):
        frame_indices(100, 0.0, fps=1.0)
    with pytest.raises(ValueError, match="refuses fps"):
        frame_indices(100, 25.0, fps=1.0, rule="segments", fps_rule=None, refuse_fps="MVBench refuses fps")
    with pytest.raises(ValueError, match="select no frame"):
        frame_indices(100, 25.0, nframe=4, rule="segments", bound=(9.0, 10.0))


@pytest.mark.parametrize(
    "nframe, fps", [(None, None), (4, 2.0), (0, None), (-1, None), (2.5, None), (True, None), (None, 0), (None, -1.0)]
)
def test_sampling_settings_are_checked(nframe: object, fps: object) -> None:
    with pytest.raises(ValueError):
        check_sampling(nframe, fps)  # type: ignore[arg-type]


def test_unreadable_missing_and_remote_videos_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00" * 256)
    with pytest.raises(VideoError, match="broken.mp4.*opencv cannot open"):
        sample_frames(broken, nframe=4)
    with pytest.raises(VideoError, match="broken.mp4"):
        probe_video(broken)
    text = tmp_path / "notes.mp4"
    text.write_text("this is not a video at all\n" * 20)
    with pytest.raises(MediaError, match="notes.mp4"):  # VideoError is a MediaError
        sample_frames(text, nframe=4)
    with pytest.raises(VideoError, match="missing.mp4: no such file"):
        sample_frames(tmp_path / "missing.mp4", nframe=4)
    with pytest.raises(VideoError, match="local files only"):
        sample_frames("https://example.com/clip.mp4", nframe=4)


def test_probe(clip: Path) -> None:
    assert probe_video(clip) == {"video_fps": 8.0, "total_frames": 16, "width": 64, "height": 48}


def test_data_urls_are_jpeg_frames_in_order(clip: Path) -> None:
    urls = frame_data_urls(clip, nframe=4, max_side=32)
    assert len(urls) == 4 and all(u.startswith("data:image/jpeg;base64,") for u in urls)
    images = [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))) for u in urls]
    assert all(im.format == "JPEG" and im.size == (32, 24) for im in images)
    assert _seen([im.convert("RGB") for im in images]) == [3, 6, 9, 12]


def test_frame_files_are_cached_per_file_and_settings(clip: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = frame_files(clip, nframe=4, cache_dir=cache)
    assert [p.name for p in first] == [f"frame_{i:07d}.jpg" for i in (3, 6, 9, 12)]
    assert all(p.parent.parent == cache for p in first)
    assert _seen([Image.open(p).convert("RGB") for p in first]) == [3, 6, 9, 12]
    stamp = first[0].stat().st_mtime_ns
    again = frame_files(clip, nframe=4, cache_dir=cache)
    assert again == first and again[0].stat().st_mtime_ns == stamp  # reused, not rewritten
    other = frame_files(clip, fps=1.0, cache_dir=cache)
    assert other[0].parent != first[0].parent and [p.name for p in other] == ["frame_0000000.jpg", "frame_0000008.jpg"]
    first[1].unlink()  # a damaged cache entry is redone
    assert [p.is_file() for p in frame_files(clip, nframe=4, cache_dir=cache)] == [True] * 4
    # an edited video (new contents, new mtime) gets a new folder
    copy = write_video(tmp_path / "copy.mp4", frames=4, fps=8.0)
    before = frame_files(copy, nframe=2, cache_dir=cache)
    write_video(copy, frames=8, fps=8.0)
    after = frame_files(copy, nframe=2, cache_dir=cache)
    assert before[0].parent != after[0].parent and [p.name for p in after] == ["frame_0000002.jpg", "frame_0000005.jpg"]
