"""VDC, Video_MMLU_CAP and Video_MMLU_QA from miniature snapshots in their layouts (the TSV VLMEvalKit reads and the
video folders): the caption prompts (VLMEvalKit's lists, chosen by a seeded choice), the frames, the two judge stages
with VLMEvalKit's texts, and the per-question figures worked by hand."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.benchmarks.vdc import VDC
from datasets_tsv.benchmarks.video_mmlu import VideoMMLUCap, VideoMMLUQA
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.tsvs import write_tsv
from vlmkit.core.video import sample_frames
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks import vdc as vdc_scorer

# VLMEvalKit's short caption prompts (vlmeval/dataset/vdc.py at e8e78f05)
SHORT_CAPTION_PROMPTS = [
    "Write a one-sentence summary of the video.",
    "Summarize the video in one concise sentence.",
    "Provide a brief description of the video in one sentence.",
    "Describe the main action in the video in one sentence.",
    "What is the video about? Summarize it in one sentence.",
    "In one sentence, summarize the key visual elements of the video.",
    "Provide a one-sentence summary that captures the main subject and action in the video.",
    "Write a concise one-sentence description that encapsulates the essence of the video.",
    "Describe the main theme or action of the video in a single sentence.",
    "What is happening in the video? Provide a one-sentence summary.",
    "Given these frames, write a brief one-sentence summary that captures the essence of the video's visual and artistic style.",
    "Summarize the key visual and thematic elements of the video in one concise sentence.",
    "Provide a one-sentence description that highlights the main subject and action depicted in the video.",
    "In one sentence, describe the primary visual and artistic elements of the video.",
    "Write a concise one-sentence summary that encapsulates the main action and visual style of the video.",
    "Briefly one-sentence Summary of the visual, Photographic and artistic style.",
]  # noqa: E501

# VLMEvalKit's USER_GENER_PRED_PROMPT (utils/vdc.py)
USER_GENER_PRED_PROMPT = """Please provide accurate answers to questions related to the content based on a detailed description of a video or image:

detailed description: {pred_cap}
question: {q}

DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. Only provide short but accurate answer."""  # noqa: E501
# VLMEvalKit's judge system texts (utils/vdc.py and utils/video_mmlu.py), as its source writes them
SYSTEM_GENER_PRED_PROMPT = """You are an intelligent chatbot designed for providing accurate answers to questions related to the content based on a detailed description of a video or image.
Here's how you can accomplish the task:
------
##INSTRUCTIONS:
- Read the detailed description carefully.
- Answer the question only based on the detailed description.
- The answer should be a short sentence or phrase.
"""  # noqa: E501

SYSTEM_CAL_SCORE_PROMPT = """You are an intelligent chatbot designed for evaluating the correctness of generative outputs for question-answer pairs.
Your task is to compare the predicted answer with the correct answer and determine if they match meaningfully. Here's how you can accomplish the task:
------
##INSTRUCTIONS:
- Focus on the meaningful match between the predicted answer and the correct answer.
- Consider synonyms or paraphrases as valid matches.
- Evaluate the correctness of the prediction compared to the answer.
"""  # noqa: E501

SYSTEM_CAL_SCORE_PROMPT_CAP = """
    You are an intelligent chatbot designed for evaluating the correctness of generative outputs for question-answer pairs.
    Your task is to compare the predicted answer with the correct answer and determine if they match meaningfully. The evaluation criteria differ based on the type of question:
    ------
    ## INSTRUCTIONS:
    1. For **OCR-related questions**:
       - Perform a strict letter-by-letter comparison.
       - Any difference in characters (including case, punctuation, or letter substitution) must result in 'no'.
       - Minor spelling errors or missing characters should not be accepted.
    2. For **non-OCR-related questions**:
       - Focus on the meaningful match between the predicted answer and the correct answer.
       - Synonyms or paraphrases can be considered valid matches.
       - Minor spelling differences or alternative expressions should not be penalized.
"""

SYSTEM_CAL_SCORE_PROMPT_QA = """
    You are an intelligent chatbot designed for evaluating the correctness of generative outputs for reasoning-based question-answer pairs.
    Your task is to compare the predicted answer with the correct answer based on the following rules:
    ------
    ## INSTRUCTIONS:
    1. **Evaluate Reasoning Tasks Strictly:**
       - The predicted answer must capture all critical concepts and details mentioned in the correct answer.
       - If the correct answer mentions specific concepts or examples (e.g., 'odd numbers accumulate to form perfect squares'), the predicted answer must include these concepts or examples.
       - Even if the phrasing differs, the key meaning and concepts must be preserved. However, omitting or altering key concepts or examples is **not acceptable**.
       - **Example 1:** If the correct answer is 'The construction method shows how odd numbers accumulate to form perfect squares,' the predicted answer must include 'odd numbers' and 'perfect squares'.
       - **Example 2:** If the correct answer is 'To eliminate HBr and form an alkene,' the predicted answer must address the elimination of HBr as well.
       - Minor differences in phrasing are acceptable as long as the key information is retained.
       - **Critical Detail:** If any essential element (e.g., key terms, concepts, or examples) is missing from the predicted answer, the answer is considered incorrect.
       - Do **not** introduce new, unrelated information in the predicted answer.
"""
ROWS = [
    {"index": 0, "video": "a.mp4", "caption_type": "short",
     "question": str([{"question": "[q0] What animal?", "answer": "a dog"},
                      {"question": "[q1] What colour?", "answer": "brown"}])},
    {"index": 1, "video": "a.mp4", "caption_type": "camera",
     "question": str([{"question": "[q2] Does the camera pan?", "answer": "yes"}])},
    {"index": 2, "video": "b.mp4", "caption_type": "background",
     "question": str([{"question": "[q3] Where?", "answer": "a park"}])},
]  # fmt: skip
CAPTIONS: dict[int, Any] = {0: "A brown dog runs.", 1: None, 2: "In a park."}
ANSWERS = {"q0": "a dog", "q1": "brown", "q3": "a park"}
VERDICTS = {"q0": "{'pred': 'yes', 'score': 5}", "q1": "{'pred': 'no', 'score': 2}", "q3": "not a dict"}


def question_key(text: str) -> str:
    return text.split("[", 1)[1].split("]", 1)[0]


def two_stage(request) -> str:
    key = question_key(request.prompt)
    return ANSWERS[key] if request.system == vdc_scorer.SYSTEM_ANSWER else VERDICTS[key]


def write_vdc(root: Path, rows: list[dict[str, Any]] = ROWS, name: str = "VDC", folder: str = "videos") -> Path:
    write_tsv(root / f"{name}.tsv", rows)
    for video, frames in (("a.mp4", 50), ("b.mp4", 137)):
        write_indexed_video(root / folder / video, frames=frames, fps=10.0)
    return root


@pytest.fixture
def vdc(tmp_path: Path) -> VDC:
    return VDC("VDC", data_root=write_vdc(tmp_path / "vdc"), root=tmp_path / "lmu")


def test_vdc_prompt_is_a_seeded_choice_of_vlmevalkits_list(vdc: VDC, tmp_path: Path):
    prompt = vdc.build_prompt(0)
    assert [p["type"] for p in prompt] == ["video", "text"]
    assert prompt[1]["value"] == random.Random("VDC:0").choice(SHORT_CAPTION_PROMPTS)
    again = VDC("VDC", data_root=tmp_path / "vdc", root=tmp_path / "lmu2")
    assert again.build_prompt(0)[1]["value"] == prompt[1]["value"]
    frames = sample_frames(vdc.build_prompt(2)[0]["value"], nframe=4).frames
    assert [frame_number(f) for f in frames] == [int(i * 137 / 5) for i in range(1, 5)]


def test_vdc_two_judge_stages_by_hand(vdc: VDC):
    judge = FunctionJudge(two_stage)
    result = vdc.evaluate(vdc.data.assign(prediction=[CAPTIONS[i] for i in vdc.data["index"]]), judge=judge)
    answer_asks = [r for r in judge.asked if r.system == vdc_scorer.SYSTEM_ANSWER]
    assert len(answer_asks) == 3 and len(judge.asked) == 6  # q2 has no caption
    assert answer_asks[0].prompt == USER_GENER_PRED_PROMPT.format(pred_cap="A brown dog runs.", q="[q0] What animal?")
    assert answer_asks[0].system == SYSTEM_GENER_PRED_PROMPT
    assert {r.system for r in judge.asked} == {SYSTEM_GENER_PRED_PROMPT, SYSTEM_CAL_SCORE_PROMPT}
    score_ask = next(r for r in judge.asked if r.system == vdc_scorer.SYSTEM_SCORE and "[q1]" in r.prompt)
    assert "Correct Answer: brown\n\n" in score_ask.prompt and "Predicted Answer: brown\n\n\n" in score_ask.prompt
    # q0 yes 5, q1 no 2, q2 no caption, q3 unread
    m = result.metrics
    assert m["Overall"] == 0.25 and m["short"] == 0.5 and m["camera"] == 0.0 and m["background"] == 0.0
    assert m["score/Overall"] == 3.5 and m["score/short"] == 3.5
    assert result.counts["questions"] == 4 and result.counts["unread"] == 1 and result.counts["inference_errors"] == 1
    assert result.vlmevalkit is None and any("thread pool" in n for n in result.notes)


def test_vdc_subset_and_missing_judge(vdc: VDC, tmp_path: Path):
    assert VDC("VDC", data_root=tmp_path / "vdc", root=tmp_path, subset="background").data["index"].tolist() == [2]
    with pytest.raises(DatasetError, match="VDC is scored by an LLM judge"):
        vdc.evaluate(vdc.data.assign(prediction="x"))
    bad = write_vdc(tmp_path / "bad", [dict(ROWS[0], question="[{'question': 'q'}]")])
    ds = VDC("VDC", data_root=bad, root=tmp_path)
    with pytest.raises(DatasetError, match=r"row index 0, field `question`: an entry is not a"):
        ds.evaluate(ds.data.assign(prediction="x"), judge=FunctionJudge(lambda r: "x"))


def test_video_mmlu_cap_uses_its_scoring_text(tmp_path: Path):
    rows = [dict(ROWS[0], discipline="Math"), dict(ROWS[2], discipline="physics")]
    for row in rows:
        row.pop("caption_type")
    snap = write_vdc(tmp_path / "mmlu", rows, name="Video_MMLU_CAP", folder="youtube_videos")
    bench = VideoMMLUCap("Video_MMLU_CAP", data_root=snap, root=tmp_path / "lmu")
    assert bench.build_prompt(0)[1]["value"] in vdc_scorer.CAPTION_PROMPTS["detailed"]
    judge = FunctionJudge(two_stage)
    result = bench.evaluate(bench.data.assign(prediction=["A brown dog runs.", "In a park."]), judge=judge)
    assert {r.system for r in judge.asked} == {SYSTEM_GENER_PRED_PROMPT, SYSTEM_CAL_SCORE_PROMPT_CAP}
    assert result.metrics["math"] == 0.5 and result.metrics["physics"] == 0.0 and result.metrics["Overall"] == 1 / 3


def test_video_mmlu_qa_by_hand(tmp_path: Path):
    rows = [{"index": 0, "video": "a.mp4", "discipline": "Math", "question": "[0] What is 2+2?", "answer": "4"},
            {"index": 1, "video": "b.mp4", "discipline": "physics", "question": "[1] What falls?", "answer": "apple"}]
    snap = write_vdc(tmp_path / "qa", rows, name="Video_MMLU_QA", folder="youtube_videos")
    bench = VideoMMLUQA("Video_MMLU_QA", data_root=snap, root=tmp_path / "lmu")
    assert bench.build_prompt(0)[1]["value"] == "[0] What is 2+2?\nAnswer briefly and directly in one sentence."
    judge = FunctionJudge(lambda r: "{'pred': 'yes', 'score': 5}" if "[0]" in r.prompt
                          else '{"pred": "no", "score": 1}')
    result = bench.evaluate(bench.data.assign(prediction=["4", "a stone"]), judge=judge)
    assert judge.asked[0].system == SYSTEM_CAL_SCORE_PROMPT_QA
    assert "Predicted Answer: 4\n\n\n" in judge.asked[0].prompt
    assert result.metrics == {"Overall": 0.5, "score/Overall": 3.0, "math": 1.0, "score/math": 5.0, "physics": 0.0,
                              "score/physics": 1.0}
