"""TempCompass_MCQ from a miniature snapshot in its layout (multi-choice.json, caption_matching.json, videos/): rows,
VLMEvalKit's prompt and frames (worked by hand from vlmeval/dataset/tempcompass.py at e8e78f05), its two word rules
and its judge prompt, and scores worked by hand for vlmkit and for VLMEvalKit's figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.tempcompass import TempCompassMCQ
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number
from tests.support.video_snapshots import write_tempcompass
from vlmkit.core.video import read_plan, sample_frames
from vlmkit.judging.base import FunctionJudge

ITEMS = {
    "caption_matching": [
        {"video_id": "vB", "question": "[3] Which caption matches the video?\nSentence A: a man runs left\n"
         "Sentence B: a man runs right", "answer": "Sentence A: a man runs left", "dim": "direction"},
        {"video_id": "vB", "question": "[4] Which caption matches?\nCaption A: fast car\nCaption B: slow car",
         "answer": "Caption B: slow car", "dim": "speed"},
        {"video_id": "vA", "question": "[5] Which one?\nOption 1: a\nOption 2: b", "answer": "Option 2: b",
         "dim": "order"},
    ],
    "multi-choice": [
        {"video_id": "vA", "question": "[0] What direction?\nA. left\nB. right\nC. up\nD. down", "answer": "B. right",
         "dim": "direction"},
        {"video_id": "vA", "question": "[1] How fast?\nA. slow\nB. fast", "answer": "A. slow", "dim": "speed"},
        {"video_id": "vB", "question": "[2] What order?\nA. x then y\nB. y then x", "answer": "A. x then y",
         "dim": "order"},
        {"video_id": "vA", "question": "[6] Which colour?\nA. red\nB. blue", "answer": "A. red",
         "dim": "attribute_change"},
    ],
}  # fmt: skip
FRAMES = {"vA": 50, "vB": 137}
# by question number: [0] a bare B: right; [1] starts "B.", the answer is A: 0; [2] no rule reads it; [6] "N/A" no
# rule reads (VLMEvalKit's xlsx gives it back as NaN); [3] the tag "Sentence A": right; [4] the sentence of option A,
# the answer is B: 0; [5] "2." is tag "2" with its dot removed: right
REPLIES = {0: "B", 1: "B. fast", 2: "I think A", 6: "N/A", 3: "Sentence A", 4: "fast car", 5: "2."}
JUDGE_PROMPT_2 = (
    "You will receive a multi-choice question, the ground-truth answer and the prediction from a question answering "
    "(QA) model. Your task is to determine whether QA model prediction is correct, based on the question and "
    "ground-truth answer. If the prediction is correct, respond \"Correct\". If the prediction is incorrect, respond "
    "\"Incorrect\".\nMulti-Choice Question:\n[2] What order?\nGround-Truth Answer: A. x then y\nModel Prediction: "
    "I think A"
)


@pytest.fixture
def tc(tmp_path: Path) -> TempCompassMCQ:
    snapshot = write_tempcompass(tmp_path / "TempCompass", ITEMS, frames=FRAMES)
    return TempCompassMCQ("TempCompass_MCQ", data_root=snapshot, root=tmp_path / "lmu")


def number(question: str) -> int:
    return int(question[1])


def test_rows_and_vlmevalkits_prompt(tc: TempCompassMCQ, tmp_path: Path):
    assert [number(q) for q in tc.data["question"]] == [0, 1, 2, 6, 3, 4, 5]  # multi-choice first
    assert tc.data["task_type"].tolist() == ["multi-choice"] * 4 + ["caption_matching"] * 3
    parts = tc.build_prompt(4)
    assert [p["type"] for p in parts] == ["video", "text", "text"]
    assert parts[1]["value"] == ("[3] Which caption matches the video?\nSentence A: a man runs left\nSentence B: a man "
                                 "runs right")
    assert parts[2]["value"] == "\nPlease directly give the best option:"
    video = Path(parts[0]["value"])
    assert video.resolve() == (tmp_path / "TempCompass" / "videos" / "vB.mp4").resolve()
    assert read_plan(video).rule == "vlmevalkit"


@pytest.mark.parametrize("setting, row, expected", [
    ({"nframe": 8}, 0, [5, 11, 16, 22, 27, 33, 38, 44]),  # step 50 / 9
    ({"nframe": 3}, 2, [34, 68, 102]),  # step 137 / 4 = 34.25
    ({"fps": 0.5}, 2, [0, 20, 40, 60, 80, 100]),  # int(13.7 s * 0.5) = 6 frames, step 20
])  # fmt: skip
def test_rows_send_vlmevalkits_frames(tc: TempCompassMCQ, setting: dict, row: int, expected: list[int]):
    video = tc.build_prompt(row)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, **setting).frames] == expected


def predictions(tc: TempCompassMCQ):
    table = tc.data.copy()
    table["prediction"] = [REPLIES[number(q)] for q in table["question"]]
    return table


def test_score_by_hand(tc: TempCompassMCQ):
    result = tc.evaluate(predictions(tc))
    assert result.scorer == "tempcompass_mcq"
    assert result.per_sample["score"].tolist() == [1, 0, 0, 0, 1, 0, 1]
    expected = {
        "Overall": 300 / 7, "direction. multi-choice": 100.0, "speed. multi-choice": 0.0, "order. multi-choice": 0.0,
        "attribute_change. multi-choice": 0.0, "direction. caption_matching": 100.0, "speed. caption_matching": 0.0,
        "order. caption_matching": 100.0, "dim: direction": 100.0, "dim: speed": 0.0, "dim: order": 50.0,
        "dim: attribute_change": 0.0,
    }  # fmt: skip
    assert result.metrics == pytest.approx(expected)
    assert result.vlmevalkit.metrics == {k: round(v, 1) for k, v in expected.items()}
    assert result.vlmevalkit.differing == []
    assert result.counts["unread"] == 2 and result.counts["vlmevalkit_nan_replies"] == 1


def test_the_judge_reads_what_no_rule_reads_with_vlmevalkits_prompt(tc: TempCompassMCQ):
    asked = []

    def judge(request):
        asked.append(request)
        return "Correct" if "[2]" in request.prompt else "The prediction is Incorrect."

    result = tc.evaluate(predictions(tc), judge=FunctionJudge(judge))
    assert sorted(r.prompt for r in asked)[0] == JUDGE_PROMPT_2 and len(asked) == 2
    assert {(r.system, r.temperature, r.max_tokens) for r in asked} == {
        ("You are an AI assistant for question answering.", 1.0, 128)}
    assert result.per_sample["score"].tolist() == [1, 0, 1, 0, 1, 0, 1]
    assert result.metrics["Overall"] == pytest.approx(400 / 7)
    # VLMEvalKit: the same verdict for [2]; [6] is NaN there (a miss either way)
    assert result.vlmevalkit.metrics["Overall"] == round(400 / 7, 1) and result.counts["by_judge"] == 2


def test_a_bad_item_is_one_line(tmp_path: Path):
    bad = {"caption_matching": [dict(ITEMS["caption_matching"][0], question="[3] Which?\nSentence A a man")]}
    snapshot = write_tempcompass(tmp_path / "a", bad, frames=FRAMES)
    with pytest.raises(DatasetError, match=r"caption_matching\.json: item 0, field question: a caption-matching"):
        TempCompassMCQ("TempCompass_MCQ", data_root=snapshot, root=tmp_path)
    snapshot = write_tempcompass(tmp_path / "b", ITEMS, frames=FRAMES)
    (snapshot / "multi-choice.json").unlink()
    with pytest.raises(DatasetError, match=r"multi-choice\.json: not found \(nor .*test-00000-of-00001\.parquet\)"):
        TempCompassMCQ("TempCompass_MCQ", data_root=snapshot, root=tmp_path)


# --- TempCompass_YorN ---------------------------------------------------------------------------------------------
YES_NO = {"yes_no": [
    {"video_id": "vA", "question": "[0] Is the car moving left?\nsecond line", "answer": "yes", "dim": "direction"},
    {"video_id": "vA", "question": "[1] Is it fast?", "answer": "yes", "dim": "speed"},
    {"video_id": "vB", "question": "[2] Is it red?", "answer": "no", "dim": "attribute_change"},
]}  # fmt: skip
# [0] starts "yes": right; [1] "not sure" starts "no" (VLMEvalKit's rule): a miss; [2] no rule reads it
YES_NO_REPLIES = ["Yes, it is.", "not sure", "It is blue."]
YES_NO_JUDGE_2 = (
    "\nYou will receive a Yes/No question, the ground-truth answer and the prediction from a question answering (QA) "
    "model. Your task is to determine whether QA model prediction is correct, based on the question and ground-truth "
    "answer. If the prediction is correct, respond \"Correct\". If the prediction is incorrect, respond "
    "\"Incorrect\".\n\nYes/No Question:\n[2] Is it red?\nGround-Truth Answer: no\nModel Prediction: It is blue."
)


def test_yes_no_prompt_frames_and_scores(tmp_path: Path):
    from datasets_tsv.benchmarks.tempcompass import TempCompassYorN

    snapshot = write_tempcompass(tmp_path / "TempCompass", YES_NO, frames=FRAMES)
    yn = TempCompassYorN("TempCompass_YorN", data_root=snapshot, root=tmp_path / "lmu")
    parts = yn.build_prompt(0)
    assert [p["value"] for p in parts[1:]] == ["[0] Is the car moving left?", "\nPlease answer yes or no:"]
    assert [frame_number(f) for f in sample_frames(yn.build_prompt(2)[0]["value"], nframe=2).frames] == [45, 91]
    table = yn.data.assign(prediction=YES_NO_REPLIES)
    result = yn.evaluate(table)
    assert result.scorer == "tempcompass_yorn" and result.per_sample["score"].tolist() == [1, 0, 0]
    assert result.metrics == pytest.approx({
        "Overall": 100 / 3, "direction. yes_no": 100.0, "speed. yes_no": 0.0, "attribute_change. yes_no": 0.0,
        "dim: direction": 100.0, "dim: speed": 0.0, "dim: attribute_change": 0.0,
    })  # fmt: skip
    assert result.vlmevalkit.metrics["Overall"] == 33.3
    asked = []

    def judge(request):
        asked.append(request)
        return "Correct"

    judged = yn.evaluate(table, judge=FunctionJudge(judge))
    assert [r.prompt for r in asked] == [YES_NO_JUDGE_2]
    assert judged.per_sample["score"].tolist() == [1, 0, 1] and judged.vlmevalkit.metrics["Overall"] == 66.7
