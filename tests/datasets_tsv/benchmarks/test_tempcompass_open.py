"""TempCompass_Captioning and the combined TempCompass from a miniature lmms-lab/TempCompass snapshot: the model's
prompt, VLMEvalKit's frames, its captioning judge prompt byte for byte (as vlmeval/dataset/utils/tempcompass.py at
e8e78f05 writes it), its answer reading and the figures worked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.benchmarks.tempcompass_open import TempCompass, TempCompassCaptioning
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.video_snapshots import write_tempcompass
from vlmkit.core.video import sample_frames
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks.tempcompass_open import parse_rating

# VLMEvalKit's system_prompt_captioning as its source writes it (a backslash at a line's end joins the next line)
SYSTEM_PROMPT_CAPTIONING = """
You will receive a video description and a multi-choice question. Your task is to choose the correct answer and briefly explain the reason why you choose the answer. \
If none of the choice candidates are correct or the video description lacks enough information to answer the question, just answer "None of the choices are correct". \
Please organize your response in this format:
```
Reasoning: [Your reason to obtain the answer]
Answer: [Your answer]
```

Here are some examples of video description, multi-choice question and the expected answer:
```
Video Description: A person is palying football.
Multi-Choice Question:
What is the person doing in the video?
A. cooking
B. palying football
C. playing basketball
D. reading book
Reasoning: The video description mentions that the person is playing football.
Answer: B. palying football

Video Description: A bird is flying clockwise.
Multi-Choice Question:
In which direction is the bird flying?
A. backwark
B. counter-clockwise
C. clockwise
D. downward
Reasoning: The video description mentions that the bird is flying clockwise
Answer: C. clockwise

Video Description: An air balloon is inflating.
Multi-Choice Question:
What is happening to the air balloon?
A. exploding
B. getting smaller
C. flying
Reasoning: The video description mentions that the air balloon is inflating, while none of the coices can be explained as inflating.
Answer: None of the choices are correct
```
"""  # noqa: E501
ITEMS = {
    "multi-choice": [{"video_id": "vA", "question": "[0] Which direction?\nA. left\nB. right", "answer": "B. right",
                      "dim": "direction"}],
    "caption_matching": [{"video_id": "vA", "question": "[1] Which caption?\nSentence A: a car goes left\n"
                          "Sentence B: a car goes right", "answer": "Sentence B: a car goes right",
                          "dim": "direction"}],
    "yes_no": [{"video_id": "vA", "question": "[5] Is the car moving left?", "answer": "no", "dim": "direction"}],
}  # fmt: skip
CAPTIONING = [
    {"video_id": "vB", "question": "[2] Describe the video.", "answer": "a fast car", "dim": "speed",
     "mc_question": "How fast is the car?\nA. slow\nB. fast", "mc_answer": "B. fast"},
    {"video_id": "vB", "question": "[3] Describe the motion.", "answer": "it goes left", "dim": "direction",
     "mc_question": "Which way does it go?\nA. left\nB. right", "mc_answer": "A. left"},
    {"video_id": "vB", "question": "[4] Describe the order.", "answer": "first red", "dim": "order",
     "mc_question": "What comes first?\nA. red\nB. blue", "mc_answer": "A. red"},
]  # fmt: skip
REPLIES: dict[int, Any] = {0: "B", 1: "Sentence A", 2: "A fast red car.", 3: "It moves.", 4: None,
                           5: "No, it is not."}
JUDGED = {"How fast": "Reasoning: it is quick.\nAnswer: B. fast", "Which way": ""}


def write_snapshot(root: Path) -> Path:
    write_tempcompass(root, ITEMS, frames={"vA": 50, "vB": 137})
    (root / "captioning.json").write_text(json.dumps(CAPTIONING))
    write_indexed_video(root / "videos" / "vB.mp4", frames=137, fps=10.0)
    return root


def judge_reply(request) -> str:
    return next(reply for key, reply in JUDGED.items() if f"Multi-Choice Question:\n{key}" in request.prompt)


def row(question: str) -> int:
    return int(question.split("[", 1)[1].split("]", 1)[0])


@pytest.fixture
def captioning(tmp_path: Path) -> TempCompassCaptioning:
    return TempCompassCaptioning("TempCompass_Captioning", data_root=write_snapshot(tmp_path / "tc"),
                                 root=tmp_path / "lmu")


def test_prompt_and_frames(captioning: TempCompassCaptioning):
    prompt = captioning.build_prompt(0)
    assert [p["type"] for p in prompt] == ["video", "text"] and prompt[1]["value"] == "[2] Describe the video."
    frames = sample_frames(prompt[0]["value"], nframe=3).frames
    assert [frame_number(f) for f in frames] == [int(i * 137 / 4) for i in range(1, 4)]


def test_captioning_by_hand(captioning: TempCompassCaptioning):
    judge = FunctionJudge(judge_reply)
    table = captioning.data.assign(prediction=[REPLIES[row(q)] for q in captioning.data["question"]])
    result = captioning.evaluate(table, judge=judge)
    assert len(judge.asked) == 2  # [4] has no prediction
    asked = judge.asked[0]
    assert asked.prompt == (f"{SYSTEM_PROMPT_CAPTIONING}\nVideo Description:A fast red car.\n"
                            "Multi-Choice Question:\nHow fast is the car?\nA. slow\nB. fast\n")
    assert asked.system == "You are an AI assistant for question answering."
    assert (asked.temperature, asked.max_tokens) == (1.0, 128)
    # ratings 1, -1 (empty reply: 0 here), not asked (0)
    assert result.metrics == pytest.approx({"Overall": 100 / 3, "speed. captioning": 100.0,
                                            "direction. captioning": 0.0, "order. captioning": 0.0,
                                            "dim: speed": 100.0, "dim: direction": 0.0, "dim: order": 0.0})
    assert result.vlmevalkit.metrics["Overall"] == 0.0  # (1 - 1 + 0) / 3
    assert result.vlmevalkit.metrics["direction. captioning"] == -100.0
    with pytest.raises(DatasetError, match="TempCompass_Captioning is scored by an LLM judge"):
        captioning.evaluate(table)


def test_answer_reading_is_vlmevalkits():
    assert parse_rating("Reasoning: x\nAnswer: B. fast", "B. fast") == 1
    assert parse_rating("B. fast", "B. fast") == 1  # no Answer line: the whole reply
    assert parse_rating("Answer: A. slow or B. fast", "B. fast") == 0  # two options named
    assert parse_rating("Answer: None of the choices are correct", "B. fast") == 0
    assert parse_rating("", "B. fast") == -1


def test_tempcompass_combines_its_three_parts(tmp_path: Path):
    bench = TempCompass("TempCompass", data_root=write_snapshot(tmp_path / "tc"), root=tmp_path / "lmu")
    assert bench.data["sub_dataset"].tolist() == ["TempCompass_MCQ"] * 2 + ["TempCompass_Captioning"] * 3 + \
        ["TempCompass_YorN"]
    assert bench.build_prompt(5)[-1]["value"] == "\nPlease answer yes or no:"
    table = bench.data.assign(prediction=[REPLIES[row(q)] for q in bench.data["question"]])
    result = bench.evaluate(table, judge=FunctionJudge(judge_reply))
    # scores: mc 1, cm 0, captioning 1, 0, 0, yes/no 1
    m = result.metrics
    assert m["Overall"] == pytest.approx(50.0) and m["dim: direction"] == pytest.approx(50.0)
    assert m["task: captioning"] == pytest.approx(100 / 3) and m["direction. yes_no"] == 100.0
    # VLMEvalKit: the empty judge reply counts -1: (1 + 0 + 1 - 1 + 0 + 1) / 6
    assert result.vlmevalkit.metrics["Overall"] == 33.33 and result.vlmevalkit.metrics["dim: direction"] == 25.0
