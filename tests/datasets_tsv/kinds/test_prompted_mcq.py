"""datasets_tsv.kinds.mcq_variants on TSVs written here: prompt wording set by catalog options (preamble, hint
shown or not, question prefix, closing), the defaults equal to the generic MCQ prompt, and the MMVP pair report.
Expected prompts written out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.kinds.mcq_variants import PromptedMCQDataset
from tests.support.tsvs import b64, image_bytes, write_tsv

IMG = b64(image_bytes("red", "JPEG"))
CLOSING = "Please select the correct answer from the options above. \n"


def _row(i: int, question: str = "What is it?", answer: str = "A", **more) -> dict:
    return {"index": i, "image": IMG if i == 0 else "0", "question": question, "A": "cat", "B": "dog",
            "answer": answer, "hint": "Look closely.", **more}


def test_default_wording_is_the_generic_mcq_prompt(lmu_root: Path) -> None:
    write_tsv(lmu_root / "M.tsv", [_row(0)])
    prompted = PromptedMCQDataset("M", root=lmu_root, progress=False)
    expected = f"Hint: Look closely.\nQuestion: What is it?\nOptions:\nA. cat\nB. dog\n{CLOSING}"
    assert prompted.prompt_text(prompted.line(0)) == expected
    generic = ImageMCQDataset("M", root=lmu_root, progress=False)
    assert generic.prompt_text(generic.line(0)) == expected


def test_catalog_wording(lmu_root: Path) -> None:
    write_tsv(lmu_root / "W.tsv", [_row(0)])
    ds = PromptedMCQDataset("W", root=lmu_root, progress=False, preamble="Read the image.\n\n", hint=False,
                            question_prefix="Caption:\n ", closing="Answer with a letter.\n")
    assert ds.prompt_text(ds.line(0)) == (
        "Read the image.\n\nCaption:\n What is it?\nOptions:\nA. cat\nB. dog\nAnswer with a letter.\n")
    assert ds.scorer_params()["prompt"] == {"preamble": "Read the image.\n\n", "hint": False,
                                            "question_prefix": "Caption:\n ", "closing": "Answer with a letter.\n"}


def test_the_pair_report(lmu_root: Path) -> None:
    rows = [_row(0, "Same?", "A"), _row(1, "Same?", "B"), _row(2, "Other?", "A"), _row(3, "Other?", "A")]
    write_tsv(lmu_root / "P.tsv", rows)
    ds = PromptedMCQDataset("P", root=lmu_root, progress=False, report="pairs")
    # pair (0, 1): both right; pair (2, 3): row 3 wrong -> Overall 1/2; rows 3/4
    result = ds.evaluate(ds.data.assign(prediction=["A", "B", "A", "B"]))
    assert result.scorer == "mmvp" and result.metrics == pytest.approx({"Overall": 0.5, "Average": 0.75})
    assert ds.scorer_params()["scorer"] == "mmvp"


def test_bad_report_options(lmu_root: Path) -> None:
    write_tsv(lmu_root / "R.tsv", [_row(0)])
    with pytest.raises(ValueError, match=r"^R: MCQ report 'sum'; choose one of acc, pairs, settings$"):
        PromptedMCQDataset("R", root=lmu_root, progress=False, report="sum")
    with pytest.raises(ValueError, match=r"^R: report 'pairs' applies to plain MCQ, not circular evaluation$"):
        PromptedMCQDataset("R", root=lmu_root, progress=False, report="pairs", circular=True)
