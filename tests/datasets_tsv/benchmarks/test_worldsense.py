"""WorldSense (frames only) from a miniature snapshot in its layout (worldsense_qa.json, videos/): rows in VLMEvalKit's
order, its prompt and frames (worked by hand from vlmeval/dataset/worldsense.py at e8e78f05), and scores worked by
hand for vlmkit and for VLMEvalKit's figure (its Video-MME prefix list as it is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.worldsense import WorldSense
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number
from tests.support.video_snapshots import write_worldsense
from vlmkit.core.video import read_plan, sample_frames


def task(question: str, answer: str, domain: str, kind: str) -> dict:
    return {"question": question, "candidates": ["A. red team", "B. blue team", "C. nobody", "D. both"],
            "answer": answer, "task_domain": domain, "task_type": kind}


DATA = {
    "w1": {"duration": "<1min", "domain": "Sports", "sub_category": "Football", "audio_class": ["Speech", "Music"],
           "video_caption": "a match", "task1": task("[0] Who scores?", "C", "Recognition", "Entity Recognition"),
           "task2": task("[1] Who sings?", "A", "Perception", "Audio Recognition")},
    "w2": {"duration": "2-4min", "domain": "Music", "sub_category": "Concert", "audio_class": ["Music"],
           "video_caption": "", "task1": task("[2] Who plays?", "D", "Perception", "Counting")},
}  # fmt: skip
FRAMES = {"w1": 50, "w2": 137}
# [0] vlmkit removes "Best answer:" and reads C (right); VLMEvalKit never removes it and reads the B of "Best" (a
# miss). [1] A: right. [2] no capital A-D: a miss on both
REPLIES = ["Best answer: C", "A", "I am not sure"]
INSTRUCTION = ("Carefully watch this video and pay attention to every detail. Based on your observations, select the "
               "best option that accurately addresses the question.")
FRAMES_TEXT = ("\nThese are the frames of a video. Select the best answer to the following multiple-choice question "
               "based on the video. Respond with only the letter (A, B, C, or D) of the correct option.\n")


@pytest.fixture
def ws(tmp_path: Path) -> WorldSense:
    return WorldSense("WorldSense", data_root=write_worldsense(tmp_path / "ws", DATA, frames=FRAMES), root=tmp_path)


def test_rows_and_vlmevalkits_prompt(ws: WorldSense, tmp_path: Path):
    assert [q[:3] for q in ws.data["question"]] == ["[0]", "[1]", "[2]"] and ws.data["index"].tolist() == [0, 1, 2]
    parts = ws.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "video", "text", "text"]
    assert [parts[0]["value"], parts[2]["value"]] == [INSTRUCTION, FRAMES_TEXT]
    assert parts[3]["value"] == "Question: [0] Who scores?\nA. red team\nB. blue team\nC. nobody\nD. both\nAnswer: "
    assert Path(parts[1]["value"]).resolve() == (tmp_path / "ws" / "videos" / "w1.mp4").resolve()
    assert read_plan(parts[1]["value"]).rule == "vlmevalkit"


@pytest.mark.parametrize("setting, row, expected", [
    ({"nframe": 8}, 0, [5, 11, 16, 22, 27, 33, 38, 44]),  # step 50 / 9
    ({"nframe": 4}, 2, [27, 54, 82, 109]),  # step 137 / 5
    ({"fps": 0.5}, 2, [0, 20, 40, 60, 80, 100]),  # int(13.7 s * 0.5) = 6 frames, step 20
])  # fmt: skip
def test_rows_send_vlmevalkits_frames(ws: WorldSense, setting: dict, row: int, expected: list[int]):
    video = ws.build_prompt(row)[1]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(ws: WorldSense):
    result = ws.evaluate(ws.data.assign(prediction=REPLIES))
    assert result.per_sample["hit"].tolist() == [True, True, False]
    assert result.metrics == pytest.approx({
        "Overall": 2 / 3, "<1min": 1.0, "2-4min": 0.0, "domain: Music": 0.0, "domain: Sports": 1.0,
        "sub_category: Concert": 0.0, "sub_category: Football": 1.0, "task_domain: Perception": 0.5,
        "task_domain: Recognition": 1.0, "task_type: Audio Recognition": 1.0, "task_type: Counting": 0.0,
        "task_type: Entity Recognition": 1.0, "audio_class: Music": 2 / 3, "audio_class: Speech": 1.0,
    })  # fmt: skip
    assert result.vlmevalkit.metrics == {
        "Overall": 0.333, "<1min": 0.5, "2-4min": 0.0, "domain: Music": 0.0, "domain: Sports": 0.5,
        "sub_category: Concert": 0.0, "sub_category: Football": 0.5, "task_domain: Perception": 0.5,
        "task_domain: Recognition": 0.0, "task_type: Audio Recognition": 1.0, "task_type: Counting": 0.0,
        "task_type: Entity Recognition": 0.0, "audio_class: Music": 0.333, "audio_class: Speech": 0.5,
    }  # fmt: skip
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(0, "C", "B")]


def test_a_bad_entry_is_one_line(tmp_path: Path):
    bad = {"w1": {k: v for k, v in DATA["w1"].items() if k != "audio_class"}}
    with pytest.raises(DatasetError, match=r"worldsense_qa\.json: video w1, field audio_class: missing"):
        WorldSense("WorldSense", data_root=write_worldsense(tmp_path / "ws", bad, frames=FRAMES), root=tmp_path)
