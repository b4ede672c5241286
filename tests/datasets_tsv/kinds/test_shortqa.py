"""The ShortQA kind's dataset: VLMEvalKit's short-answer suffix, and choice rows read by rule beside judged ones."""

from __future__ import annotations

import pytest

from datasets_tsv.kinds.shortqa import SHORTQA_SUFFIX, ShortQADataset
from vlmkit.judging import FunctionJudge

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())


def test_shortqa_prompt_has_vlmevalkits_suffix(lmu_root):
    rows = [{"index": 0, "image": JPEG, "question": "Who is this?", "answer": "Franklin D. Roosevelt"},
            {"index": 1, "image": JPEG, "question": "Which?", "answer": "A", "A": "cat", "B": "dog"}]
    write_tsv(lmu_root / "hle.tsv", rows)
    ds = ShortQADataset("hle", root=lmu_root, progress=False)
    assert ds.build_prompt(0)[-1]["value"] == "Who is this?\nPlease directly provide a short answer to the question. "
    assert SHORTQA_SUFFIX == "\nPlease directly provide a short answer to the question. "
    # the catalog's explicit kwargs give the same prompt
    same = ShortQADataset("hle", root=lmu_root, progress=False, kind="shortqa", suffix=SHORTQA_SUFFIX)
    assert same.build_prompt(0) == ds.build_prompt(0)
    judge = FunctionJudge(lambda request: "[Begin Correctness]yes[End Correctness]")
    result = ds.evaluate(ds.data.assign(prediction=["Roosevelt", "B"]), judge=judge)
    # row 0 judged right; row 1 is a choice row read by rule: B != A
    assert result.per_sample["hit"].tolist() == [True, False] and result.primary_value == pytest.approx(0.5)
    assert len(judge.asked) == 1
