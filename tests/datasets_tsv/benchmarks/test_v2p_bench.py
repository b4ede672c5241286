"""V2P-Bench from a miniature snapshot in its layout (V2P-Bench.tsv, videos/, frames/): rows, VLMEvalKit's prompt
(its video-model order: question + multiple-choice line, video, visual-prompt frame) and frames (worked by hand from
vlmeval/dataset/video_base.py at e8e78f05), and its think-stripped letter rule and grouping scored by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.benchmarks.v2p_bench import V2PBench
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number
from tests.support.video_snapshots import write_v2p_bench
from vlmkit.core.video import read_plan, sample_frames

ROWS = [
    {"video_path": "MVBench/a.mp4", "frame_path": "a0.png", "question": "[0] Who waves?\nA. man\nB. woman",
     "answer": "B", "dimension": 1, "duration": 100},
    {"video_path": "MVBench/a.mp4", "frame_path": "a1.png", "question": "[1] What colour?\nC. red\nD. blue",
     "answer": "C", "dimension": 1, "duration": 500},
    {"video_path": "LVBench/b.mp4", "frame_path": "b0.png", "question": "[2] Where?\nA. here\nB. there",
     "answer": "A", "dimension": 8, "duration": 3000},
    {"video_path": "LVBench/b.mp4", "frame_path": "b1.png", "question": "[3] When?", "answer": "D", "dimension": 13,
     "duration": 239.9},
    {"video_path": "LVBench/b.mp4", "frame_path": "b2.png", "question": "[4] Why?", "answer": "C", "dimension": 13,
     "duration": 1800},
]  # fmt: skip
FRAMES = {"MVBench/a.mp4": 50, "LVBench/b.mp4": 137}
# [0] the think block's A is removed, "The answer is" removed: B, right; [1] "Best option:" removed: D, a miss;
# [2] a failed call: a miss (VLMEvalKit reads its "Failed to obtain answer via API." as A: right there);
# [3] no capital A-D: no answer; [4] C, right
REPLIES = ["<think>A is wrong</think>The answer is B", "Best option: D", None,
           "it is probably the last one, the video shows many things happening around", "C"]


@pytest.fixture
def v2p(tmp_path: Path) -> V2PBench:
    snapshot = write_v2p_bench(tmp_path / "V2P-Bench", ROWS, frames=FRAMES)
    return V2PBench("V2P-Bench", data_root=snapshot, root=tmp_path / "lmu")


def test_rows_and_vlmevalkits_prompt(v2p: V2PBench, tmp_path: Path):
    assert v2p.data["answer"].tolist() == ["B", "C", "A", "D", "C"]
    parts = v2p.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "video", "image"]
    assert parts[0]["value"] == ("[0] Who waves?\nA. man\nB. woman\nGive only your option letter that accurately "
                                 "addresses the question, no other words.")
    video = Path(parts[1]["value"])
    assert video.resolve() == (tmp_path / "V2P-Bench" / "videos" / "MVBench" / "a.mp4").resolve()
    assert read_plan(video).rule == "vlmevalkit"
    assert Path(parts[2]["value"]) == tmp_path / "V2P-Bench" / "frames" / "a0.png"


@pytest.mark.parametrize("setting, row, expected", [
    ({"nframe": 8}, 0, [5, 11, 16, 22, 27, 33, 38, 44]),  # int(i * 50 / 9)
    ({"nframe": 4}, 2, [27, 54, 82, 109]),  # int(i * 137 / 5)
    ({"fps": 0.3}, 3, [0, 33, 66, 100]),  # int(13.7 s * 0.3) = 4 frames, step 10 / 0.3 = 33.3
])  # fmt: skip
def test_rows_send_vlmevalkits_frames(v2p: V2PBench, setting: dict, row: int, expected: list[int]):
    video = v2p.build_prompt(row)[1]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(v2p: V2PBench):
    result = v2p.evaluate(v2p.data.assign(prediction=REPLIES))
    assert result.per_sample["extracted"].tolist() == ["B", "D", None, None, "C"]
    # OA: rows 0, 1; SR: rows 3, 4; dimension 8 only in Overall and Long; Short < 240 s: 0, 3; Medium: 1; Long: 2, 4
    assert result.metrics == pytest.approx({"Overall": 0.4, "OA": 0.5, "SR": 0.5, "Short": 0.5, "Medium": 0.0,
                                            "Long": 0.5})
    assert result.vlmevalkit.metrics == pytest.approx({"Overall": 0.6, "OA": 0.5, "SR": 0.5, "Short": 0.5,
                                                       "Medium": 0.0, "Long": 1.0})
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(2, None, "A")]
    assert result.counts["unread"] == 1


@pytest.mark.parametrize("field, value, message", [
    ("dimension", 17, r"row 0, field dimension: '17' is not a whole number 1\.\.16"),
    ("video_path", "../../x.mp4", r"row 0, field video_path: '\.\./\.\./x\.mp4' is not a path inside"),
])  # fmt: skip
def test_a_bad_row_is_one_line(tmp_path: Path, field: str, value, message: str):
    rows = [dict(ROWS[0], **{field: value})]
    snapshot = tmp_path / "s"
    write_v2p_bench(snapshot, [ROWS[0]], frames=FRAMES)
    pd.DataFrame([{"index": 0, **rows[0]}]).to_csv(snapshot / "V2P-Bench.tsv", sep="\t", index=False)
    with pytest.raises(DatasetError, match=r"V2P-Bench\.tsv: " + message):
        V2PBench("V2P-Bench", data_root=snapshot, root=tmp_path / "lmu")
