"""Video-TT from a miniature snapshot in its layout after VLMEvalKit's first run (Video-TT.tsv, video/): VLMEvalKit's
prompt and frames (worked by hand from vlmeval/dataset/videott.py at e8e78f05), scores worked by hand for vlmkit and
for VLMEvalKit's figure (its Video-MME prefix list as it is), and the judge for a reply no rule reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.video_tt import VideoTT
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number
from tests.support.video_snapshots import write_video_tt
from vlmkit.core.video import read_plan, sample_frames
from vlmkit.judging.base import FunctionJudge

ROWS = [
    {"video": "vA", "duration": 5.0, "question": "[0] What colour is the car?",
     "question_prompt": "A. red\nB. blue\nC. green\nD. white", "capability": "Element Attributes", "answer": "C"},
    {"video": "vA", "duration": 5.0, "question": "[1] How many people?", "question_prompt": "A. 1\nB. 2\nC. 3\nD. 4",
     "capability": "Element Counting", "answer": "D"},
    {"video": "vB", "duration": 13.7, "question": "[2] Why did it fall?",
     "question_prompt": "A. wind\nB. push\nC. slip\nD. none", "capability": "Objective Causality", "answer": "A"},
]  # fmt: skip
FRAMES = {"vA": 50, "vB": 137}
# [0] C: right. [1] vlmkit removes "Best option:" and reads D (right); VLMEvalKit's list never removes it and reads
# the B of "Best" (a miss). [2] no capital A-D: no rule reads it (VLMEvalKit finds no options in the question: a miss)
REPLIES = ["C", "Best option: D", "no idea"]
FRAMES_TEXT = ("\nThese are the frames of a video. Select the best answer to the following multiple-choice question "
               "based on the video. Respond with only the letter (A, B, C, or D) of the correct option.\n")


@pytest.fixture
def tt(tmp_path: Path) -> VideoTT:
    return VideoTT("Video-TT", data_root=write_video_tt(tmp_path / "video-tt", ROWS, frames=FRAMES), root=tmp_path)


def test_vlmevalkits_prompt(tt: VideoTT, tmp_path: Path):
    parts = tt.build_prompt(0)
    assert [p["type"] for p in parts] == ["video", "text", "text"]
    assert parts[1]["value"] == FRAMES_TEXT
    assert parts[2]["value"] == "Question: [0] What colour is the car?\nA. red\nB. blue\nC. green\nD. white\nAnswer: "
    video = Path(parts[0]["value"])
    assert video.resolve() == (tmp_path / "video-tt" / "video" / "vA.mp4").resolve()
    assert read_plan(video).rule == "vlmevalkit" and tt.info()["table_source"] == "Video-TT.tsv"


@pytest.mark.parametrize("setting, row, expected", [
    ({"nframe": 8}, 0, [5, 11, 16, 22, 27, 33, 38, 44]),  # step 50 / 9
    ({"nframe": 4}, 2, [27, 54, 82, 109]),  # step 137 / 5
    ({"fps": 1.0}, 0, [0, 10, 20, 30, 40]),  # int(5 s * 1) = 5 frames
])  # fmt: skip
def test_rows_send_vlmevalkits_frames(tt: VideoTT, setting: dict, row: int, expected: list[int]):
    video = tt.build_prompt(row)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(tt: VideoTT):
    result = tt.evaluate(tt.data.assign(prediction=REPLIES))
    assert result.per_sample["hit"].tolist() == [True, True, False]
    assert result.metrics == pytest.approx({"overall": 200 / 3, "Element Counting": 100.0,
                                            "Element Attributes": 100.0, "Objective Causality": 0.0})
    assert result.vlmevalkit.metrics == pytest.approx({"overall": 100 / 3, "Element Counting": 0.0,
                                                       "Element Attributes": 100.0, "Objective Causality": 0.0})
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(1, "D", "B")]
    assert any("ZeroDivisionError" in note for note in result.vlmevalkit.notes)


def test_the_judge_gets_the_prompts_options(tt: VideoTT):
    asked = []

    def judge(request):
        asked.append(request.prompt)
        return "A"

    result = tt.evaluate(tt.data.assign(prediction=REPLIES), judge=FunctionJudge(judge))
    assert len(asked) == 1 and "A. wind" in asked[0] and "D. none" in asked[0] and "no idea" in asked[0]
    assert result.per_sample["hit"].tolist() == [True, True, True] and result.counts["by_judge"] == 1


def test_a_missing_column_is_one_line(tmp_path: Path):
    snapshot = write_video_tt(tmp_path / "video-tt", ROWS[:1], frames=FRAMES)
    table = (snapshot / "Video-TT.tsv").read_text().replace("capability", "skill")
    (snapshot / "Video-TT.tsv").write_text(table)
    with pytest.raises(DatasetError, match=r"Video-TT\.tsv: missing column `capability`"):
        VideoTT("Video-TT", data_root=snapshot, root=tmp_path)
