"""MME-SCI's datasets, built from the catalog: VLMEvalKit's prompts per language, and the refusal without a judge."""

from __future__ import annotations

import pytest

from datasets_tsv.kinds.base import DatasetError

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())


def test_mmesci_prompts_are_vlmevalkits(lmu_root):
    """MME-SCI: question (+ the options text of an MCQ row) + the language's instruction; `<image_k>` marks place
    the images; OnlyTxt rows go without images; VisionOnly sends the images and the instruction alone."""
    from datasets_tsv.catalog.registry import build_dataset

    rows = [
        {"index": 0, "image": JPEG, "question": "Look: <image_1> How many atoms?", "options": "A. 1\nB. 2",
         "type": "ImgTxt-MCQ", "answer": "B"},
        {"index": 1, "image": JPEG, "question": "What is 2+2?", "options": "", "type": "OnlyTxt-Open",
         "answer": "4"},
    ]
    write_tsv(lmu_root / "MMESCI_EN.tsv", rows)
    en = build_dataset("MMESCI_EN", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    first = en.build_prompt(0)
    assert [p["type"] for p in first] == ["text", "image", "text"]
    assert first[0]["value"] == "Look:"
    assert first[2]["value"] == "How many atoms?\nA. 1\nB. 2\nPlease write the final answer concisely after " \
                                "'Final Answer: '."
    assert en.build_prompt(1) == [{"type": "text", "value": "What is 2+2?\nPlease write the final answer "
                                                             "concisely after 'Final Answer: '."}]
    write_tsv(lmu_root / "MMESCI_VisionOnly.tsv", rows[:1])
    vision = build_dataset("MMESCI_VisionOnly", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    parts = vision.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["value"] == "请解答图像中给定的问题，并且在 '最终答案: ' 之后简洁地写出你的答案。"
    with pytest.raises(DatasetError, match="MMESCI_EN is scored by an LLM judge"):
        en.evaluate(en.data.assign(prediction="2"))
