"""MLVU_OpenEnded and the combined MLVU from a miniature snapshot in MLVU/MVLU's layout: VLMEvalKit's prompts (model and
judge, byte for byte as vlmeval/dataset/mlvu.py and utils/mlvu.py write them at e8e78f05), its frames, its score
reading and the figures worked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.benchmarks.mlvu_open import MLVU, MLVUOpenEnded
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.video_snapshots import write_mlvu
from vlmkit.core.video import sample_frames
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks.mlvu_open import read_scores

# VLMEvalKit's judge system texts (vlmeval/dataset/utils/mlvu.py), as its source writes them
system_prompt_sub_scene = """
##TASK DESCRIPTION:
You are required to evaluate a respondent's answer based on a provided question, some scoring points, and the respondent's answer. You should provide two scores. The first is the accuracy score, which should range from 1 to 5. The second is the relevance score, which should also range from 1 to 5. Below are the criteria for each scoring category.
##ACCURACY Scoring Criteria:
Evaluate the respondent's answer against specific scoring points as follows:
Score 1: The response completely misses the scoring point.
Score 3: The response mentions content related to the scoring point but is not entirely correct.
Score 5: The response accurately addresses the scoring point.
Calculate the average score across all scoring points to determine the final accuracy score.
##RELEVANCE Scoring Criteria:
Assess how the respondent's answer relates to the original question:
Score 1: The response is completely off-topic from the question.
Score 2: The response is partially related to the question but contains a significant amount of irrelevant content.
Score 3: The response primarily addresses the question, but the respondent seems uncertain about their own answer.
Score 4: The response mostly addresses the question and the respondent appears confident in their answer.
Score 5: The response is fully focused on addressing the question with no irrelevant content and demonstrates complete certainty.
----
##INSTRUCTION:
1. Evaluate Accuracy: First, assess and score each scoring point based on the respondent's answer. Calculate the average of these scores to establish the final accuracy score. Provide a detailed rationale before assigning your score.
2. Evaluate RELEVANCE: Assess the relevance of the respondent’s answer to the question. Note that when evaluating relevance, the correctness of the answer is not considered; focus solely on how relevant the answer is to the question. Provide a comprehensive rationale before assigning your score.
3. Output Scores in JSON Format: Present the scores in JSON format as follows:
{'score_accuracy': score_acc, 'score_relevance': score_rele, 'total_score': score_acc + score_rele}
"""

system_prompt_summary = """
##TASK DESCRIPTION:
You are required to evaluate the performance of the respondent in the video summarization task based on the standard answer and the respondent's answer. You should provide two scores. The first is the COMPLETENESS score, which should range from 1 to 5. The second is the RELIABILITY score, which should also range from 1 to 5. Below are the criteria for each scoring category:
##COMPLETENESS Scoring Criteria:
The completeness score focuses on whether the summary covers all key points and main information from the video.
Score 1: The summary hardly covers any of the main content or key points of the video.
Score 2: The summary covers some of the main content and key points but misses many.
Score 3: The summary covers most of the main content and key points.
Score 4: The summary is very comprehensive, covering most to nearly all of the main content and key points.
Score 5: The summary completely covers all the main content and key points of the video.
##RELIABILITY Scoring Criteria:
The reliability score evaluates the correctness and clarity of the video summary. It checks for factual errors, misleading statements, and contradictions with the video content. If the respondent's answer includes details that are not present in the standard answer, as long as these details do not conflict with the correct answer and are reasonable, points should not be deducted.
Score 1: Contains multiple factual errors and contradictions; presentation is confusing.
Score 2: Includes several errors and some contradictions; needs clearer presentation.
Score 3: Generally accurate with minor errors; minimal contradictions; reasonably clear presentation.
Score 4: Very accurate with negligible inaccuracies; no contradictions; clear and fluent presentation.
Score 5: Completely accurate with no errors or contradictions; presentation is clear and easy to understand.
----
##INSTRUCTION:
1. Evaluate COMPLETENESS: First, analyze the respondent's answer according to the scoring criteria, then provide an integer score between 1 and 5 based on sufficient evidence.
2. Evaluate RELIABILITY: First, analyze the respondent's answer according to the scoring criteria, then provide an integer score between 1 and 5 based on sufficient evidence.
3. Output Scores in JSON Format: Present the scores in JSON format as follows:
{'score_completeness': score_comp, 'score_reliability': score_reli, 'total_score': score_comp + score_reli}
"""
SYS = ("Carefully watch this video and pay attention to every detail. "
       "Based on your observations, answer the given questions.")
OPEN_ITEMS = {
    "sub_scene": [
        {"video": "s1.mp4", "duration": 5.0, "question": "[0] What happens after the man enters?",
         "answer": "he sits", "scoring_points": ["the man enters", "he sits down"]},
        {"video": "s1.mp4", "duration": 5.0, "question": "[1] What is on the table?", "answer": "a lamp",
         "scoring_points": ["a lamp"]},
    ],
    "summary": [
        {"video": "m1.mp4", "duration": 13.7, "question": "[2] Summarize the video.", "answer": "A man cooks."},
        {"video": "m1.mp4", "duration": 13.7, "question": "[3] Please summarize.", "answer": "A dog runs."},
    ],
}  # fmt: skip
MCQ_ITEMS = {"plotQA": [{"video": "p1.mp4", "duration": 5.0, "question": "[4] Who leaves?",
                         "candidates": ["Ann", "Bob"], "answer": "Ann"}]}
REPLIES: dict[int, Any] = {0: "He sits down.", 1: None, 2: "A man is cooking.", 3: "Dogs.", 4: "(A) Ann"}
JUDGED = {
    0: "Accuracy 3, relevance 4.\n{'score_accuracy': 3, 'score_relevance': 4, 'total_score': 7}",
    2: "{'score_completeness': 2.5, 'score_reliability': 4, 'total_score': 6.5}",
    3: "I cannot score this.",
}


def write_mlvu_open(root: Path) -> Path:
    write_mlvu(root, MCQ_ITEMS, frames={"p1.mp4": 50})
    for number, task in ((8, "sub_scene"), (9, "summary")):
        (root / "MLVU" / "json" / f"{number}_{task}.json").write_text(json.dumps(OPEN_ITEMS[task]))
        for item in OPEN_ITEMS[task]:
            target = root / "MLVU" / "video" / f"{number}_{task}" / item["video"]
            if not target.exists():
                write_indexed_video(target, frames=137 if task == "summary" else 50, fps=10.0)
    return root


def row_of(text: str) -> int:
    return int(text.split("[", 1)[1].split("]", 1)[0])


def judge_by_row(data):
    questions = {str(q): row_of(str(q)) for q in data["question"]}
    answers = {str(a): q for a, q in zip(data["answer"], data["question"])}

    def reply(request) -> str:
        for question, row in questions.items():
            if question in request.prompt:
                return JUDGED[row]
        for answer, question in answers.items():  # summary prompts hold the answer, not the question
            if f"Standard Answer: {answer}\n" in request.prompt:
                return JUDGED[row_of(str(question))]
        raise AssertionError(request.prompt)

    return reply


@pytest.fixture
def bench(tmp_path: Path) -> MLVUOpenEnded:
    return MLVUOpenEnded("MLVU_OpenEnded", data_root=write_mlvu_open(tmp_path / "MLVU"), root=tmp_path / "lmu")


def test_rows_prompt_and_frames(bench: MLVUOpenEnded):
    assert bench.data["task_type"].tolist() == ["sub_scene", "sub_scene", "summary", "summary"]
    assert bench.data["scoring_points"].tolist()[:2] == ["['the man enters', 'he sits down']", "['a lamp']"]
    system, user = bench.build_prompt(2)
    assert system == {"role": "system", "content": [{"type": "text", "value": SYS}]}
    assert [p["type"] for p in user["content"]] == ["video", "text"]
    assert user["content"][1]["value"] == "[2] Summarize the video."
    frames = sample_frames(user["content"][0]["value"], nframe=4).frames
    assert [frame_number(f) for f in frames] == [int(i * 137 / 5) for i in range(1, 5)]


def test_judge_texts_and_scores_by_hand(bench: MLVUOpenEnded):
    judge = FunctionJudge(judge_by_row(bench.data))
    result = bench.evaluate(bench.data.assign(prediction=[REPLIES[row_of(q)] for q in bench.data["question"]]),
                            judge=judge)
    assert len(judge.asked) == 3  # row 1 has no prediction
    sub = next(r for r in judge.asked if "[0]" in r.prompt)
    assert sub.prompt == ("Please score the respondent's answer according to the steps in the Instructions. "
                          "You must end with a JSON dict to store the scores.\n"
                          "Question: [0] What happens after the man enters?\n"
                          "Scoring Points: ['the man enters', 'he sits down']\n"
                          "Respondent's Answer: He sits down.\n")
    assert sub.system == system_prompt_sub_scene and sub.temperature == 0.0
    summary = next(r for r in judge.asked if "A man cooks." in r.prompt)
    assert summary.prompt == ("Please score the respondent's answer according to the steps in the Instructions. "
                              "You must end with a JSON dict to store the scores.\n"
                              "Standard Answer: A man cooks.\nRespondent's Answer: A man is cooking.\n")
    assert summary.system == system_prompt_summary
    # sub_scene: 3 + 4 = 7 and 0 (no prediction); summary: int(2.5 + 4) = 6 and 0 (no score key)
    assert result.per_sample["score"].tolist() == [7.0, 0.0, 6.5, 0.0]
    assert result.metrics == pytest.approx({"G-Avg": 13 / 4, "sub_scene": 3.5, "summary": 3.0})
    assert result.vlmevalkit.metrics["G-Avg"] == 3.25
    assert result.counts["unread"] == 1 and result.counts["inference_errors"] == 1


def test_score_reading_is_vlmevalkits():
    assert read_scores("sub_scene", '{"score_accuracy": 2, "score_relevance": 5, "total_score": 7}') == [2.0, 5.0]
    # no ',' after the last key found: the slice runs to the text's last character, excluded
    assert read_scores("summary", "'score_reliability': 4}") == [4.0]
    assert read_scores("summary", "score_completeness: high, score_reliability: 3,") is None
    assert read_scores("summary", "no keys") == []


def test_mlvu_combines_both_parts(tmp_path: Path):
    bench = MLVU("MLVU", data_root=write_mlvu_open(tmp_path / "MLVU"), root=tmp_path / "lmu")
    assert bench.data["sub_dataset"].tolist() == ["MLVU_MCQ"] + ["MLVU_OpenEnded"] * 4
    assert bench.data["index"].tolist() == [0, 1, 2, 3, 4]
    assert bench.build_prompt(0)[1]["content"][1]["value"] == "Question: [4] Who leaves?\nOptions:\n(A) Ann\n(B) Bob"
    judge = FunctionJudge(judge_by_row(bench.data[bench.data["sub_dataset"] == "MLVU_OpenEnded"]))
    table = bench.data.assign(prediction=[REPLIES[row_of(q)] for q in bench.data["question"]])
    result = bench.evaluate(table, judge=judge)
    assert result.primary == "M-Avg"
    assert result.metrics == pytest.approx({"M-Avg": 100.0, "G-Avg": 3.25, "plotQA": 100.0, "sub_scene": 3.5,
                                            "summary": 3.0})
    assert result.vlmevalkit.metrics["M-Avg"] == 100.0 and result.vlmevalkit.metrics["G-Avg"] == 3.25
    with pytest.raises(DatasetError, match="MLVU is scored by an LLM judge"):
        bench.evaluate(table)
