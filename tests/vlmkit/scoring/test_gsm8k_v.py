"""GSM8K-V as VLMEvalKit scores it (gsm8k_v.py and utils/gsm8k_v.py at e8e78f05): the number read by its cascade of
patterns (its quirks included), the 1e-3 tolerance, per-category figures worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.benchmarks.gsm8k_v import GSM8KVDataset
from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.gsm8k_v import read_number, score_gsm8k_v


@pytest.mark.parametrize(("reply", "number"), [
    ("Step 1: add.\nFINAL ANSWER: 42", 42.0),
    ("FINAL ANSWER: $1,250", 1.0),  # the first pattern stops at the comma
    ("so \\boxed{7}", 7.0),  # VLMEvalKit's boxed pattern wants `\\{`: the last number of the last lines reads it
    ("The answer is 3/4.", 0.75),
    ("Thus the total is 18 apples.\nSo 18 it is", 18.0),
    ("Total: 5 apples\n\nand the cost is 7", 7.0),
    ("no numbers here", None),
    (42, None),  # a cell VLMEvalKit reads back as a number is not text to it
])  # fmt: skip
def test_the_number_is_read(reply, number):
    assert read_number(reply) == number


def test_scores_per_category():
    rows = [("A", "x", "FINAL ANSWER: 18"), ("A", "", "FINAL ANSWER: 17.9995"), ("B", "x", "I think 20"),
            ("B", "y", None)]
    df = pd.DataFrame([{"index": i, "answer": "18", "category": c, "subcategory": s, "prediction": p}
                       for i, (c, s, p) in enumerate(rows)])  # fmt: skip
    result = score_gsm8k_v(df)
    assert result.metrics == {"Overall": 0.5, "Category_A": 1.0, "Category_B": 0.0, "Subcategory_x": 0.5,
                              "Subcategory_y": 0.0}  # fmt: skip
    assert result.counts["inference_errors"] == 1 and result.vlmevalkit.metrics == result.metrics


def test_vlmevalkits_reading_differs():
    # an all-number reply column comes back as numbers (no text to read); an answer of 0 is never right there
    df = pd.DataFrame([{"index": 0, "answer": "42", "prediction": "42"},
                       {"index": 1, "answer": "0", "prediction": "0"}])
    result = score_gsm8k_v(df)
    assert result.metrics["Overall"] == 1.0 and result.vlmevalkit.metrics["Overall"] == 0.0
    assert [d.index for d in result.vlmevalkit.differing] == [0, 1]
    with pytest.raises(ValueError, match="row index 0, field answer: 'twelve'"):
        score_gsm8k_v(df.assign(answer="twelve"))


def test_the_prompt_by_catalog_name(lmu_root: Path):
    picture = b64(image_bytes())
    write_tsv(lmu_root / "GSM8K-V.tsv", [{"index": 0, "image": str([picture, picture]), "answer": "5",
                                          "modify_scene_related_question": "How many apples?"}])  # fmt: skip
    ds = build_dataset("GSM8K-V", root=lmu_root, progress=False, keep_local_tsv=True)
    *images, text = ds.build_prompt(0)
    assert [p["type"] for p in images] == ["image", "image"]
    assert text["value"] == (
        "You are an expert at solving mathematical problems from visual information. The images contain a complete "
        "math problem. Please carefully read and understand the problem from the images, When providing your final "
        "answer:\n- If the answer can be expressed as a whole number (integer), provide it as an integer\nPlease "
        "think step by step. After your reasoning, output your final answer on a new line starting with \"FINAL "
        "ANSWER: \" followed by the number only.")  # fmt: skip
    explicit = GSM8KVDataset("GSM8K-V", root=lmu_root, progress=False, mode="visual_explicit")
    assert "integer\nProblem: How many apples?\n\nPlease think" in explicit.build_prompt(0)[-1]["value"]
    assert ds.evaluate(ds.data.assign(prediction=["FINAL ANSWER: 5"])).metrics["Overall"] == 1.0
