"""Video_Holmes from a miniature snapshot in its layout (test_Video-Holmes.json, video/): rows, VLMEvalKit's prompt
text (its QUESTION_TMPL with its indentation, the candidates as the TSV's list literal) and frames (worked by hand
from vlmeval/dataset/video_holmes.py at e8e78f05), and its <answer> rule scored by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.video_holmes import VideoHolmes
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number
from tests.support.video_snapshots import write_video_holmes
from vlmkit.core.video import read_plan, sample_frames

ITEMS = [
    {"video ID": "h1", "Question": "[0] Why did he leave?", "Options": {"A": "He was late", "B": "He's angry",
     "C": "Rain"}, "Answer": "B", "Question ID": "q0", "Question Type": "SR", "Explanation": "..."},
    {"video ID": "h1", "Question": "[1] What next?", "Options": {"A": "x", "B": "y"}, "Answer": "A",
     "Question ID": "q1", "Question Type": "TCI"},
    {"video ID": "h2", "Question": "[2] Who?", "Options": {"A": "p", "B": "q", "C": "r", "D": "s"}, "Answer": "D",
     "Question ID": "q2", "Question Type": "SR"},
    {"video ID": "h2", "Question": "[3] Where?", "Options": {"A": "home", "B": "park", "C": "shop"}, "Answer": "C",
     "Question ID": "q3", "Question Type": "TA"},
]  # fmt: skip
FRAMES = {"h1": 50, "h2": 137}
# [0] "B:" in the last answer block: right; [1] the last block says B (the answer is A); [2] no block: no answer;
# [3] "C " in the block (no "A "/"B " before it): right
REPLIES = ["<think>A or B?</think><answer>B: angry</answer>", "<answer>A</answer> no, <answer>B</answer>",
           "The answer is D", "<answer>Option C is right</answer>"]
PROMPT_0 = (
    "\n    Based on the given video, reason and answer the single-choice question. Provide your reasoning between the "
    "<think> and </think> tags, and then give your final answer between the <answer> and </answer> tags.     "
    "The question is: [0] Why did he leave?. The options are: ['A. He was late', 'B. Hes angry', 'C. Rain'].     "
    "Your answer:\n    "
)


@pytest.fixture
def holmes(tmp_path: Path) -> VideoHolmes:
    snapshot = write_video_holmes(tmp_path / "Video-Holmes", ITEMS, frames=FRAMES)
    return VideoHolmes("Video_Holmes", data_root=snapshot, root=tmp_path / "lmu")


def test_rows_and_vlmevalkits_prompt(holmes: VideoHolmes, tmp_path: Path):
    assert holmes.data["answer"].tolist() == ["B", "A", "D", "C"]
    parts = holmes.build_prompt(0)
    assert [p["type"] for p in parts] == ["video", "text"] and parts[1]["value"] == PROMPT_0
    video = Path(parts[0]["value"])
    assert video.resolve() == (tmp_path / "Video-Holmes" / "video" / "h1.mp4").resolve()
    assert read_plan(video).rule == "vlmevalkit"


@pytest.mark.parametrize("setting, row, expected", [
    ({"nframe": 8}, 0, [5, 11, 16, 22, 27, 33, 38, 44]),  # step 50 / 9
    ({"nframe": 4}, 2, [27, 54, 82, 109]),  # step 137 / 5
    ({"fps": 0.3}, 2, [0, 33, 66, 100]),  # int(13.7 s * 0.3) = 4 frames, step 10 / 0.3 = 33.3
])  # fmt: skip
def test_rows_send_vlmevalkits_frames(holmes: VideoHolmes, setting: dict, row: int, expected: list[int]):
    video = holmes.build_prompt(row)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def test_score_by_hand(holmes: VideoHolmes):
    result = holmes.evaluate(holmes.data.assign(prediction=REPLIES))
    assert result.per_sample["extracted"].tolist() == ["B", "B", None, "C"]
    assert result.metrics == pytest.approx({"Overall": 0.5, "SR": 0.5, "TA": 1.0, "TCI": 0.0})
    assert result.vlmevalkit.metrics == result.metrics and result.counts["unread"] == 1


def test_a_bad_item_is_one_line(tmp_path: Path):
    bad = [dict(ITEMS[0], Options=["He was late"])]
    with pytest.raises(DatasetError, match=r"test_Video-Holmes\.json: item 0, field Options: not an object"):
        VideoHolmes("Video_Holmes", data_root=write_video_holmes(tmp_path / "a", bad, frames=FRAMES), root=tmp_path)
