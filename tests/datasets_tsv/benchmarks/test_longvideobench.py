"""LongVideoBench from a miniature snapshot in its layout (lvb_val.json, videos/): rows, VLMEvalKit's prompt and
frames (worked by hand from its code at e8e78f05), and scores worked by hand for vlmkit and for VLMEvalKit's figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.longvideobench import LongVideoBench
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from vlmkit.core.video import read_plan, sample_frames

ITEMS = [
    {"video_id": "v50", "video_path": "v50.mp4", "question": "[0] What is shown first?",
     "candidates": ["a cat", "a dog", "a bird", "a fish", "a horse"], "correct_choice": 4, "duration_group": 15,
     "question_category": "S2E", "duration": 5.0},
    {"video_id": "v50", "video_path": "v50.mp4", "question": "[1] What colour is it?",
     "candidates": ["red", "green", "blue"], "correct_choice": 2, "duration_group": 15, "question_category": "S2E"},
    {"video_id": "v137", "video_path": "v137.mp4", "question": "[2] Who comes in?",
     "candidates": ["Ann", "Bob"], "correct_choice": 0, "duration_group": 600, "question_category": "T3O"},
]  # fmt: skip
TAIL = "\nAnswer with the option's letter from the given choices directly."
# row 0 right; row 1 right for vlmkit, B for VLMEvalKit (its prefix list never removes "Best option:", so the B of
# "Best" is read); row 2 no letter A-E: a miss on both
REPLIES = ["E", "Best option: C", "I do not know"]


def write_snapshot(root: Path, items: list[dict] = ITEMS) -> Path:
    (root / "videos").mkdir(parents=True)
    (root / "lvb_val.json").write_text(json.dumps(items))
    write_indexed_video(root / "videos" / "v50.mp4", frames=50, fps=10.0)
    write_indexed_video(root / "videos" / "v137.mp4", frames=137, fps=10.0)
    return root


@pytest.fixture
def lvb(tmp_path: Path) -> LongVideoBench:
    return LongVideoBench("LongVideoBench", data_root=write_snapshot(tmp_path / "lvb"), root=tmp_path / "lmu")


def test_rows_and_vlmevalkits_prompt(lvb: LongVideoBench, tmp_path: Path):
    assert lvb.data["index"].tolist() == [0, 1, 2] and lvb.data["answer"].tolist() == ["E", "C", "A"]
    parts = lvb.build_prompt(1)
    assert [p["type"] for p in parts] == ["video", "text"]
    assert parts[1]["value"] == "[1] What colour is it?\nA. red\nB. green\nC. blue" + TAIL
    video = Path(parts[0]["value"])
    assert video.resolve() == (tmp_path / "lvb" / "videos" / "v50.mp4").resolve()
    assert read_plan(video).rule == "vlmevalkit"


@pytest.mark.parametrize("setting, row, expected", [
    ({"nframe": 8}, 0, [5, 11, 16, 22, 27, 33, 38, 44]),  # step 50 / 9
    ({"nframe": 8}, 2, [15, 30, 45, 60, 76, 91, 106, 121]),  # step 137 / 9
    ({"fps": 1.0}, 2, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]),  # int(13.7) = 13 frames
])  # fmt: skip
def test_rows_send_vlmevalkits_frames(lvb: LongVideoBench, setting: dict, row: int, expected: list[int]):
    video = lvb.build_prompt(row)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(lvb: LongVideoBench):
    table = lvb.data.copy()
    table["prediction"] = REPLIES
    result = lvb.evaluate(table)
    assert result.scorer == "longvideobench" and result.per_sample["hit"].tolist() == [True, True, False]
    assert result.metrics == pytest.approx({
        "Overall": 2 / 3, "duration_group: 15": 1.0, "duration_group: 600": 0.0, "question_category: S2E": 1.0,
        "question_category: T3O": 0.0,
    })  # fmt: skip
    assert result.vlmevalkit.metrics == {"Overall": 0.333, "duration_group: 15": 0.5, "duration_group: 600": 0.0,
                                         "question_category: S2E": 0.5, "question_category: T3O": 0.0}
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(1, "C", "B")]
    assert result.counts["unread"] == 1


def test_a_bad_item_is_one_line(tmp_path: Path):
    bad = [dict(ITEMS[0], correct_choice=7)]
    with pytest.raises(DatasetError, match=r"lvb_val\.json: item 0, field correct_choice: 7 is not a position"):
        LongVideoBench("LongVideoBench", data_root=write_snapshot(tmp_path / "lvb", bad), root=tmp_path)
    (tmp_path / "lvb" / "videos" / "v50.mp4").unlink()
    (tmp_path / "lvb" / "lvb_val.json").write_text(json.dumps(ITEMS))
    with pytest.raises(DatasetError, match=r"v50\.mp4: missing, needed by LongVideoBench row 0 \(index 0\)"):
        LongVideoBench("LongVideoBench", data_root=tmp_path / "lvb", root=tmp_path)
