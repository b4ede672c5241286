"""CC-OCR's text-reading tracks scored as VLMEvalKit's OcrEvaluator scores them (utils/ccocr_evaluator at e8e78f05):
token F1 per row, macro F1 per sub-dataset, the track means and `total`, worked by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.ccocr import score_ccocr, tokens


def row(index, category, split, answer, prediction, image_name=None):
    return {"index": index, "category": category, "l2-category": "doc", "split": split, "answer": answer,
            "prediction": prediction, "image_name": image_name or f"img{index}"}  # fmt: skip


ROWS = [
    # French, word level: [le, chat, noir] vs [le, chat, blanc]: 2 shared, R = P = 2/3, F1 = 2/3
    row(1, "multi_lan_ocr", "French", "Le chat\nnoir ###", "le CHAT blanc"),
    # Japanese, character level: [日, 本, 語] vs [日, 本]: R = 2/3, P = 1, F1 = 0.8
    row(2, "multi_lan_ocr", "Japanese", "日本 語", "日本"),
    # IC15 scene text, word level, letters and digits only: [stop, exit2] vs [stop, exit2, now]: F1 = 0.8
    row(3, "multi_scene_ocr", "IC15", "STOP! Exit-2", "stop exit2 now"),
    # a failed call: no tokens, F1 0
    row(4, "multi_scene_ocr", "IC15", "OPEN", None),
]


def test_tokens_follow_vlmevalkits_normalisation():
    assert tokens("A\tb\n\nC*** ###d", word_level=True, alphanum_only=False) == ["a", "b", "c", "d"]
    assert tokens("Hello, World-1!", word_level=True, alphanum_only=True) == ["hello", "world1"]
    assert tokens("中 文A", word_level=False, alphanum_only=False) == ["中", "文", "a"]


def test_figures_are_the_track_means_of_macro_f1():
    result = score_ccocr(pd.DataFrame(ROWS))
    m = result.metrics
    assert m["French: macro_f1_score"] == pytest.approx(2 / 3, abs=1e-6)
    assert m["Japanese: macro_f1_score"] == pytest.approx(0.8, abs=1e-6)
    assert m["IC15: macro_f1_score"] == pytest.approx(0.4, abs=1e-6)  # (0.8 + 0) / 2
    # IC15 micro: right 2, answer tokens 3 (stop, exit2, open), reply tokens 3: R = P = 2/3
    assert m["IC15: mirco_f1_score"] == pytest.approx(2 / 3, abs=1e-6)
    assert m["lan_ocr"] == pytest.approx((2 / 3 + 0.8) / 2, abs=1e-6)
    assert m["scene_ocr"] == pytest.approx(0.4, abs=1e-6)
    assert m["total"] == pytest.approx(((2 / 3 + 0.8) / 2 + 0.4) / 2, abs=1e-6)
    assert result.primary == "total" and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics["total"] == pytest.approx(m["total"]) and result.vlmevalkit.differing == []


def test_vlmevalkit_counts_the_last_row_of_a_repeated_image_name():
    rows = [row(1, "multi_lan_ocr", "French", "a b", "a b", "same"), row(2, "multi_lan_ocr", "French", "a b", "c", "same")]
    result = score_ccocr(pd.DataFrame(rows))
    assert result.metrics["total"] == pytest.approx(0.5, abs=1e-6)  # (1 + 0) / 2
    assert result.vlmevalkit.metrics["total"] == pytest.approx(0.0, abs=1e-6)  # only row 2
    assert "image_name" in result.vlmevalkit.notes[0]


def test_unknown_parsing_ops_and_other_categories_are_refused_in_one_line():
    chart = {**row(1, "doc_parsing", "ChartScanEng", "x", "x"), "l2-category": "chart"}
    with pytest.raises(ValueError, match="document parsing of chart is not CC-OCR's"):
        score_ccocr(pd.DataFrame([chart]))
    with pytest.raises(ValueError, match="categories vqa are not CC-OCR's"):
        score_ccocr(pd.DataFrame([row(1, "vqa", "X", "x", "x")]))


def test_the_ocr_names_are_scorable_by_catalog_name(lmu_root: Path):
    ok = [r.name for r in catalog_rows().values() if r.name.startswith("CCOCR") and r.status == "ok"]
    assert len(ok) == 40 and all(n.startswith(("CCOCR_MultiLanOcr_", "CCOCR_MultiSceneOcr_", "CCOCR_Kie_",
                                               "CCOCR_DocParsing_")) or n == "CCOCR" for n in ok)  # fmt: skip
    assert sum("Table" in n for n in ok) == 4  # TEDS (vlmkit.scoring.benchmarks.ccocr_tables)
    write_tsv(lmu_root / "CCOCR_MultiLanOcr_French.tsv", [
        {"index": 0, "image": b64(image_bytes()), "question": "Read all the text in the image.", "answer": "Le chat",
         "category": "multi_lan_ocr", "l2-category": "French", "split": "French", "image_name": "f0"}])  # fmt: skip
    ds = build_dataset("CCOCR_MultiLanOcr_French", root=lmu_root, progress=False, keep_local_tsv=True)
    prompt = ds.build_prompt(0)
    assert [p["type"] for p in prompt] == ["image", "text"] and prompt[1]["value"] == "Read all the text in the image."
    result = ds.evaluate(ds.data.assign(prediction=["le chat"]))
    assert result.metrics["lan_ocr"] == pytest.approx(1.0, abs=1e-6)
