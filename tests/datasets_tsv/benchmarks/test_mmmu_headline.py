"""MMMU_DEV_VAL: the headline is the validation split's Overall, the figure VLMEvalKit reports
(MMMUDataset.report_primary_metric: `split=validation|Overall`), with the dev and validation rows kept in the table;
an open answer `3.5` is read in `3.50 m` (VLMEvalKit reads it too: `3.5` is inside the reply); both figures worked out
by hand from VLMEvalKit's MMMU_preproc, can_infer and report_acc at e8e78f05."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.benchmarks.mmmu import MMMUDataset

from tests.support.tsvs import b64, image_bytes, write_tsv

ANIMALS = {"A": "cat", "B": "dog", "C": "bird", "D": "fish"}
OPEN = {"A": "", "B": "", "C": "", "D": ""}


def rows() -> list[dict]:
    def row(index, split, answer, options=ANIMALS, question="Which animal is in <image 1>?"):
        return {"index": index, "image": b64(image_bytes()), "question": question, **options, "answer": answer,
                "split": split, "category": "Biology"}

    return [
        row(0, "dev", "B"),
        row(1, "dev", "A"),
        row(2, "validation", "3.5", OPEN, "How long is the rod in <image 1>, in metres?"),
        row(3, "validation", "A"),
        row(4, "validation", "D"),
        row(5, "validation", "12", OPEN, "How many legs in <image 1>?"),
    ]


REPLIES = [
    "B",  # hit on both sides
    "C",  # a miss on both
    "3.50 m",  # open answer 3.5: vlmkit reads the value (trailing zero, unit); VLMEvalKit: `3.5` is inside -> A
    "A",  # hit on both
    "",  # vlmkit: nothing; VLMEvalKit: `nan`, no option text inside it: a miss on both
    "The answer is 112",  # open answer 12: vlmkit reads no 12 in 112; VLMEvalKit: `12` is inside -> A, a hit
]


def build(root: Path) -> MMMUDataset:
    write_tsv(root / "MMMU_DEV_VAL.tsv", rows())
    return MMMUDataset("MMMU_DEV_VAL", root=root, progress=False)


def test_prompt_is_vlmevalkits(lmu_root):
    ds = build(lmu_root)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["text", "image", "text"]
    assert msgs[0]["value"] == "Question: Which animal is in "
    assert msgs[2]["value"] == (
        "?\nOptions:\nA. cat\nB. dog\nC. bird\nD. fish\nPlease select the correct answer from the options above. \n"
    )
    assert ds.build_prompt(2)[2]["value"] == ", in metres?\n"  # an open question: no options block


def test_headline_is_the_validation_split(lmu_root):
    ds = build(lmu_root)
    result = ds.evaluate(ds.data.assign(prediction=REPLIES))
    # vlmkit hits: dev [1, 0], validation [1, 1, 0, 0]
    assert result.primary == "Overall (validation)"
    assert result.metrics["Overall (validation)"] == pytest.approx(0.5)
    assert result.metrics["Overall (dev)"] == pytest.approx(0.5)
    assert result.metrics["Overall"] == pytest.approx(3 / 6)
    assert result.per_sample["extracted"].tolist()[2] == "A"  # `3.50 m` read as the open answer 3.5
    assert result.table["split"].tolist() == ["dev", "validation"]
    assert result.table["Overall"].tolist() == pytest.approx([0.5, 0.5])
    # VLMEvalKit: dev [1, 0], validation [1, 1, 0, 1]; its headline `split=validation|Overall` = 3/4
    fig = result.vlmevalkit
    assert fig.primary == "Overall (validation)" and fig.primary_value == pytest.approx(0.75)
    assert fig.metrics["Overall"] == pytest.approx(4 / 6)
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in fig.differing] == [(5, None, "A")]
    assert any("Overall (validation)" in n for n in result.notes)
