"""MMVet's dataset: the question alone as the prompt, scoring through the judge, a one-line refusal without
one, and a bad row named with its file."""

from __future__ import annotations

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.benchmarks.mmvet import MMVetDataset
from vlmkit.judging import FunctionJudge

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())


def mmvet_rows() -> list[dict]:
    return [
        {"index": 0, "image": JPEG, "question": "What is x?", "answer": "-1<AND>-5", "category": "rec,math"},
        {"index": 1, "image": JPEG, "question": "Read the sign.", "answer": "STOP", "category": "ocr"},
    ]


def test_mmvet_prompt_is_the_question_alone_and_scores_through_the_judge(lmu_root):
    write_tsv(lmu_root / "MMVet.tsv", mmvet_rows())
    ds = MMVetDataset("MMVet", root=lmu_root, progress=False)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"] and parts[-1]["value"] == "What is x?"
    predictions = ds.data.assign(prediction=["x = -1", "STOP"])
    judge = FunctionJudge(lambda request: "0.5" if request.prompt.endswith("| x = -1 | ") else "1.0")
    result = ds.evaluate(predictions, judge=judge)
    # (0.5 + 1.0) / 2 x 100
    assert result.primary_value == pytest.approx(75.0) and result.scorer == "mmvet"
    assert "prediction" not in ds.data.columns


def test_without_a_judge_evaluation_is_refused_in_one_line(lmu_root):
    write_tsv(lmu_root / "MMVet.tsv", mmvet_rows())
    ds = MMVetDataset("MMVet", root=lmu_root, progress=False)
    with pytest.raises(DatasetError) as caught:
        ds.evaluate(ds.data.assign(prediction=["a", "b"]))
    message = str(caught.value)
    assert "\n" not in message and "--judge" in message and "MMVet" in message


def test_a_bad_row_is_named_with_its_file(lmu_root):
    rows = mmvet_rows()
    rows[1]["category"] = ""
    write_tsv(lmu_root / "MMVet.tsv", rows)
    ds = MMVetDataset("MMVet", root=lmu_root, progress=False)
    with pytest.raises(DatasetError, match=r"MMVet\.tsv: row index 1, field `category`: missing"):
        ds.evaluate(ds.data.assign(prediction=["a", "b"]), judge=FunctionJudge(lambda request: "1.0"))
