"""Video-MME, MVBench and MVBench_MP4 built from miniature snapshots in VLMEvalKit's layout: the rows, VLMEvalKit's
prompt texts (written out here as VLMEvalKit's source has them), the clips made for bounded and frame-folder tasks,
the rule scoring worked out by hand, the judge fallback, and one-line errors for missing snapshots and files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from datasets_tsv.benchmarks.mvbench import MVBench, MVBenchMP4
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.benchmarks.videomme import VideoMME
from tests.support.media_files import nearest_frame
from tests.support.video_snapshots import (
    hub_snapshot,
    write_mvbench,
    write_mvbench_mp4,
    write_videomme,
)
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.kinds.video_mcq import mvbench_first_word, videomme_letter
from vlmkit.core.video import read_plan, sample_frames

# VLMEvalKit's texts, as its source writes them (vlmeval/dataset/videomme.py, mvbench.py)
VIDEOMME_FRAMES = """
These are the frames of a video. \
Select the best answer to the following multiple-choice question based on the video. \
Respond with only the letter (A, B, C, or D) of the correct option.
"""
MVBENCH_SYS = """Carefully watch the video and pay attention to the cause and sequence of events, \
the detail and movement of objects, and the action and pose of persons. \
Based on your observations, select the best option that accurately addresses the question.
"""

OPTS = ["A. red", "B. green", "C. blue", "D. white"]
VIDEOMME_ROWS = [
    # video, duration, domain, sub_category, task_type, answer
    {"video": "vid_s", "duration": "short", "domain": "Knowledge", "sub_category": "Astronomy",
     "task_type": "Counting Problem", "question": "[0] How many stars?", "candidates": OPTS, "answer": "A"},
    {"video": "vid_s", "duration": "short", "domain": "Knowledge", "sub_category": "Geography",
     "task_type": "OCR Problems", "question": "[1] What is written?", "candidates": OPTS, "answer": "C"},
    {"video": "vid_m", "duration": "medium", "domain": "Sports Competition", "sub_category": "Football",
     "task_type": "Counting Problem", "question": "[2] How many goals?", "candidates": OPTS, "answer": "D"},
    {"video": "vid_m", "duration": "medium", "domain": "Sports Competition", "sub_category": "Football",
     "task_type": "Action Reasoning", "question": "[3] Why did he run?", "candidates": OPTS, "answer": "B"},
    {"video": "vid_l", "duration": "long", "domain": "Knowledge", "sub_category": "Astronomy",
     "task_type": "Counting Problem", "question": "[4] How many planets?", "candidates": OPTS, "answer": "A"},
]  # fmt: skip
# replies: right (bare letter); right after a prefix; right ("Best option: D": VLMEvalKit would read the B of
# "Best"); unread (a miss without a judge); wrong
VIDEOMME_REPLIES = ["A", "The best answer is C.", "Best option: D", "I cannot tell from this.", "B"]

MVBENCH_ITEMS = {
    "Action Antonym": [
        {"video": "ant1.webm", "question": "[1] What is the action?", "candidates": ["pushing", "pulling"],
         "answer": "pulling"},
        {"video": "ant2.mp4", "question": "[2] What is done?", "candidates": ["opening", "closing", "none"],
         "answer": "opening"},
    ],
    "Action Sequence": [
        {"video": "seq1.mp4", "question": "[0] What happened after?", "candidates": ["sat", "stood", "ran"],
         "answer": "ran", "start": 1.0, "end": 2.0},
    ],
    "Episodic Reasoning": [
        {"video": "ep1", "question": "[3] Who spoke?", "candidates": ["Ross", "Rachel"], "answer": "Rachel",
         "start": 1, "end": 3},
        {"video": "ep2", "question": "[4] Where are they?", "candidates": ["cafe", "home"], "answer": "cafe",
         "start": 0, "end": 10},
    ],
}  # fmt: skip
# In VLMEvalKit's task order: Action Sequence (row 0), Action Antonym (1, 2), Episodic Reasoning (3, 4); [k] is the row.
MVBENCH_REPLIES = ["C) ran", "(B) pulling", "B", "The answer is (B).", "no idea"]


@pytest.fixture
def videomme(tmp_path: Path) -> VideoMME:
    write_videomme(tmp_path / "vm", VIDEOMME_ROWS, frames={"vid_s": 16, "vid_m": 24, "vid_l": 40})
    return VideoMME("Video-MME", data_root=tmp_path / "vm", root=tmp_path / "lmu")


@pytest.fixture
def mvbench(tmp_path: Path) -> MVBench:
    write_mvbench(tmp_path / "mv", MVBENCH_ITEMS)
    return MVBench("MVBench", data_root=tmp_path / "mv", root=tmp_path / "lmu")


def predictions(dataset, replies) -> pd.DataFrame:
    table = dataset.data.copy()
    table["prediction"] = replies
    return table


# ------------------------------------------------------------------------------------------------- Video-MME
def test_videomme_rows_and_vlmevalkit_prompt(videomme: VideoMME, tmp_path: Path):
    assert videomme.kind == "video" and len(videomme) == 5
    assert videomme.data["index"].tolist() == [0, 1, 2, 3, 4]
    assert videomme.info()["table_source"] == "Video-MME.tsv"
    parts = videomme.build_prompt(2)
    # the video part names a link in the dataset's folder to the snapshot's video, with its frame plan beside it
    assert parts[0]["type"] == "video"
    link = Path(parts[0]["value"])
    assert link.parent == tmp_path / "lmu" / "videos" / "Video-MME" / "links"
    assert link.resolve() == (tmp_path / "vm" / "video" / "vid_m.mp4").resolve()
    assert read_plan(link).rule == "vlmevalkit"
    assert [p["value"] for p in parts[1:]] == [
        VIDEOMME_FRAMES, "Question: [2] How many goals?\nA. red\nB. green\nC. blue\nD. white\nAnswer: "
    ]
    assert videomme.image_paths(0) == []


def test_videomme_score_by_hand(videomme: VideoMME):
    result = videomme.evaluate(predictions(videomme, VIDEOMME_REPLIES))
    # hits: 1 1 1 0 0 -> overall 3/5; short 2/2, medium 1/2, long 0/1
    assert result.scorer == "videomme" and result.scale.kind == "fraction"
    assert result.metrics["Overall"] == pytest.approx(0.6)
    assert (result.metrics["short"], result.metrics["medium"], result.metrics["long"]) == (1.0, 0.5, 0.0)
    assert result.metrics["domain: Knowledge"] == pytest.approx(2 / 3)
    assert result.metrics["task_type: Counting Problem"] == pytest.approx(2 / 3)
    assert result.metrics["sub_category: Football"] == 0.5
    table = result.table.set_index("duration")
    assert table.index.tolist() == ["short", "medium", "long", "overall"]
    assert table.loc["medium", "task_type: Action Reasoning"] == 0.0
    assert table.loc["medium", "task_type: Counting Problem"] == 1.0
    assert np.isnan(table.loc["long", "domain: Sports Competition"])
    assert result.per_sample["extracted"].tolist()[:3] == ["A", "C", "D"]
    assert result.counts["unread"] == 1 and result.counts["by_rule"] == 4
    assert any("lacks two commas" in n for n in result.notes)


def test_videomme_letter_rule():
    assert videomme_letter("The correct answer is B") == "B"
    assert videomme_letter("Best answer: C") == "C"  # VLMEvalKit: B (its list never removes "Best answer:")
    assert videomme_letter("(D) white") == "D"
    assert videomme_letter("A dog runs") == "A"  # the first capital A-D anywhere, as VLMEvalKit
    assert videomme_letter("none of them") is None


def test_videomme_judge_reads_what_the_rule_cannot(videomme: VideoMME):
    judge = FunctionJudge(lambda request: "B", name="key")
    replies = [None, "The best answer is C.", "Best option: D", "I cannot tell from this.", "B"]
    result = videomme.evaluate(predictions(videomme, replies), judge=judge)
    [request] = judge.asked
    assert "[3] Why did he run?" in request.prompt and "B. green" in request.prompt  # the row's candidates
    assert "I cannot tell from this." in request.prompt
    # row 0 failed (miss), row 3 judged B = right: 3/5
    assert result.metrics["Overall"] == pytest.approx(0.6)
    assert result.counts["by_judge"] == 1 and result.counts["inference_errors"] == 1
    assert result.per_sample.set_index("index").loc[3, "method"] == "judge"


def test_videomme_missing_video_names_the_file(tmp_path: Path):
    write_videomme(tmp_path / "vm", VIDEOMME_ROWS)
    (tmp_path / "vm" / "video" / "vid_l.mp4").unlink()
    with pytest.raises(DatasetError) as err:
        VideoMME("Video-MME", data_root=tmp_path / "vm", root=tmp_path)
    text = str(err.value)
    assert "\n" not in text and str(tmp_path / "vm" / "video" / "vid_l.mp4") in text
    assert "videos_chunked_*.zip" in text


def test_videomme_without_a_table_or_folder(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"videomme/test-00000-of-00001\.parquet: not found"):
        VideoMME("Video-MME", data_root=tmp_path / "empty", root=tmp_path)
    with pytest.raises(DatasetError, match=r"--data-root .*nowhere: no such folder"):
        VideoMME("Video-MME", data_root=tmp_path / "nowhere", root=tmp_path)


def test_snapshot_found_in_the_hugging_face_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    with pytest.raises(DatasetError) as err:
        VideoMME("Video-MME", root=tmp_path)
    assert f"no local snapshot of lmms-lab/Video-MME (looked in {cache})" in str(err.value)
    assert "--data-root DIR" in str(err.value)
    folder = hub_snapshot(cache, "lmms-lab/Video-MME")
    write_videomme(folder, VIDEOMME_ROWS[:2])
    assert VideoMME("Video-MME", root=tmp_path).snapshot == folder
    mp4 = hub_snapshot(cache, "OpenGVLab/MVBench", revision="video", commit="f" * 40)
    write_mvbench_mp4(mp4, {"Action Count": MVBENCH_ITEMS["Action Antonym"]}, {"Action Count": "perception/"})
    assert MVBenchMP4("MVBench_MP4", root=tmp_path).snapshot == mp4


# ------------------------------------------------------------------------------------------------- MVBench
def test_mvbench_rows_and_vlmevalkit_prompt(mvbench: MVBench, tmp_path: Path):
    assert mvbench.data["task_type"].tolist() == ["Action Sequence", "Action Antonym", "Action Antonym",
                                                  "Episodic Reasoning", "Episodic Reasoning"]
    system, user, prefill = mvbench.build_prompt(1)
    assert system == {"role": "system", "content": [{"type": "text", "value": MVBENCH_SYS}]}
    assert user["role"] == "user"
    assert [p["type"] for p in user["content"]] == ["video", "text", "text"]  # frames, then the question
    assert user["content"][1]["value"] == "Question: [1] What is the action?\nOptions:\n(A) pushing\n(B) pulling"
    video = Path(user["content"][0]["value"])
    assert video.resolve() == (tmp_path / "mv" / "video" / "ssv2_video" / "ant1.webm").resolve()
    assert read_plan(video).rule == "segments" and read_plan(video).fps_rule is None
    assert user["content"][2]["value"] == "\nOnly give the best option."
    # VLMEvalKit's role='assistant' text: a prefill the model continues, no longer the user turn's last text
    assert prefill == {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]}
    assert not any("departs" in n or "Best option" in n for n in mvbench.notes)


def test_mvbench_bounded_and_frame_folder_clips(mvbench: MVBench, tmp_path: Path):
    # Action Sequence: seconds 1..2 of a 32-frame 8 fps video = frames 8..16
    clip_of_row_0 = mvbench.build_prompt(0)[1]["content"][0]["value"]
    clip = Path(clip_of_row_0).resolve()  # the link names the cut clip a model given the whole video gets
    assert clip.is_relative_to(tmp_path / "lmu" / "videos" / "MVBench")
    video = sample_frames(clip, nframe=9)
    assert video.total_frames == 9 and video.video_fps == pytest.approx(8.0)
    assert [nearest_frame(np.asarray(f).mean(axis=(0, 1))) for f in video.frames] == [i % 16 for i in range(8, 17)]
    # Episodic Reasoning: frames 00003.jpg..00009.jpg (seconds 1..3 at 3 fps, numbered from 1) at 3 fps
    clip = Path(mvbench.build_prompt(3)[1]["content"][0]["value"]).resolve()
    video = sample_frames(clip, nframe=7)
    assert video.video_fps == pytest.approx(3.0)
    assert [nearest_frame(np.asarray(f).mean(axis=(0, 1))) for f in video.frames] == list(range(2, 9))
    # end past the folder's last frame: frames 1..12
    assert sample_frames(Path(mvbench.build_prompt(4)[1]["content"][0]["value"]).resolve(), nframe=3).total_frames == 12
    # built again, row 0 is the prompt written out by hand, and its clip is the one cut above, not cut again
    first = Path(clip_of_row_0)
    made = first.resolve().stat()
    system, user, prefill = mvbench.build_prompt(0)
    assert system == {"role": "system", "content": [{"type": "text", "value": MVBENCH_SYS}]}
    assert user == {"role": "user", "content": [
        {"type": "video", "value": str(first)},
        {"type": "text", "value": "Question: [0] What happened after?\nOptions:\n(A) sat\n(B) stood\n(C) ran"},
        {"type": "text", "value": "\nOnly give the best option."},
    ]}
    assert prefill == {"role": "assistant", "content": [{"type": "text", "value": "Best option:("}]}
    again = first.resolve().stat()
    assert (again.st_ino, again.st_mtime_ns, again.st_size) == (made.st_ino, made.st_mtime_ns, made.st_size)
    clips = sorted(p for p in (tmp_path / "lmu" / "videos" / "MVBench").rglob("*.mp4") if "links" not in p.parts)
    assert len(clips) == 3 and first.resolve() in clips  # rows 0, 3 and 4: one clip each, none made twice


def test_mvbench_score_by_hand(mvbench: MVBench):
    result = mvbench.evaluate(predictions(mvbench, MVBENCH_REPLIES))
    # row 0 "C) ran": first word "c)" is part of "(c)" -> right; row 1 "(B) pulling" right; row 2 "B" vs (a) wrong;
    # row 3: first word "the" no, can_infer reads B = Rachel -> right; row 4 unread -> miss
    assert result.scorer == "mvbench" and result.scale.kind == "percent"
    assert result.per_sample["hit"].tolist() == [True, True, False, True, False]
    assert result.metrics == pytest.approx({"Overall": 60.0, "Action Sequence": 100.0, "Action Antonym": 50.0,
                                            "Episodic Reasoning": 50.0})
    assert result.counts["unread"] == 1 and result.counts["correct: Action Antonym"] == 1


def test_mvbench_first_word_rule():
    assert mvbench_first_word("(A) pushing", "(A) pushing")
    assert mvbench_first_word("a.", "(A) pushing")
    assert mvbench_first_word("(a).", "(A) pushing")
    assert not mvbench_first_word("(B) pulling", "(A) pushing")
    # VLMEvalKit counts these as right ("" and "(" are part of "(a)"); vlmkit does not
    assert not mvbench_first_word("", "(A) pushing")
    assert not mvbench_first_word(" B", "(A) pushing")
    assert not mvbench_first_word("( B", "(A) pushing")


def test_mvbench_missing_files_are_one_line_errors(tmp_path: Path):
    write_mvbench(tmp_path / "mv", MVBENCH_ITEMS)
    (tmp_path / "mv" / "json" / "moving_count.json").unlink()
    with pytest.raises(DatasetError, match=r"json/moving_count\.json: not found$"):
        MVBench("MVBench", data_root=tmp_path / "mv", root=tmp_path)
    write_mvbench(tmp_path / "mv", MVBENCH_ITEMS)
    for jpg in (tmp_path / "mv" / "video" / "tvqa" / "frames_fps3_hq" / "ep2").iterdir():
        jpg.unlink()
    (tmp_path / "mv" / "video" / "tvqa" / "frames_fps3_hq" / "ep2").rmdir()
    with pytest.raises(DatasetError) as err:
        MVBench("MVBench", data_root=tmp_path / "mv", root=tmp_path)
    assert str(err.value).startswith(f"{tmp_path / 'mv' / 'video/tvqa/frames_fps3_hq/ep2'}: missing, needed by MVBench")
    assert "unzip the snapshot's video/*.zip" in str(err.value)
    bad = dict(MVBENCH_ITEMS, **{"Action Antonym": [dict(MVBENCH_ITEMS["Action Antonym"][0], answer="sliding")]})
    write_mvbench(tmp_path / "bad", bad)
    with pytest.raises(DatasetError, match=r"action_antonym\.json: item 0, field answer: answer 'sliding' is not"):
        MVBench("MVBench", data_root=tmp_path / "bad", root=tmp_path)


def test_mvbench_finds_the_data0613_supplement(tmp_path: Path):
    write_mvbench(tmp_path / "mv", MVBENCH_ITEMS)
    moved = tmp_path / "mv" / "video" / "data0613" / "ssv2_video" / "ant2.mp4"
    moved.parent.mkdir(parents=True)
    (tmp_path / "mv" / "video" / "ssv2_video" / "ant2.mp4").rename(moved)
    dataset = MVBench("MVBench", data_root=tmp_path / "mv", root=tmp_path)
    assert Path(dataset.build_prompt(2)[1]["content"][0]["value"]).resolve() == moved.resolve()


def test_mvbench_mp4_branch(tmp_path: Path):
    items = {"Action Count": MVBENCH_ITEMS["Action Antonym"], "Moving Count": MVBENCH_ITEMS["Action Sequence"]}
    write_mvbench_mp4(tmp_path / "mp4", items, {"Action Count": "perception/videos/", "Moving Count": "clevrer/"})
    dataset = MVBenchMP4("MVBench_MP4", data_root=tmp_path / "mp4", root=tmp_path)
    assert dataset.data["task_type"].tolist() == ["Action Count", "Action Count", "Moving Count"]
    # no bound in this branch: the video is the snapshot's own file
    video = Path(dataset.build_prompt(2)[1]["content"][0]["value"])
    assert video.resolve() == (tmp_path / "mp4" / "clevrer" / "seq1.mp4").resolve()
    assert read_plan(video).fps_rule == "vlmevalkit"  # MVBench_MP4 takes --fps
    result = dataset.evaluate(predictions(dataset, ["(B) pulling", "(A) opening", "(B) stood"]))
    assert result.metrics == pytest.approx({"Overall": 200 / 3, "Action Count": 100.0, "Moving Count": 0.0})
    assert json.loads(dataset.data["candidates"].iloc[2]) == ["sat", "stood", "ran"]


def test_table_md5_follows_the_snapshot(tmp_path: Path):
    write_mvbench(tmp_path / "mv", MVBENCH_ITEMS)
    first = MVBench("MVBench", data_root=tmp_path / "mv", root=tmp_path).file_md5
    assert MVBench("MVBench", data_root=tmp_path / "mv", root=tmp_path).file_md5 == first
    changed = dict(MVBENCH_ITEMS, **{"Action Antonym": MVBENCH_ITEMS["Action Antonym"][:1]})
    write_mvbench(tmp_path / "mv", changed)
    assert MVBench("MVBench", data_root=tmp_path / "mv", root=tmp_path).file_md5 != first

FRAMES_TMPL_SUB = """
These are the frames of a video. \
This video's subtitles are listed below:
{}
Select the best answer to the following multiple-choice question based on the video. \
Respond with only the letter (A, B, C, or D) of the correct option.
"""
SRT = """1
00:00:00,000 --> 00:00:00,700
Hello
there

2
00:00:00,900 --> 00:00:01,200
Second

3
00:00:01,600 --> 00:00:02,000
late
"""


@pytest.mark.parametrize("sampling", [{"nframe": 3}, {"fps": 2.0}])
def test_videomme_subtitles_at_vlmevalkits_frames(tmp_path: Path, sampling: dict):
    write_videomme(tmp_path / "vm", VIDEOMME_ROWS)
    (tmp_path / "vm" / "subtitle").mkdir()
    (tmp_path / "vm" / "subtitle" / "vid_s.srt").write_text(SRT)
    dataset = VideoMME("Video-MME_subs", data_root=tmp_path / "vm", root=tmp_path, use_subtitle=True, **sampling)
    # vid_s: 16 frames at 8 fps. nframe 3: frames 4 8 12 (int(i * 16 / 4)); fps 2: frames 0 4 8 12 (int(i * 8 / 2)):
    # 0.5 s "Hello there", 1.0 s "Second", 1.5 s none (0 s: none, a cue starting at 0 is not yet on screen)
    parts = dataset.build_prompt(0)
    assert parts[1]["value"] == FRAMES_TMPL_SUB.format("Hello there\nSecond")
    assert parts[2]["value"].startswith("Question: [0] How many stars?")
    assert dataset.build_prompt(2)[1]["value"] == FRAMES_TMPL_SUB.format("")  # vid_m has no subtitle file
    assert dataset.info()["subtitles"] == sampling
    with pytest.raises(DatasetError, match="subtitles are picked at the frames of nframe or fps"):
        VideoMME("Video-MME_subs", data_root=tmp_path / "vm", root=tmp_path, use_subtitle=True)


def test_a_gif_becomes_an_mp4_and_an_empty_bound_is_an_error(tmp_path: Path):
    from PIL import Image

    from vlmkit.core.video import VideoError
    from vlmkit.core.video_clips import clip_file

    frames = [Image.new("RGB", (32, 24), (255, 0, 0) if i % 2 else (0, 0, 255)) for i in range(10)]
    frames[0].save(tmp_path / "a.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
    out = clip_file(tmp_path / "a.gif", cache_dir=tmp_path / "cache")
    assert out.suffix == ".mp4" and out.parent == tmp_path / "cache"
    video = sample_frames(out, nframe=10)
    assert video.total_frames == 10 and video.video_fps == pytest.approx(10.0)
    assert [nearest_frame(np.asarray(f).mean(axis=(0, 1))) for f in video.frames] == [3, 1] * 5  # blue, red
    with pytest.raises(VideoError, match=r"a\.gif: seconds 5\.0\.\.6\.0 select no frame"):
        clip_file(tmp_path / "a.gif", start=5.0, end=6.0, cache_dir=tmp_path / "cache")
