"""WorldVQA graded as VLMEvalKit grades it (worldvqa.py at e8e78f05): the judge's label read (bold marks removed, a
reply without a label asked again), Accuracy, CGA, AttemptRate and F-score overall, per difficulty and per category
worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.core.errors import DataError
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks.worldvqa import read_label, score_worldvqa


def test_the_label_is_read():
    assert read_label("1. **Evaluation**: fine\n2. **Label**: Correct") == "correct"
    assert read_label("Label: unattempted") == "unattempted" and read_label("It is right") is None


def test_grading():
    rows = [("easy", "sports", "<think>hmm</think>Wout Weghorst"), ("easy", "animals", "A dog"),
            ("hard", "animals", "I don't know"), ("hard", "sports", None)]
    df = pd.DataFrame([{"index": i, "difficulty": d, "category": c, "question": f"Q{i}", "answer": f"G{i}",
                        "prediction": p} for i, (d, c, p) in enumerate(rows)])  # fmt: skip

    def judge_fn(request):
        reply = request.prompt.split("Model Answer: ")[-1].split("\n")[0]
        if reply == "A dog" and request.attempt == 0:
            return "I think it is wrong"  # no label: asked again
        return {"Wout Weghorst": "2. **Label**: Correct", "A dog": "Label: Incorrect",
                "I don't know": "Label: Unattempted"}[reply]  # fmt: skip

    judge = FunctionJudge(judge_fn)
    result = score_worldvqa(df, judge)
    m = result.metrics
    assert [m[f"Overall {k}"] for k in ("Accuracy", "CGA", "AttemptRate")] == [0.25, 0.5, 0.5]
    assert m["Overall F-score"] == pytest.approx(1 / 3)
    assert [m[f"easy {k}"] for k in ("Accuracy", "CGA", "AttemptRate", "F-score")] == [0.5, 0.5, 1.0, 0.5]
    assert [m[f"hard {k}"] for k in ("Accuracy", "CGA", "AttemptRate", "F-score")] == [0.0, 0.0, 0.0, 0.0]
    assert m["category_animals AttemptRate"] == 0.5 and m["category_animals CGA"] == 0.0
    assert m["category_sports F-score"] == pytest.approx(2 / 3)
    assert len(judge.asked) == 4 and all(r.max_tokens == 2048 for r in judge.asked)
    assert "Model Answer: Wout Weghorst\nGround Truth Answer: G0\n'''\n\nEvaluation:\n" in judge.asked[0].prompt
    assert judge.asked[0].prompt.startswith("### Role\nYou are an expert judge specialized in evaluating")
    assert result.counts["inference_errors"] == 1 and result.primary == "Overall Accuracy"


def test_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "WorldVQA.tsv", [
        {"index": 0, "image": b64(image_bytes()), "question": "Who is it?", "answer": "X", "language": "en"},
        {"index": 1, "image": b64(image_bytes()), "question": "这是谁？", "answer": "Y", "language": "zh"},
    ])  # fmt: skip
    ds = build_dataset("WorldVQA", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    image, text = ds.build_prompt(0)
    assert image["type"] == "image"
    assert text["value"] == "Please provide as much detail as possible in your answer.\nWho is it?"
    assert ds.build_prompt(1)[-1]["value"] == "请尽可能提供详细的回答。\n这是谁？"
    with pytest.raises(DataError, match="--judge MODEL"):
        ds.evaluate(ds.data.assign(prediction=["X", "Y"]))
    result = ds.evaluate(ds.data.assign(prediction=["X", "Y"]), judge=FunctionJudge(lambda r: "Label: Correct"))
    assert result.metrics["Overall Accuracy"] == 1.0
