"""ChartMuseum graded as VLMEvalKit grades it (vlmeval/dataset/chartmuseum.py at e8e78f05): the `<answer>` read,
the judge prompt, `yes` in the judge's reply, per-category and Overall percentages worked by hand; the prompt by
catalog name equal to VLMEvalKit's text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.core.errors import DataError
from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.benchmarks.chartmuseum import extract_answer, judge_prompt, score_chartmuseum


@pytest.mark.parametrize(("reply", "answer"), [
    ("<think>hm</think>\n<answer>\n 42 \n</answer>", "42"), ("<answer>7 and more", "7 and more"),
    ("<answer>a</answer><answer>b</answer>", "a"), ("just 42", ""),
])  # fmt: skip
def test_the_answer_tag_is_read(reply, answer):
    assert extract_answer(reply) == answer


def test_the_judge_prompt_fills_question_then_answers():
    prompt = judge_prompt("Which year?", "2020", "2021")
    assert prompt.startswith("You are provided with a question and two answers. Please determine if these answers "
                             "are equivalent. Follow these guidelines:\n\n1. Numerical Comparison:")  # fmt: skip
    assert "\n\nQuestion: Which year?\nAnswer 1: 2020\nAnswer 2: 2021\n\nPlease respond with:\n" in prompt
    assert prompt.endswith('- "No" if the answers are different')


def test_grading():
    df = pd.DataFrame([
        {"index": 1, "question": "Q1", "answer": "10", "category": "visual", "prediction": "<answer>10</answer>"},
        {"index": 2, "question": "Q2", "answer": "red", "category": "visual", "prediction": "<answer>blue</answer>"},
        {"index": 3, "question": "Q3", "answer": "5", "category": "text", "prediction": "no tags"},
        {"index": 4, "question": "Q4", "answer": "8", "category": "text", "prediction": None},
    ])  # fmt: skip
    verdicts = {"10": "Yes.", "blue": "No", "": "YES, both empty?"}
    judge = FunctionJudge(lambda r: verdicts[r.prompt.split("Answer 2: ")[1].split("\n")[0]])
    result = score_chartmuseum(df, judge)
    assert result.metrics == pytest.approx({"visual": 50.0, "text": 50.0, "Overall": 50.0})
    assert len(judge.asked) == 3 and all(isinstance(r, JudgeRequest) and r.temperature == 0 for r in judge.asked)
    assert result.counts["inference_errors"] == 1 and result.counts["by_judge"] == 3
    assert result.per_sample["extracted"].tolist() == ["10", "blue", "", ""]


def test_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "ChartMuseum_dev.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "How many?",
                                                  "answer": "3", "category": "visual"}])  # fmt: skip
    ds = build_dataset("ChartMuseum_dev", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    image, text = ds.build_prompt(0)
    assert image["type"] == "image"
    assert text["value"] == (
        "Please answer the question using the chart image.\n\n    Question: How many?\n\n    Please first generate "
        "your reasoning process and then provide the user with the answer. Use the following format:\n\n    <think>\n"
        "    ... your thinking process here ...\n    </think>\n    <answer>\n    ... your final answer (entity(s) or "
        "number) ...\n    </answer>")  # fmt: skip
    with pytest.raises(DataError, match="--judge MODEL"):
        ds.evaluate(ds.data.assign(prediction=["<answer>3</answer>"]))
    result = ds.evaluate(ds.data.assign(prediction=["<answer>3</answer>"]), judge=FunctionJudge(lambda r: "Yes"))
    assert result.metrics["Overall"] == 100.0
