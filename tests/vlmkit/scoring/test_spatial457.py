"""Spatial457 as VLMEvalKit scores it (spatial457.py and utils/spatial457.py at e8e78f05): the answer read from the
JSON-like reply, `is_correct`'s rules and the per-level scores worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.spatial457 import is_correct, read_answer, score_spatial457


@pytest.mark.parametrize(("reply", "answer", "followed"), [
    ("{'Reasoning': 'two cars', 'Answer': '2'}", "2", True), ('{"Reasoning": "x", "Answer": "Yes"}', "Yes", True),
    ("{'Reasoning': 'x', 'Answer': 3}", "3", True), ("The answer is red", "The answer is red", False),
])  # fmt: skip
def test_the_answer_is_read(reply, answer, followed):
    assert read_answer(reply) == (answer, followed)


@pytest.mark.parametrize(("answer", "pred", "right"), [
    ("Red", "red", True), ("No", "none", True), ("No", "0", True), ("3", "Three", True), ("Yes", "4", True),
    ("Yes", "0", False), ("sedan", "suv", True), ("school bus", "double", True), ("sedan", "jet", False),
    ("10", "ten", True), ("2", "two objects", False),
])  # fmt: skip
def test_is_correct(answer, pred, right):
    assert is_correct(answer, pred) is right


def test_scores_per_level():
    df = pd.DataFrame([
        {"index": 1, "category": "L1_single", "answer": "Red", "prediction": "{'Reasoning': 'r', 'Answer': 'red'}"},
        {"index": 2, "category": "L1_single", "answer": "2", "prediction": "I count 2"},  # whole reply: wrong
        {"index": 3, "category": "L4_pose", "answer": "Yes", "prediction": '{"Answer": "3"}'},  # a digit for yes
        {"index": 4, "category": "L4_pose", "answer": "No", "prediction": None},  # failed call
    ])  # fmt: skip
    result = score_spatial457(df)
    assert result.metrics["score"] == 0.5
    assert result.metrics["L1_single_score"] == 0.5 and result.metrics["L4_pose_score"] == 0.5
    assert result.metrics["L2_objects_score"] == 0.0 and len(result.metrics) == 8
    assert result.counts["format_error"] == 1 and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics == result.metrics
    with pytest.raises(ValueError, match="row index 1, field category: 'L9'"):
        score_spatial457(df.assign(category="L9"))


def test_the_prompt_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "Spatial457.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "Is there a bus?",
                                             "answer": "Yes", "category": "L2_objects"}])  # fmt: skip
    ds = build_dataset("Spatial457", root=lmu_root, progress=False, keep_local_tsv=True)
    first, image, question, fmt = ds.build_prompt(0)
    assert first["value"] == ("You are an intelligent chatbot designed to answer questions based on an image. Your "
                              "task is to analyze the images, identify attributes of multiple objects, and then determine "
                              "the answer to the question.\n")  # fmt: skip
    assert image["type"] == "image" and question["value"] == "Is there a bus?"
    assert "options: Small, Large, Airliner, Dirtbike, Road bike," in fmt["value"]
    assert "Right, Front, Back, or (2) an integer [0-10]" in fmt["value"]
    assert fmt["value"].endswith("{'Reasoning': '<your reasons>', 'Answer': '<Your answer>'}")
    assert ds.evaluate(ds.data.assign(prediction=["{'Answer': 'yes'}"])).metrics["score"] == 1.0
