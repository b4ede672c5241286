"""evaluate() of each kind on small tables: the dataset's own settings (circular, metric) reach the scorer."""

from __future__ import annotations

import pytest

from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.kinds.vqa import ImageVQADataset
from datasets_tsv.kinds.yorn import ImageYORNDataset
from datasets_tsv.benchmarks.mmmu import MMMUDataset, open_as_choice

from tests.support.tsvs import b64, image_bytes, write_tsv

pytest.importorskip("vlmkit.scoring.kinds.mcq")
JPEG = b64(image_bytes())


def circular_rows() -> list[dict]:
    """Two questions with two rotations each (index g and g + 1e6)."""
    rows = []
    for g, (right, wrong) in enumerate([("cat", "dog"), ("sun", "moon")]):
        for k in range(2):
            options = [right, wrong] if k == 0 else [wrong, right]
            rows.append({"index": g + k * 1_000_000, "image": JPEG if k == 0 else str(g), "question": f"Q{g}",
                         "A": options[0], "B": options[1], "answer": "AB"[options.index(right)],
                         "category": "animals" if g == 0 else "sky", "split": "dev"})
    return rows


def test_mcq_plain_and_circular_score_the_same_answers_differently(lmu_root):
    write_tsv(lmu_root / "C.tsv", circular_rows())
    # question 0: both rotations right; question 1: the rotation is answered wrongly
    predictions = ["A", "The answer is (B).", "A", "A"]
    plain = ImageMCQDataset("C", root=lmu_root, progress=False)
    circular = ImageMCQDataset("C", root=lmu_root, progress=False, circular=True)
    table = plain.data.assign(prediction=predictions)
    assert plain.evaluate(table).metrics["Overall"] == pytest.approx(3 / 4)
    result = circular.evaluate(table)
    assert result.metrics["Overall"] == pytest.approx(1 / 2)
    assert result.metrics["animals"] == pytest.approx(1.0) and result.metrics["sky"] == pytest.approx(0.0)
    assert "prediction" not in plain.data.columns  # evaluate does not touch the dataset's table


def test_mcq_failed_inference_is_a_miss_not_an_answer(lmu_root):
    write_tsv(lmu_root / "C.tsv", circular_rows())
    ds = ImageMCQDataset("C", root=lmu_root, progress=False)
    result = ds.evaluate(ds.data.assign(prediction=["A", None, "A", "B"]))
    assert result.metrics["Overall"] == pytest.approx(3 / 4)
    assert result.counts["inference_errors"] == 1


def test_mmmu_open_questions_become_choices(lmu_root):
    rows = [
        {"index": 0, "image": JPEG, "question": "How many <image 1>?", "A": "", "B": "", "answer": "42"},
        {"index": 1, "image": JPEG, "question": "Pick <image 1>", "A": "left", "B": "right", "answer": "B"},
        {"index": 2, "image": JPEG, "question": "How many?", "A": "", "B": "", "answer": "7"},
    ]
    write_tsv(lmu_root / "MM.tsv", rows)
    ds = MMMUDataset("MM", root=lmu_root, progress=False)
    converted = open_as_choice(ds.data)
    assert converted.loc[0, ["A", "B", "answer"]].tolist() == ["42", "Other Answers", "A"]
    assert converted.loc[1, ["A", "B", "answer"]].tolist() == ["left", "right", "B"]
    result = ds.evaluate(ds.data.assign(prediction=["The count is 42", "B", "5"]))
    assert result.metrics["Overall"] == pytest.approx(2 / 3)
    assert ds.data.loc[0, "answer"] == "42"  # the dataset's own table is unchanged


def test_yorn_metric_comes_from_the_dataset(lmu_root):
    rows = [{"index": i, "image": JPEG, "question": "Red?", "answer": a, "category": "colour"}
            for i, a in enumerate(["Yes", "No", "Yes", "No"])]
    write_tsv(lmu_root / "YN.tsv", rows)
    ds = ImageYORNDataset("YN", root=lmu_root, progress=False)
    result = ds.evaluate(ds.data.assign(prediction=["Yes", "no.", None, "Yes"]))
    assert result.scorer == "yorn_acc" and result.metrics["Overall"] == pytest.approx(50.0)
    pope = ImageYORNDataset("YN", root=lmu_root, progress=False, metric="pope")
    assert pope.evaluate(pope.data.assign(prediction=["Yes", "No", "Yes", "No"])).scorer == "yorn_pope"


def test_vqa_metric_comes_from_the_dataset(lmu_root):
    rows = [{"index": i, "image": JPEG, "question": "Word?", "answer": a} for i, a in enumerate(["stop", "42", "cat"])]
    write_tsv(lmu_root / "V.tsv", rows)
    ds = ImageVQADataset("V", root=lmu_root, progress=False, metric="exact")
    result = ds.evaluate(ds.data.assign(prediction=["Stop", "41", None]))
    assert result.scorer.endswith("exact") and result.metrics["Overall"] == pytest.approx(100 / 3)
    anls = ImageVQADataset("V", root=lmu_root, progress=False, metric="anls")
    assert anls.evaluate(anls.data.assign(prediction=["stop", "42", "cat"])).metrics["Overall"] > 99
