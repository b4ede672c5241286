"""MVU-Eval from a miniature copy in VLMEvalKit's layout (the annotation JSON, videos flat beside it): rows in index
order, VLMEvalKit's prompt (per video its "The following is the Video k" line, then question, options and
instruction) and each video's frames (worked by hand from vlmeval/dataset/mvu_eval.py at e8e78f05), and its
check_model_output reading scored by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.mvu_eval import MVUEval
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number
from tests.support.video_snapshots import write_mvu_eval
from vlmkit.core.video import sample_frames

ANNOS = {
    "1": {"video_paths": ["video/v2.mp4"], "question": "[1] How many?", "options": ["A. 1", "B. 2", "C. 3"],
          "ground_truth": "C", "task": "Counting"},
    "0": {"video_paths": ["video/v1.mp4", "video/v2.mp4"], "question": "[0] Which video is longer?",
          "options": ["A. Video 1", "B. Video 2"], "ground_truth": "B", "task": "Comparison"},
    "2": {"video_paths": ["v1.mp4"], "question": "[2] What?", "options": ["A. x", "B. y"], "ground_truth": "A",
          "task": "Counting"},
    "3": {"video_paths": ["v2.mp4"], "question": "[3] Which?", "options": [f"{c}. {c.lower()}" for c in "ABCDEF"],
          "ground_truth": "F", "task": "Comparison"},
}  # fmt: skip
FRAMES = {"v1": 50, "v2": 137}
# by index: [0] "THE ANSWER IS B": right; [1] two boxed letters (A, C): the first character, a backslash: a miss;
# [2] "a" upper-cased is the whole reply: A, right; [3] a failed call: a miss (VLMEvalKit reads its "Failed to
# obtain answer via API." by its first character, F: right there)
REPLIES = ["The answer is B.", "\\boxed{A} or \\boxed{C}", "a", None]
INSTRUCTION = "Please select the correct answer from the options. Answer with the option\u2019s letter directly."


@pytest.fixture
def mvu(tmp_path: Path) -> MVUEval:
    snapshot = write_mvu_eval(tmp_path / "MVU-Eval", ANNOS, frames=FRAMES)
    return MVUEval("MVU-Eval", data_root=snapshot, root=tmp_path / "lmu")


def test_rows_and_vlmevalkits_prompt(mvu: MVUEval, tmp_path: Path):
    assert mvu.data["index"].tolist() == [0, 1, 2, 3] and mvu.data["answer"].tolist() == ["B", "C", "A", "F"]
    parts = mvu.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "video", "text", "video", "text", "text", "text"]
    assert [p["value"] for p in parts if p["type"] == "text"] == [
        "The following is the Video 1", "The following is the Video 2", "[0] Which video is longer?",
        "A. Video 1\nB. Video 2", INSTRUCTION]  # fmt: skip
    assert [Path(p["value"]).resolve() for p in parts if p["type"] == "video"] == [
        (tmp_path / "MVU-Eval" / "v1.mp4").resolve(), (tmp_path / "MVU-Eval" / "v2.mp4").resolve()]


@pytest.mark.parametrize("setting, expected", [
    ({"nframe": 4}, [[10, 20, 30, 40], [27, 54, 82, 109]]),  # int(i * 50 / 5), int(i * 137 / 5)
    # int(5 s * 0.3) = 1 frame; int(13.7 s * 0.3) = 4 frames, step 10 / 0.3 = 33.3
    ({"fps": 0.3}, [[0], [0, 33, 66, 100]]),
])  # fmt: skip
def test_each_video_sends_vlmevalkits_frames(mvu: MVUEval, setting: dict, expected: list[list[int]]):
    videos = [p["value"] for p in mvu.build_prompt(0) if p["type"] == "video"]
    assert [[frame_number(f) for f in sample_frames(v, **setting).frames] for v in videos] == expected


def test_score_by_hand(mvu: MVUEval):
    result = mvu.evaluate(mvu.data.assign(prediction=REPLIES))
    assert result.per_sample["extracted"].tolist() == ["B", "\\", "A", None]
    assert result.metrics == pytest.approx({"Overall": 0.5, "Comparison": 0.5, "Counting": 0.5})
    assert result.vlmevalkit.metrics == pytest.approx({"Overall": 0.75})
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(3, None, "F")]


def test_a_missing_video_is_one_line(tmp_path: Path):
    snapshot = write_mvu_eval(tmp_path / "m", {"0": ANNOS["0"]}, frames=FRAMES)
    (snapshot / "v2.mp4").unlink()
    with pytest.raises(DatasetError, match=r"v2\.mp4: missing, needed by MVU-Eval row 0 \(index 0\)"):
        MVUEval("MVU-Eval", data_root=snapshot, root=tmp_path / "lmu")
