"""LLaVABench's dataset: the question alone as the prompt, and the review against the reference answer (English
and Korean) through the judge."""

from __future__ import annotations

import pytest

from datasets_tsv.benchmarks.llavabench import LLaVABenchDataset
from vlmkit.judging import FunctionJudge

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())


def test_llavabench_reviews_against_the_reference(lmu_root):
    rows = [{"index": i, "image": JPEG, "question": f"Q{i}", "caption": "A bus.", "gpt4_ans": f"Ref {i}",
             "category": cat} for i, cat in enumerate(["conv", "detail"])]
    write_tsv(lmu_root / "LLaVABench.tsv", rows)
    ds = LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False)
    assert ds.build_prompt(1)[-1]["value"] == "Q1"
    judge = FunctionJudge(lambda request: "8 6\nok" if "[Assistant 1]\nRef 0\n" in request.prompt else "10 10\nok")
    result = ds.evaluate(ds.data.assign(prediction=["P0", "P1"]), judge=judge)
    # model (6 + 10) / 2 = 8, reference (8 + 10) / 2 = 9 -> 8 / 9 x 100
    assert result.primary_value == pytest.approx(800 / 9)
    assert judge.asked[0].prompt.startswith("[Context]\nA bus.\n\n[Question]\nQ0\n")
    korean = LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False, language="ko")
    korean.evaluate(korean.data.assign(prediction=["P0", "P1"]), judge=judge)
    assert judge.asked[-1].prompt.startswith("[설명]\nA bus.\n\n[질문]\nQ1\n")
    assert korean.scorer_params()["language"] == "ko"
    with pytest.raises(ValueError, match="review language"):
        LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False, language="fr")
