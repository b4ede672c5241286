"""datasets_tsv.kinds.grouped_mcq on a TSV written here: the prompt taken verbatim from a column, and Overall as the
mean of per-group accuracies (CV-Bench / HR-Bench), with the mean over rows kept beside it. Worked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.grouped_mcq import GroupedMCQDataset
from tests.support.tsvs import b64, image_bytes, write_tsv

IMG = b64(image_bytes("red", "JPEG"))


def _rows() -> list[dict]:
    # source ADE: 3 rows, COCO: 1 row
    return [
        {"index": i, "image": IMG if i == 0 else "0", "question": f"Q{i}", "A": "left", "B": "right", "answer": a,
         "source": s, "prompt": f"Verbatim prompt {i}. Answer with A or B."}
        for i, (a, s) in enumerate([("A", "ADE"), ("B", "ADE"), ("A", "ADE"), ("B", "COCO")])
    ]


def test_overall_is_the_mean_of_the_group_accuracies(lmu_root: Path) -> None:
    write_tsv(lmu_root / "G.tsv", _rows())
    ds = GroupedMCQDataset("G", root=lmu_root, progress=False, overall_over="source")
    # ADE: rows 0, 1 right, row 2 wrong -> 2/3; COCO: row 3 wrong -> 0; groups' mean 1/3; rows' mean 2/4
    result = ds.evaluate(ds.data.assign(prediction=["A", "B", "B", "A"]))
    assert result.metrics["Overall"] == pytest.approx(1 / 3)
    assert result.metrics["Overall (rows)"] == pytest.approx(0.5)
    assert result.metrics["ADE"] == pytest.approx(2 / 3) and result.metrics["COCO"] == 0.0
    assert result.table["Overall"].tolist() == pytest.approx([1 / 3])
    assert any("mean of the accuracies per `source` (2 groups)" in note for note in result.notes)
    assert ds.scorer_params()["overall_over"] == "source"


def test_the_prompt_column_is_used_verbatim(lmu_root: Path) -> None:
    write_tsv(lmu_root / "P.tsv", _rows())
    ds = GroupedMCQDataset("P", root=lmu_root, progress=False, prompt_column="prompt")
    assert ds.prompt_text(ds.line(2)) == "Verbatim prompt 2. Answer with A or B."
    assert ds.build_prompt(2)[-1] == {"type": "text", "value": "Verbatim prompt 2. Answer with A or B."}
    assert ds.scorer_params()["prompt_column"] == "prompt"
    # without the option, the usual MCQ prompt holds the question and the options
    plain = GroupedMCQDataset("P", root=lmu_root, progress=False)
    text = plain.prompt_text(plain.line(2))
    assert "Q2" in text and "A. left" in text and "Verbatim" not in text
    assert "overall_over" not in plain.scorer_params() and "prompt_column" not in plain.scorer_params()


def test_bad_options_are_refused(lmu_root: Path) -> None:
    write_tsv(lmu_root / "B.tsv", _rows())
    with pytest.raises(DatasetError, match=r"B\.tsv: missing column `region`, needed to score B$"):
        GroupedMCQDataset("B", root=lmu_root, progress=False, overall_over="region")
    with pytest.raises(ValueError, match=r"^B: overall_over applies to plain MCQ, not circular evaluation$"):
        GroupedMCQDataset("B", root=lmu_root, progress=False, overall_over="source", circular=True)
