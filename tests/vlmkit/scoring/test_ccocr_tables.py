"""CC-OCR's table parsing scored by TEDS as VLMEvalKit's ParsingEvaluator.eval_table scores it (doc_parsing_evaluator.py
at e8e78f05): the cleaning, the tree, the costs and 1 - distance / the larger element count, worked by hand; the
table names and the combined CCOCR file by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("lxml.html", reason="the optional `ocr` extra (lxml)")
pytest.importorskip("apted", reason="the optional `ocr` extra (apted)")

from datasets_tsv.catalog.registry import build_dataset  # noqa: E402
from tests.support.tsvs import b64, image_bytes, write_tsv  # noqa: E402
from vlmkit.scoring.benchmarks.ccocr import score_ccocr  # noqa: E402
from vlmkit.scoring.benchmarks.ccocr_tables import clean_table_reply, missing_library, table_score  # noqa: E402

AB = "<table><tr><td>a</td><td>b</td></tr></table>"


def test_cleaning():
    # the text after the first ```html fence, the closing fence removed but what follows it kept
    assert clean_table_reply("Here:\n```html\n<table> <tr>\n<td>1，2</td></tr></table>\n```\nDone") == (
        "<table><tr><td>1,2</td></tr></table>Done")
    assert clean_table_reply("```\n<table></table>\n```") == "<table></table>"  # no ```html fence: the fences go
    assert clean_table_reply("\\documentclass{article}\\begin{document}<table></table>\\end{document}") == (
        "<table></table>")
    assert missing_library() is None


@pytest.mark.parametrize(("reply", "answer", "expected"), [
    (AB, AB, 1.0),
    # one cell's content wholly different: rename cost 1 over 3 elements (tr, td, td)
    ("<table><tr><td>a</td><td>c</td></tr></table>", AB, 1 - 1 / 3),
    # one character of four: rename cost 1/4 over 2 elements (tr, td)
    ("<table><tr><td>abce</td></tr></table>", "<table><tr><td>abcd</td></tr></table>", 1 - 0.25 / 2),
    # a cell missing: one insertion over 3 elements
    ("<table><tr><td>a</td></tr></table>", AB, 1 - 1 / 3),
    # spaces, line breaks, a fence and a full-width comma are cleaned away
    ("```html\n<table>\n <tr><td>a b</td><td>1，2</td></tr></table>\n```", "<table><tr><td>ab</td><td>1,2</td></tr>"
     "</table>", 1.0),
    # a tag inside a cell: tokens <b> a </b> against a, edit distance 2 of 3; 3 elements in the reply
    ("<table><tr><td><b>a</b></td></tr></table>", "<table><tr><td>a</td></tr></table>", 1 - (2 / 3) / 3),
    # removing spaces makes `<td colspan="2">` the tag `tdcolspan="2"`: no longer a td, its text is not compared
    ('<table><tr><td colspan="2">y</td></tr></table>', '<table><tr><td colspan="2">x</td></tr></table>', 1.0),
    # ... and a td against it is a rename of the tag (cost 1) over 2 elements
    ("<table><tr><td>x</td></tr></table>", '<table><tr><td colspan="2">x</td></tr></table>', 0.5),
    # no table in the reply
    ("I cannot read this table.", AB, 0.0),
    # both tables empty: VLMEvalKit divides by zero, vlmkit scores 1
    ("<table></table>", "<table></table>", 1.0),
])  # fmt: skip
def test_teds_worked_by_hand(reply, answer, expected):
    assert table_score(reply, answer) == pytest.approx(expected)


def test_a_failed_call_scores_0():
    assert table_score(None, AB) == 0.0


def row(index, category, op, split, answer, prediction):
    return {"index": index, "category": category, "l2-category": op, "split": split, "answer": answer,
            "prediction": prediction, "image_name": f"img{index}"}  # fmt: skip


def test_table_and_document_sub_datasets_make_the_parsing_track():
    rows = [row(1, "doc_parsing", "table", "TableScanEng", AB, AB),  # 1
            row(2, "doc_parsing", "table", "TableScanEng", AB, "<table><tr><td>a</td></tr></table>"),  # 2/3
            row(3, "doc_parsing", "table", "TableScanEng", AB, None),  # a failed call: 0
            row(4, "doc_parsing", "doc", "DocScanEng", "Hello World", "Hallo World")]  # 0.9
    result = score_ccocr(pd.DataFrame(rows))
    table = (1 + 2 / 3 + 0) / 3
    assert result.metrics["TableScanEng: score"] == pytest.approx(table)
    assert result.metrics["doc_parsing"] == result.metrics["total"] == pytest.approx((table + 0.9) / 2)
    assert result.per_sample["f1"].tolist() == pytest.approx([1, 2 / 3, 0, 0.9])
    assert result.vlmevalkit.metrics == pytest.approx(result.metrics)


def test_table_name_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "CCOCR_DocParsing_TableScanEng.tsv", [
        {"index": 0, "image": b64(image_bytes()), "question": "Convert the table to HTML.", "answer": AB,
         "category": "doc_parsing", "l2-category": "table", "split": "TableScanEng", "image_name": "t0"}])
    ds = build_dataset("CCOCR_DocParsing_TableScanEng", root=lmu_root, progress=False, keep_local_tsv=True)
    prompt = ds.build_prompt(0)
    assert [p["type"] for p in prompt] == ["image", "text"] and prompt[1]["value"] == "Convert the table to HTML."
    result = ds.evaluate(ds.data.assign(prediction=["```html\n<table><tr><td>a</td><td>c</td></tr></table>\n```"]))
    assert result.metrics["total"] == pytest.approx(2 / 3)


def test_the_combined_file_averages_its_tracks(lmu_root: Path):
    image = b64(image_bytes())
    base = {"image": image, "question": "q"}
    rows = [row(0, "multi_lan_ocr", "French", "French", "le chat noir", None),
            row(1, "doc_parsing", "table", "TablePhotoEng", AB, None)]
    write_tsv(lmu_root / "CCOCR.tsv", [{**base, **{k: v for k, v in r.items() if k != "prediction"}} for r in rows])
    ds = build_dataset("CCOCR", root=lmu_root, progress=False, keep_local_tsv=True)
    # the French row: 2 of 3 words read, 2 of 2 written: F1 = 2 * (2/3) * 1 / (2/3 + 1) = 0.8
    result = ds.evaluate(ds.data.assign(prediction=["le chat", "<table><tr><td>a</td><td>c</td></tr></table>"]))
    assert result.metrics["lan_ocr"] == pytest.approx(0.8, abs=1e-6)
    assert result.metrics["doc_parsing"] == pytest.approx(2 / 3)
    assert result.metrics["total"] == pytest.approx((0.8 + 2 / 3) / 2, abs=1e-6)
