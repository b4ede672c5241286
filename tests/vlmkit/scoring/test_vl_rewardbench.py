"""VL-RewardBench graded as VLMEvalKit grades it (vl_rewardbench.py at e8e78f05): the responses shown reversed when
their total length is odd, the right answer from the ranking, the judge's `Answer 1`/`Answer 2`, per-category, macro
and overall fractions worked by hand; the prompt by catalog name equal to VLMEvalKit's text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.core.errors import DataError
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks.vl_rewardbench import right_answer, score_vl_rewardbench, shown_reversed


def test_the_right_answer_follows_the_order_shown():
    assert shown_reversed(["good", "bad"]) and not shown_reversed(["good", "okay"])  # 7 odd, 8 even
    assert right_answer("[0, 1]", True) == 2  # reversed: the better (first listed) is shown second
    assert right_answer("[1, 0]", False) == 2 and right_answer("[1, 0]", True) == 1


def test_grading():
    rows = [
        ("reasoning", "['good', 'bad']", "[0, 1]", "Overall Judgment: Answer 2 is better."),  # right: 2
        ("reasoning", "['good', 'okay']", "[1, 0]", "Answer 1 is better"),  # right: 2, judged 1
        ("hallucination", "['aa', 'b']", "[1, 0]", "first"),  # right: 1, the judge names none
        ("hallucination", "['x', 'y']", "[0, 1]", None),  # failed call: wrong, not asked
        ("general", "['x', 'y']", "[0, 1]", "Answer 1"),  # right: 1
    ]
    df = pd.DataFrame([{"index": i, "category": c, "response": r, "answer": a, "prediction": p}
                       for i, (c, r, a, p) in enumerate(rows)])  # fmt: skip
    verdicts = {"Overall Judgment: Answer 2 is better.": "Answer 2", "Answer 1 is better": "Answer 1",
                "first": "I cannot tell", "Answer 1": "answer 1"}  # fmt: skip
    judge = FunctionJudge(lambda r: verdicts[r.prompt.split("Judgement: ")[1].rstrip("\n")])
    result = score_vl_rewardbench(df, judge)
    assert result.metrics == pytest.approx({"reasoning": 0.5, "hallucination": 0.0, "general": 1.0,
                                            "Macro Accuracy": 0.5, "Overall Consistency": 0.4})  # fmt: skip
    assert len(judge.asked) == 4 and all(r.max_tokens == 128 and r.temperature == 0 for r in judge.asked)
    assert judge.asked[0].prompt.startswith("\nYou are given a pairwise judgement for two responses.")
    assert result.counts["inference_errors"] == 1 and result.counts["unread"] == 1


def test_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "VL-RewardBench.tsv", [
        {"index": 0, "image": b64(image_bytes()), "question": "What is shown?", "response": "['a cat', 'a dog!']",
         "answer": "[1, 0]", "category": "general"},
    ])  # fmt: skip
    ds = build_dataset("VL-RewardBench", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    image, text = ds.build_prompt(0)
    assert image["type"] == "image"
    # lengths 5 + 6 = 11, odd: shown reversed
    assert text["value"].startswith("You are a highly capable multimodal AI assistant tasked with evaluating answers "
                                    "to visual questions.\nPlease analyze the following image and question, then "
                                    "determine which of the two provided answers is better.\n\nQuestion: What is "
                                    "shown?\n\nAnswer 1: a dog!\n\nAnswer 2: a cat\n\nPlease evaluate")  # fmt: skip
    assert ("(Answer 1 or Answer 2).For example: Overall Judgment: Answer X is better.\n\nYour response should be "
            "structured and detailed, demonstrating your understanding") in text["value"]  # fmt: skip
    with pytest.raises(DataError, match="--judge MODEL"):
        ds.evaluate(ds.data.assign(prediction=["Answer 1"]))
    # ranking [1, 0]: the dog is better, shown first
    result = ds.evaluate(ds.data.assign(prediction=["Answer 1"]), judge=FunctionJudge(lambda r: "Answer 1"))
    assert result.metrics["Overall Consistency"] == 1.0
