"""ReasonMap-Plus as VLMEvalKit scores it (reasonmap_plus.py at e8e78f05): the reading by question type, the
plain and difficulty-weighted accuracies per type, worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.kinds.base import DatasetError
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.reasonmap_plus import normalize, score_reasonmap_plus


@pytest.mark.parametrize(("reply", "kind", "reading"), [
    ("The answer is \\boxed{yes}", "TorF1", "yes"),
    # `[^}]*` stops at the first `}`: a nested \text{...} is cut and never read (VLMEvalKit's pattern)
    ("The answer is \\boxed{\\text{Yes}}", "TorF1", "\\text{Yes"),
    ("After checking, the answer is no. Done.", "TorF2", "no"),
    ("I think it's true", "TorF1", "I think it's true"),  # no yes/no word on its own: the text stays
    ("Answer: B", "Counting1", "B"),
    ("There are a total of 3 stops", "Counting1", "A"),  # the standalone word `a` reads as the letter A
    ("The final answer is 12 stations.", "Counting2", "12"),
    ("So the answer is Line 2.\nThat is all", "Counting3", "2"),
    ("It is boxed{Line 5} then", "Other", "Line 5"),
    ("   ", "TorF1", ""),
])  # fmt: skip
def test_the_reading_by_type(reply, kind, reading):
    assert normalize(reply, kind) == reading


def test_accuracy_and_weighted_accuracy_per_type():
    df = pd.DataFrame([
        {"index": 0, "type": "TorF1", "difficulty_city": "easy", "answer": "1", "prediction": "\\boxed{yes}"},
        {"index": 1, "type": "TorF1", "difficulty_city": "hard", "answer": "0", "prediction": "The answer is yes."},
        {"index": 2, "type": "Counting1", "difficulty_city": "middle", "answer": "2", "prediction": "Answer: C"},
        {"index": 3, "type": "Counting2", "difficulty_city": "middle", "answer": "4", "prediction": "I count 4 stops"},
        {"index": 4, "type": "Counting3", "difficulty_city": "easy", "answer": "3", "prediction": None},
    ])  # fmt: skip
    result = score_reasonmap_plus(df)
    m = result.metrics
    # hits 0, 2, 3; weights 1, 2, 1.5, 1.5, 1 -> (1 + 1.5 + 1.5) / 7
    assert m["accuracy"] == pytest.approx(0.6) and m["weighted_accuracy"] == pytest.approx(4 / 7)
    assert m["accuracy[TorF1]"] == 0.5 and m["weighted_accuracy[TorF1]"] == pytest.approx(1 / 3)
    assert m["accuracy[Counting1]"] == 1.0 and m["accuracy[Counting3]"] == 0.0
    assert m["weighted_accuracy[Counting3]"] == 0
    assert result.counts["inference_errors"] == 1 and result.vlmevalkit.metrics == pytest.approx(m)
    with pytest.raises(ValueError, match="row index 0, field difficulty_city: 'medium'"):
        score_reasonmap_plus(df.assign(difficulty_city="medium"))


def test_vlmevalkits_xlsx_round_trip_turns_1_into_1_0():
    # replies `1` and `` : the column reads back as numbers with a NaN, so VLMEvalKit sees `1.0` (not a yes) and `nan`
    df = pd.DataFrame([{"index": i, "type": "TorF1", "difficulty_city": "easy", "answer": "1", "prediction": p}
                       for i, p in enumerate(["1", ""])])  # fmt: skip
    result = score_reasonmap_plus(df)
    assert result.metrics["accuracy"] == 0.5 and result.vlmevalkit.metrics["accuracy"] == 0.0
    assert [d.index for d in result.vlmevalkit.differing] == [0]


def test_the_prompt_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "ReasonMap-Plus.tsv", [
        {"index": 0, "image": b64(image_bytes()), "question": "Is Station A on Line 1? Answer yes or no.",
         "answer": "1", "type": "TorF1", "difficulty_city": "hard"},
    ])  # fmt: skip
    ds = build_dataset("ReasonMap-Plus", root=lmu_root, progress=False, keep_local_tsv=True)
    image, text = ds.build_prompt(0)
    assert image["type"] == "image" and text["value"] == "Is Station A on Line 1? Answer yes or no."
    assert ds.evaluate(ds.data.assign(prediction=["Yes"])).metrics["weighted_accuracy"] == 1.0
    with pytest.raises(DatasetError, match="ReasonMap-Plus.tsv: ReasonMap-Plus scoring: row index 0"):
        ds.evaluate(ds.data.assign(prediction=["Yes"], difficulty_city=["?"]))
