"""MMOral_OPG_CLOSED as VLMEvalKit scores it (mmoral_opg_closed.py, utils/mmoral_opg.py at e8e78f05): the letter
read, the main-category and per-category percentages worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.mmoral_opg import read_choice, score_mmoral_opg

OPTIONS = {"A": "Caries", "B": "Impacted tooth", "C": "Periapical lesion", "D": "Normal"}


@pytest.mark.parametrize(("reply", "letter"), [
    ("(B) Impacted tooth", "B"), ("B.", "B"), ("A or (D)", "D"),
    ("The answer is C, clearly.", None),  # ` C,` makes C a candidate, but no position is found for it
    ("I see a periapical lesion near Normal roots", "D"),  # option texts: case-sensitive, the first found wins
    ("It is Normal, not Caries", "D"),  # the option text found first in the reply
    ("Hmm", None), ("'D'", "D"),
])  # fmt: skip
def test_the_letter_is_read(reply, letter):
    assert read_choice(reply, OPTIONS) == letter


def test_figures():
    def row(index, category, answer, prediction):
        return {"index": index, "category": category, "answer": answer, "prediction": prediction,
                **{f"option{k}": v for k, v in enumerate(OPTIONS.values(), 1)}}  # fmt: skip

    df = pd.DataFrame([row(1, "Teeth,Jaw", "B", "(B)"), row(2, "Teeth", "A", "C"), row(3, "Patho", "C", "Hmm"),
                       row(4, "Patho", "D", None)])  # fmt: skip
    result = score_mmoral_opg(df)
    assert result.metrics == pytest.approx({
        "Overall": 25.0, "Teeth": 50.0, "Patho": 0.0, "HisT": 0.0, "Jaw": 100.0, "SumRec": 0.0,
        "category: Patho": 0.0, "category: Teeth": 0.0, "category: Teeth,Jaw": 100.0})
    assert result.counts["unread"] == 1 and result.counts["inference_errors"] == 1
    assert "random letter for 2 row(s)" in result.vlmevalkit.notes[0]


def test_the_prompt_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "MMOral_OPG_CLOSED.tsv", [{
        "index": 0, "image": b64(image_bytes()), "question": "What is seen at tooth 36?", "answer": "A",
        "category": "Teeth", **{f"option{k}": v for k, v in enumerate(OPTIONS.values(), 1)}}])  # fmt: skip
    ds = build_dataset("MMOral_OPG_CLOSED", root=lmu_root, progress=False, keep_local_tsv=True)
    image, text = ds.build_prompt(0)
    assert image["type"] == "image"
    assert text["value"] == (
        "Question: What is seen at tooth 36?\nOptions:\nA. Caries\nB. Impacted tooth\nC. Periapical lesion\nD. Normal\n"
        "Please answer the above multiple-choice question by selecting the single correct option (A, B, C, or D). If "
        "the provided information is insufficient to determine a clear answer, please choose the most likely correct "
        "option based on the available data and your judgment.")  # fmt: skip
    assert ds.evaluate(ds.data.assign(prediction=["A"])).metrics["Overall"] == 100.0
