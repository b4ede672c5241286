"""VCRDataset on small TSVs of VCR-Wiki's shape: VLMEvalKit's prompt (image + the TSV's question) and scores."""

from __future__ import annotations

import importlib.util

import pytest

from datasets_tsv.benchmarks.vcr import VCRDataset
from vlmkit.core.errors import ConfigError

from tests.support.tsvs import b64, image_bytes, write_tsv

EN_QUESTION = (
    "What is the covered texts in the image? Please restore the covered texts without outputting the explanations."
)
ZH_QUESTION = "图像中被覆盖的文本是什么？请在不输出解释的情况下还原被覆盖的文本。"


def vcr_rows(question: str, answers: list[str]) -> list[dict]:
    return [
        {"index": i, "image": b64(image_bytes(colour)), "question": question, "answer": answer}
        for i, (colour, answer) in enumerate(zip(["red", "blue", "green"], answers))
    ]


def test_prompt_is_the_image_then_the_question_as_it_stands(lmu_root):
    write_tsv(lmu_root / "VCR_EN_EASY_100.tsv", vcr_rows(EN_QUESTION, ["['a b']", "['c']", "['d']"]))
    ds = VCRDataset("VCR_EN_EASY_100", root=lmu_root, progress=False, language="en")
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"]
    assert msgs[1]["value"] == EN_QUESTION  # nothing appended (VLMEvalKit's suffix is commented out)
    assert msgs[0]["value"].startswith(str(lmu_root / "images" / "VCR_EN_EASY_100"))
    assert ds.kind == "vqa"
    assert ds.scorer_params() == {"scorer": "vcr", "language": "en", "tokenizer": "rules"}
    assert any("spaCy's English tokenizer rules" in n for n in ds.info()["notes"])


def test_english_scores_worked_by_hand(lmu_root):
    answers = ["['the United States', 'New York City']", "['quick brown']", "['hello world']"]
    write_tsv(lmu_root / "VCR_EN_HARD_100.tsv", vcr_rows(EN_QUESTION, answers))
    ds = VCRDataset("VCR_EN_HARD_100", root=lmu_root, progress=False, language="en")
    predictions = [
        "It was founded in the United States. He moved to New York in 1990.",  # exact [1, 0], jaccard [1, 1/2]
        "The quick brown fox.",  # exact 1
        "Sorry, the text is unreadable.",  # a refusal: 0
    ]
    result = ds.evaluate(ds.data.assign(prediction=predictions))
    assert result.scorer == "vcr"
    assert result.metrics["Exact_Match"] == pytest.approx(2 / 4)
    assert result.metrics["Jaccard"] == pytest.approx(2.5 / 4)
    assert result.counts["refusals"] == 1


def test_chinese_scores_over_characters(lmu_root):
    answers = ["['人民共和国']", "['北京大学']", "['长江']"]
    write_tsv(lmu_root / "VCR_ZH_EASY_100.tsv", vcr_rows(ZH_QUESTION, answers))
    ds = VCRDataset("VCR_ZH_EASY_100", root=lmu_root, progress=False, language="zh")
    assert ds.build_prompt(1)[1]["value"] == ZH_QUESTION
    predictions = ["中华人民共和国成立于1949年", "他在北京大字读书", "我无法识别"]
    result = ds.evaluate(ds.data.assign(prediction=predictions))
    # spans: exact [1, 0, 0 (refusal)]; jaccard [1, 3/5 ({在北京大} vs {北京大学}), 0]
    assert result.metrics["Exact_Match"] == pytest.approx(1 / 3)
    assert result.metrics["Jaccard"] == pytest.approx(1.6 / 3)
    assert any("over characters" in n for n in ds.info()["notes"])


def test_options_are_checked(lmu_root):
    write_tsv(lmu_root / "V.tsv", vcr_rows(EN_QUESTION, ["['a']", "['b']", "['c']"]))
    with pytest.raises(ValueError, match="language 'fr'"):
        VCRDataset("V", root=lmu_root, progress=False, language="fr")
    with pytest.raises(ValueError, match="tokenizer 'nltk'"):
        VCRDataset("V", root=lmu_root, progress=False, tokenizer="nltk")


@pytest.mark.skipif(importlib.util.find_spec("spacy") is not None, reason="spaCy is installed here")
def test_spacy_tokenizer_without_spacy_fails_before_anything_is_read(lmu_root):
    with pytest.raises(ConfigError, match="en_core_web_sm"):
        VCRDataset("absent", root=lmu_root, progress=False, tokenizer="spacy")
