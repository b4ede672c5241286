"""MLVU_MCQ from a miniature snapshot in its layout (MLVU/json/<n>_<task>.json, MLVU/video/<n>_<task>/): rows in
VLMEvalKit's task order, its prompt and frames (worked by hand from vlmeval/dataset/mlvu.py at e8e78f05), and scores
worked by hand for vlmkit and for VLMEvalKit's figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.mlvu import MLVUMCQ
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number
from tests.support.video_snapshots import write_mlvu
from vlmkit.core.video import read_plan, sample_frames

SYSTEM = ("Carefully watch this video and pay attention to every detail. Based on your observations, select the best "
          "option that accurately addresses the question.")
# given out of VLMEvalKit's task order: rows come plotQA, needle, count
ITEMS = {
    "count": [
        {"video": "v137.mp4", "duration": 13.7, "question": "[2] How many dogs?", "candidates": ["1", "2", "3", "4"],
         "answer": "3"},
        {"video": "v137.mp4", "duration": 13.7, "question": "[3] Which animal?", "candidates": ["cat", "dog"],
         "answer": "dog"},
    ],
    "plotQA": [
        {"video": "v50.mp4", "duration": 5.0, "question": "[0] Who leaves?", "candidates": ["Ann", "Bob", "Cid"],
         "answer": "Cid"},
        {"video": "v50.mp4", "duration": 5.0, "question": "[1] What colour?", "candidates": ["red", "green"],
         "answer": "red"},
    ],
    "needle": [
        {"video": "v50.mp4", "duration": 5.0, "question": "[4] What is hidden?", "candidates": ["a key", "a coin"],
         "answer": "a key"},
    ],
}  # fmt: skip
FRAMES = {"v50.mp4": 50, "v137.mp4": 137}
# row 0: the letter before ')' is C: right. row 1: B before ')' (answer A), can_infer reads B: a miss.
# row 2: "N/A" reads nothing (unread, a miss); VLMEvalKit's xlsx gives it back as NaN. row 3: a failed call.
# row 4: a bare "A": right.
REPLIES = ["(C) Cid", "The answer is B) green", "N/A", None, "A"]


@pytest.fixture
def mlvu(tmp_path: Path) -> MLVUMCQ:
    return MLVUMCQ("MLVU_MCQ", data_root=write_mlvu(tmp_path / "MLVU", ITEMS, frames=FRAMES), root=tmp_path / "lmu")


def test_rows_in_vlmevalkits_task_order(mlvu: MLVUMCQ):
    assert mlvu.data["index"].tolist() == [0, 1, 2, 3, 4]
    assert mlvu.data["task_type"].tolist() == ["plotQA", "plotQA", "needle", "count", "count"]
    assert [q[:3] for q in mlvu.data["question"]] == ["[0]", "[1]", "[4]", "[2]", "[3]"]


def test_vlmevalkits_prompt(mlvu: MLVUMCQ, tmp_path: Path):
    system, user = mlvu.build_prompt(0)
    assert system == {"role": "system", "content": [{"type": "text", "value": SYSTEM}]}
    assert [p["type"] for p in user["content"]] == ["video", "text", "text"]
    assert user["content"][1]["value"] == "Question: [0] Who leaves?\nOptions:\n(A) Ann\n(B) Bob\n(C) Cid"
    assert user["content"][2]["value"] == "\nOnly give the best option."
    video = Path(user["content"][0]["value"])
    assert video.resolve() == (tmp_path / "MLVU" / "MLVU" / "video" / "1_plotQA" / "v50.mp4").resolve()
    assert read_plan(video).rule == "vlmevalkit"


@pytest.mark.parametrize("setting, row, expected", [
    ({"nframe": 8}, 0, [5, 11, 16, 22, 27, 33, 38, 44]),  # step 50 / 9
    ({"nframe": 4}, 3, [27, 54, 82, 109]),  # step 137 / 5 = 27.4
    ({"fps": 1.0}, 3, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]),  # int(13.7 s * 1) = 13 frames
    ({"fps": 0.5}, 0, [0, 20]),  # int(5 s * 0.5) = 2 frames, step 10 / 0.5 = 20
])  # fmt: skip
def test_rows_send_vlmevalkits_frames(mlvu: MLVUMCQ, setting: dict, row: int, expected: list[int]):
    video = mlvu.build_prompt(row)[1]["content"][0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(mlvu: MLVUMCQ):
    table = mlvu.data.copy()
    # REPLIES are by question number [k]; rows are in task order
    table["prediction"] = [REPLIES[int(q[1])] for q in table["question"]]
    result = mlvu.evaluate(table)
    by_question = dict(zip([int(q[1]) for q in table["question"]], result.per_sample["hit"]))
    assert by_question == {0: True, 1: False, 2: False, 3: False, 4: True}
    assert result.scorer == "mlvu_mcq" and result.primary == "M-Avg"
    assert result.metrics == pytest.approx({"M-Avg": 40.0, "plotQA": 50.0, "needle": 100.0, "count": 0.0})
    # VLMEvalKit: the failed call scores -1 in the count task's sum: (0 - 1) / 2
    assert result.vlmevalkit.metrics == {"M-Avg": 20.0, "plotQA": 50.0, "needle": 100.0, "count": -50.0}
    assert result.vlmevalkit.differing == []
    assert result.counts["unread"] == 1 and result.counts["inference_errors"] == 1
    assert result.counts["vlmevalkit_nan_replies"] == 1


def test_a_bad_item_is_one_line(tmp_path: Path):
    bad = {"plotQA": [dict(ITEMS["plotQA"][0], answer="Dan")]}
    with pytest.raises(DatasetError, match=r"1_plotQA\.json: item 0, field answer: answer 'Dan' is not one of"):
        MLVUMCQ("MLVU_MCQ", data_root=write_mlvu(tmp_path / "a", bad, frames=FRAMES), root=tmp_path)
    snapshot = write_mlvu(tmp_path / "b", ITEMS, frames=FRAMES)
    (snapshot / "MLVU" / "video" / "4_count" / "v137.mp4").unlink()
    with pytest.raises(DatasetError, match=r"v137\.mp4: missing, needed by MLVU_MCQ row 3 \(index 3\) \(2 of 5"):
        MLVUMCQ("MLVU_MCQ", data_root=snapshot, root=tmp_path)
    (snapshot / "MLVU" / "json" / "5_order.json").unlink()
    with pytest.raises(DatasetError, match=r"5_order\.json: not found; expected the MLVU/MVLU snapshot"):
        MLVUMCQ("MLVU_MCQ", data_root=snapshot, root=tmp_path)
    (snapshot / "MLVU" / "json" / "5_order.json").write_text(json.dumps({"not": "a list"}))
    with pytest.raises(DatasetError, match=r"5_order\.json: expected a list of questions"):
        MLVUMCQ("MLVU_MCQ", data_root=snapshot, root=tmp_path)
