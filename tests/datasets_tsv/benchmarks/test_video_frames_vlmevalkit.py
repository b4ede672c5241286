"""The frames a Video-MME / MVBench / MVBench_MP4 row sends are VLMEvalKit's (e8e78f05), in order, with its roles.

Miniature snapshots in each benchmark's layout hold generated videos whose frames carry their number
(`tests.support.indexed_video`); a row's video part is sampled as every model samples it (`sample_frames`, and the
JPEG data URLs an API model sends), at nframe 8 and 16 and at fps 1, and the numbers read back are compared with
VLMEvalKit's indices worked out by hand from its code:
- Video-MME (`VideoMME.save_video_frames`): step = n / (N + 1), frames int(i * step), i = 1..N; fps F: int(n / v * F)
  frames int(i * v / F) from frame 0.
- MVBench (`MVBench.get_index`): lo = max(first, round(start * fps)), hi = min(round(end * fps), last),
  seg = (hi - lo) / N, frames int(lo + seg / 2 + np.round(seg * k)) (round half to even); frame folders from 1 at 3
  fps; fps refused. MVBench_MP4 (`get_index_by_frame`): lo = 0, hi = n - 1; fps as Video-MME.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from datasets_tsv.benchmarks.mvbench import MVBench, MVBenchMP4
from datasets_tsv.benchmarks.videomme import VideoMME
from tests.support.indexed_video import frame_number, write_indexed_folder, write_indexed_video
from tests.support.video_snapshots import MVBENCH_FILES, write_videomme
from vlmkit.core.video import VideoError, frame_data_urls, sample_frames

OPTS = ["A. red", "B. green", "C. blue", "D. white"]
ROW = {"duration": "short", "domain": "Knowledge", "sub_category": "Astronomy", "task_type": "Counting Problem",
       "candidates": OPTS, "answer": "A"}

# Video-MME, a 50-frame video at 10 fps (5 s)
VIDEOMME_50 = {
    ("nframe", 8): [5, 11, 16, 22, 27, 33, 38, 44],  # step 50 / 9 = 5.56
    ("nframe", 16): [2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38, 41, 44, 47],  # step 50 / 17 = 2.94
    ("fps", 1.0): [0, 10, 20, 30, 40],  # int(5 * 1) = 5 frames, every 10th
}
# Video-MME, a 137-frame video at 10 fps (13.7 s)
VIDEOMME_137 = {
    ("nframe", 8): [15, 30, 45, 60, 76, 91, 106, 121],  # step 137 / 9 = 15.22
    ("fps", 1.0): [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120],  # int(13.7) = 13 frames
}
# MVBench Action Sequence: a 300-frame video at 10 fps, bound [3, 12] s: frames 30..120
MVBENCH_BOUNDED = {
    ("nframe", 8): [35, 46, 57, 69, 80, 91, 103, 114],  # seg 11.25; round(22.5) = 22, round(67.5) = 68
    ("nframe", 16): [32, 38, 43, 49, 54, 60, 66, 71, 77, 83, 88, 94, 100, 105, 111, 116],  # seg 5.625
}
# MVBench Action Antonym (and MVBench_MP4): a 50-frame video, no bound: frames 0..49, seg 49 / N
MVBENCH_WHOLE = {
    ("nframe", 8): [3, 9, 15, 21, 27, 34, 40, 46],  # seg 6.125; round(24.5) = 24
    ("nframe", 16): [1, 4, 7, 10, 13, 16, 19, 22, 25, 29, 32, 35, 38, 41, 44, 47],  # seg 3.0625
}
# MVBench Episodic Reasoning: a folder of 40 frames (00001.jpg ..) at 3 fps, bound [2, 9] s: frames 6..27
MVBENCH_FOLDER = {
    ("nframe", 8): [7, 10, 12, 15, 17, 20, 23, 25],  # seg 2.625; round(10.5) = 10
    ("nframe", 16): [6, 7, 9, 10, 11, 13, 14, 15, 16, 18, 19, 20, 22, 23, 24, 26],  # seg 1.3125
}
MVBENCH_SYS = """Carefully watch the video and pay attention to the cause and sequence of events, \
the detail and movement of objects, and the action and pose of persons. \
Based on your observations, select the best option that accurately addresses the question.
"""


def _sent(video: str, key: str, value: float) -> list[int]:
    """The frame numbers a model sampling `video` at this setting gets (local models: sample_frames)."""
    return [frame_number(f) for f in sample_frames(video, **{key: value}).frames]


def _sent_by_api(video: str, key: str, value: float) -> list[int]:
    """The frame numbers in the JPEG data URLs an API model sends."""
    urls = frame_data_urls(video, **{key: value})
    return [frame_number(Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))).convert("RGB")) for u in urls]


@pytest.fixture
def videomme(tmp_path: Path) -> VideoMME:
    rows = [dict(ROW, video="v50", question="[0] How many?"), dict(ROW, video="v137", question="[1] Which?")]
    snapshot = write_videomme(tmp_path / "vm", rows)
    write_indexed_video(snapshot / "video" / "v50.mp4", frames=50, fps=10.0)
    write_indexed_video(snapshot / "video" / "v137.mp4", frames=137, fps=10.0)
    return VideoMME("Video-MME", data_root=snapshot, root=tmp_path / "lmu")


def write_mvbench_indexed(root: Path) -> Path:
    items = {
        "Action Sequence": [{"video": "seq.mp4", "question": "[0] What next?", "candidates": ["sat", "ran"],
                             "answer": "ran", "start": 3.0, "end": 12.0}],
        "Action Antonym": [{"video": "ant.mp4", "question": "[1] What action?", "candidates": ["push", "pull"],
                            "answer": "pull"}],
        "Episodic Reasoning": [{"video": "ep", "question": "[2] Who spoke?", "candidates": ["Ross", "Rachel"],
                                "answer": "Rachel", "start": 2, "end": 9}],
    }  # fmt: skip
    (root / "json").mkdir(parents=True)
    for task, (file, prefix) in MVBENCH_FILES.items():
        (root / "json" / file).write_text(json.dumps(items.get(task, [])))
    write_indexed_video(root / MVBENCH_FILES["Action Sequence"][1] / "seq.mp4", frames=300, fps=10.0)
    write_indexed_video(root / MVBENCH_FILES["Action Antonym"][1] / "ant.mp4", frames=50, fps=10.0)
    write_indexed_folder(root / MVBENCH_FILES["Episodic Reasoning"][1] / "ep", frames=40)
    return root


@pytest.mark.parametrize("setting", list(VIDEOMME_50))
def test_videomme_rows_send_vlmevalkits_frames(videomme: VideoMME, setting: tuple[str, float]):
    parts = videomme.build_prompt(0)
    assert [p["type"] for p in parts] == ["video", "text", "text"]  # frames, then the instruction and question
    assert _sent(parts[0]["value"], *setting) == VIDEOMME_50[setting]
    assert _sent_by_api(parts[0]["value"], *setting) == VIDEOMME_50[setting]
    if setting in VIDEOMME_137:
        assert _sent(videomme.build_prompt(1)[0]["value"], *setting) == VIDEOMME_137[setting]


def test_videomme_frames_are_decoded_once_into_the_datasets_folder(videomme: VideoMME, tmp_path: Path):
    video = videomme.build_prompt(0)[0]["value"]
    _sent(video, "nframe", 8)
    cache = tmp_path / "lmu" / "videos" / "Video-MME" / "links" / ".frames"
    [folder] = list(cache.iterdir())
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert len(stamps) == 9  # 8 frames and frames.json
    # a second dataset object (another model, a rerun) sends the same frames from the same files
    again = VideoMME("Video-MME", data_root=videomme.snapshot, root=tmp_path / "lmu")
    assert again.build_prompt(0)[0]["value"] == video
    assert _sent(video, "nframe", 8) == VIDEOMME_50[("nframe", 8)]
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps
    info = videomme.info()["frames"]
    assert info["decoder"] == "opencv" and info["sampler"].startswith("vlmevalkit")


def test_the_centre_sampler_is_an_option_and_is_recorded(videomme: VideoMME, tmp_path: Path):
    centre = VideoMME("Video-MME", data_root=videomme.snapshot, root=tmp_path / "lmu", sampler="centre")
    video = centre.build_prompt(0)[0]["value"]
    assert video != videomme.build_prompt(0)[0]["value"]  # its own file: journals never mix the two
    assert _sent(video, "nframe", 8) == [3, 9, 15, 21, 28, 34, 40, 46]  # floor((k + 0.5) * 50 / 8)
    assert centre.info()["frames"]["sampler"].startswith("centre")


@pytest.mark.parametrize("setting", list(MVBENCH_BOUNDED))
def test_mvbench_rows_send_vlmevalkits_frames(tmp_path: Path, setting: tuple[str, float]):
    dataset = MVBench("MVBench", data_root=write_mvbench_indexed(tmp_path / "mv"), root=tmp_path / "lmu")
    assert dataset.data["task_type"].tolist() == ["Action Sequence", "Action Antonym", "Episodic Reasoning"]
    expected = {0: MVBENCH_BOUNDED, 1: MVBENCH_WHOLE, 2: MVBENCH_FOLDER}
    for row, table in expected.items():
        system, user, prefill = dataset.build_prompt(row)
        assert system == {"role": "system", "content": [{"type": "text", "value": MVBENCH_SYS}]}
        assert user["role"] == "user"
        assert [p["type"] for p in user["content"]] == ["video", "text", "text"]  # frames, then the question
        assert user["content"][2]["value"] == "\nOnly give the best option."
        assert prefill == {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]}
        assert _sent(user["content"][0]["value"], *setting) == table[setting], row
    assert _sent_by_api(dataset.build_prompt(0)[1]["content"][0]["value"], *setting) == MVBENCH_BOUNDED[setting]


def test_mvbench_refuses_fps_as_vlmevalkit_does(tmp_path: Path):
    dataset = MVBench("MVBench", data_root=write_mvbench_indexed(tmp_path / "mv"), root=tmp_path / "lmu")
    with pytest.raises(VideoError, match="refuses fps"):
        sample_frames(dataset.build_prompt(1)[1]["content"][0]["value"], fps=1.0)


def test_mvbench_mp4_rows_send_vlmevalkits_frames(tmp_path: Path):
    root = tmp_path / "mp4"
    root.mkdir()
    item = {"video": "ant.mp4", "question": "[0] What action?", "candidates": ["push", "pull"], "answer": "pull"}
    (root / "test.json").write_text(json.dumps({"root": {"Action Count": "perception/"},
                                                "meta": {"Action Count": [item]}}))
    write_indexed_video(root / "perception" / "ant.mp4", frames=50, fps=10.0)
    dataset = MVBenchMP4("MVBench_MP4", data_root=root, root=tmp_path / "lmu")
    system, user, prefill = dataset.build_prompt(0)
    assert [p["type"] for p in user["content"]] == ["video", "text", "text"]
    assert prefill == {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]}
    video = user["content"][0]["value"]
    assert _sent(video, "nframe", 8) == MVBENCH_WHOLE[("nframe", 8)]
    assert _sent(video, "nframe", 16) == MVBENCH_WHOLE[("nframe", 16)]
    assert _sent(video, "fps", 1.0) == [0, 10, 20, 30, 40]  # get_index_by_fps: Video-MME's fps rule


def test_the_centre_sampler_on_a_bounded_mvbench_row_samples_its_clip(tmp_path: Path):
    dataset = MVBench("MVBench", data_root=write_mvbench_indexed(tmp_path / "mv"), root=tmp_path / "lmu",
                      sampler="centre")
    video = dataset.build_prompt(0)[1]["content"][0]["value"]
    # the clip of seconds 3..12 holds source frames 30..120 (91 frames); centres floor((k + 0.5) * 91 / 8) + 30
    assert _sent(video, "nframe", 8) == [35, 47, 58, 69, 81, 92, 103, 115]
    assert dataset.info()["frames"]["sampler"].startswith("centre")
