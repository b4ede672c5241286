"""QBench_Video_VQA and the combined QBench_Video from a miniature zhangzicheng/Q-Bench-Video snapshot (the two TSVs
and video/): VLMEvalKit's frames prompt and judge texts byte for byte (as vlmeval/dataset/qbench_video.py and
utils/qbench_video.py write them at e8e78f05), its frames, and the figures worked by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.benchmarks.qbench_video_vqa import QBenchVideo, QBenchVideoVQA
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.tsvs import write_tsv
from vlmkit.core.video import sample_frames
from vlmkit.judging import FunctionJudge

FRAMES_TMPL_SYS = """
You will receive {} distinct frames that have been uniformly sampled from a video sequence, arranged in the same temporal order as they appear in the video.
Please analyze these frames and provide a detailed and accurate answer from the perspective of visual quality based on your observations.
"""  # noqa: E501
VQA_JUDGE_SYS_PROMPT = """
You are a helpful assistant that grades answers related to visual video quality.
There are a lot of special terms or keywords related to video processing and photography.
You will pay attention to the context of `quality evaluation' when grading.
"""
VQA_JUDGE_USER_PROMPT = """
Given the question {}, evaluate whether the response {} completely matches the correct answer {}.
First, check the response and please rate score 0 if the response is not a valid answer.
Please rate score 2 if the response completely or almost completely matches the correct answer on completeness, accuracy, and relevance.
Please rate score 1 if the response partly matches the correct answer on completeness, accuracy, and relevance.
Please rate score 0 if the response doesn't match the correct answer on completeness, accuracy, and relevance at all.
Please only provide the result in the following format: Score:'
"""  # noqa: E501
VQA = [
    {"index": i, "video": "qa", "video_path": "./video/qa.mp4", "question": f"[{i}] {q}", "answer": a,
     "dimensions": "['open_ended,quality']"}
    for i, (q, a) in enumerate([("How sharp is it?", "very sharp"), ("Is there noise?", "some noise"),
                                ("How is the light?", "dim"), ("Any blur?", "no blur")])
]
MCQ = [
    {"index": 0, "video": "qa", "video_path": "./video/qa.mp4", "question": "[4] Is it clear?\nA. Yes\nB. No",
     "answer": "A. Yes", "dimensions": "['yes_or_no,clarity']"},
    {"index": 1, "video": "qa", "video_path": "./video/qa.mp4", "question": "[5] Is it dark?\nA. Yes\nB. No",
     "answer": "A. Yes", "dimensions": "['yes_or_no,light']"},
]
REPLIES: dict[int, Any] = {0: "Sharp.", 1: "A little noise.", 2: "Bright.", 3: None, 4: "A", 5: "B"}
SCORES = {0: "Score: 2", 1: "Score:1", 2: "3"}


def write_qbench(root: Path) -> Path:
    write_tsv(root / "qbenchvideo_single_VQA.tsv", VQA)
    write_tsv(root / "qbenchvideo_single_MCQ.tsv", MCQ)
    write_indexed_video(root / "video" / "qa.mp4", frames=60, fps=10.0)
    return root


def row(text: str) -> int:
    return int(text.split("[", 1)[1].split("]", 1)[0])


def judge_reply(request) -> str:
    return SCORES[row(request.prompt)]


def test_prompt_frames_and_scores_by_hand(tmp_path: Path):
    bench = QBenchVideoVQA("QBench_Video_VQA", data_root=write_qbench(tmp_path / "q"), root=tmp_path / "lmu")
    prompt = bench.build_prompt(0)
    assert [p["type"] for p in prompt] == ["text", "text", "video"]
    assert prompt[0]["value"] == FRAMES_TMPL_SYS.format(8) and prompt[1]["value"] == "[0] How sharp is it?"
    frames = sample_frames(prompt[2]["value"], nframe=8).frames
    assert [frame_number(f) for f in frames] == [int(i * 60 / 9) for i in range(1, 9)]
    judge = FunctionJudge(judge_reply)
    result = bench.evaluate(bench.data.assign(prediction=[REPLIES[row(q)] for q in bench.data["question"]]),
                            judge=judge)
    assert len(judge.asked) == 3
    assert judge.asked[0].system == VQA_JUDGE_SYS_PROMPT
    assert judge.asked[0].prompt == VQA_JUDGE_USER_PROMPT.format("[0] How sharp is it?", "Sharp.", "very sharp")
    assert result.per_sample["score"].tolist() == [2.0, 1.0, 0.0, 0.0]  # a 3 is no score here
    assert result.metrics == {"Overall": 0.75, "open_ended": 0.75}
    assert result.vlmevalkit.metrics == {"Overall": 1.5, "open_ended": 1.5}  # VLMEvalKit keeps the 3
    assert result.scale_of("Overall").out_of == 2.0
    with pytest.raises(DatasetError, match="QBench_Video_VQA is scored by an LLM judge"):
        bench.evaluate(bench.data.assign(prediction="x"))


def test_qbench_video_combines_both_parts(tmp_path: Path):
    bench = QBenchVideo("QBench_Video", data_root=write_qbench(tmp_path / "q"), root=tmp_path / "lmu")
    assert bench.data["sub_dataset"].tolist() == ["QBench_Video_MCQ"] * 2 + ["QBench_Video_VQA"] * 4
    table = bench.data.assign(prediction=[REPLIES[row(q)] for q in bench.data["question"]])
    result = bench.evaluate(table, judge=FunctionJudge(judge_reply))
    # MCQ 1, 0; VQA 2, 1, 0, 0 out of 2: Overall (1 + 0 + 1 + 0.5 + 0 + 0) / 6
    assert result.metrics == pytest.approx({"Overall": 250 / 6, "yes_or_no": 50.0, "open_ended": 37.5})
    # VLMEvalKit: the 3 counts; open_ended 6 / 4 x 100 / 2
    assert result.vlmevalkit.metrics == {"Overall": 66.7, "yes_or_no": 50.0, "open_ended": 75.0}
