"""M3oralBench and SIUO_MCQ: VLMEvalKit's option-letter prompt and reading (m3oralbench.py, siuo_mcq.py at
e8e78f05), values worked by hand; and PlotQA by catalog name (ChartQA's relaxed accuracy, the question alone)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.letter_mcq import read_letter, score_letter_mcq


@pytest.mark.parametrize(("reply", "letter"), [
    ("so \\boxed{C} and (B)", "C"), ("I pick (B), not (D)", "D"), ("answer: b", "B"), ("a or c", "C"),
    ("Hmm", ""), ("H is the answer", ""),  # H is not among A-G
])  # fmt: skip
def test_the_letter_is_read_as_vlmevalkit_reads_it(reply, letter):
    assert read_letter(reply) == letter


def test_overall_and_breakdowns():
    df = pd.DataFrame([
        {"index": 1, "answer": "a ", "task_type": "judge", "category": "care", "prediction": "(A)"},
        {"index": 2, "answer": "B", "task_type": "judge", "category": "fair", "prediction": "\\boxed{C}"},
        {"index": 3, "answer": "C", "task_type": "choose", "category": "fair", "prediction": "c"},
        {"index": 4, "answer": "D", "task_type": "choose", "category": "care", "prediction": None},
    ])  # fmt: skip
    result = score_letter_mcq(df, {"task_type": "task_", "category": "foundation_"})
    assert result.metrics == pytest.approx({"Overall": 50.0, "task_choose": 50.0, "task_judge": 50.0,
                                            "foundation_care": 50.0, "foundation_fair": 50.0})
    assert result.counts["inference_errors"] == 1 and result.vlmevalkit.differing == []
    thirds = score_letter_mcq(df.iloc[:3])
    assert thirds.metrics["Overall"] == pytest.approx(200 / 3)
    assert thirds.vlmevalkit.metrics["Overall"] == 66.67  # rounded to 2 decimals, as VLMEvalKit prints it


def test_the_prompts_by_catalog_name(lmu_root: Path):
    shot = b64(image_bytes())
    rows = [{"index": 0, "image": shot, "question": "Is it fair?", "A": "Yes", "B": "No", "answer": "A",
             "category": "fair", "task_type": "judge"}]  # fmt: skip
    for name, tail in [("M3oralBench", "Please answer with only one option letter."),
                       ("SIUO_MCQ", "Please select one option letter only.")]:
        write_tsv(lmu_root / f"{name}.tsv", rows)
        ds = build_dataset(name, root=lmu_root, progress=False, keep_local_tsv=True)
        assert ds.build_prompt(0)[-1]["value"] == f"Question: Is it fair?\nOptions:\nA. Yes\nB. No\n{tail}"
        result = ds.evaluate(ds.data.assign(prediction=["A"]))
        assert result.metrics["Overall"] == 100.0
    assert "fair" in result.metrics and "foundation_fair" not in result.metrics  # SIUO: the category alone


def test_plotqa_is_relaxed_accuracy_on_the_question_alone(lmu_root: Path):
    write_tsv(lmu_root / "PlotQA.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "What is the max?",
                                         "answer": "100"}])  # fmt: skip
    ds = build_dataset("PlotQA", root=lmu_root, progress=False, keep_local_tsv=True)
    assert ds.build_prompt(0)[-1]["value"] == "What is the max?"
    result = ds.evaluate(ds.data.assign(prediction=["104"]))  # within 5% of 100
    assert result.metrics[result.primary] == 100.0
