"""CC-OCR's document-parsing track (documents, formulas, molecules) as VLMEvalKit's ParsingEvaluator scores it
(doc_parsing_evaluator.py at e8e78f05): the cleaning per op and 1 - edit distance / the longer length, worked by
hand; the names by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.ccocr import score_ccocr
from vlmkit.scoring.benchmarks.ccocr_parsing import cleaned, parsing_score


def test_cleaning_per_op():
    doc = "\\documentclass{article}\\usepackage[utf8]{inputenc}\\begin{document}\nHello World\n\\end{document}"
    assert cleaned(doc, "Hello World", "doc") == ("HelloWorld", "HelloWorld")
    # the text after the first fence: a ```latex fence leaves its `latex`
    assert cleaned("Sure:\n```latex\na b\n```\nok", "ab", "doc") == ("latexab", "ab")
    assert cleaned("no fence", "x", "doc")[0] == "nofence"
    assert cleaned("```latex\n\\frac{a}{b}\t+ c\n```", "\\frac {a}{b} +c", "formula") == ("\\frac{a}{b}+c",
                                                                                      "\\frac{a}{b}+c")  # fmt: skip
    assert cleaned("<smiles>C C\nO</smiles>", "CC O", "molecular") == ("CCO", "CCO")
    with pytest.raises(ValueError, match="op 'table'"):
        cleaned("x", "x", "table")


def test_row_scores():
    assert parsing_score("HelloWorld", "Hello World", "doc") == 1.0
    assert parsing_score("Hallo World", "Hello World", "doc") == pytest.approx(1 - 1 / 10)  # one change in 10
    assert parsing_score("CC", "CCO", "molecular") == pytest.approx(1 - 1 / 3)
    assert parsing_score(None, "CCO", "molecular") == 0.0  # a failed call
    assert parsing_score("", "", "formula") == 1.0  # VLMEvalKit divides by zero here


def test_sub_datasets_and_the_track():
    def row(index, op, split, answer, prediction):
        return {"index": index, "category": "doc_parsing", "l2-category": op, "split": split, "answer": answer,
                "prediction": prediction, "image_name": f"p{index}"}  # fmt: skip

    rows = [row(1, "doc", "DocScanEng", "Hello World", "Hallo World"),  # 0.9
            row(2, "doc", "DocScanEng", "abc", None),  # 0
            row(3, "molecular", "MolecularHandwriting", "CCO", "<smiles>CC</smiles>")]  # 2/3
    result = score_ccocr(pd.DataFrame(rows))
    assert result.metrics["DocScanEng: score"] == pytest.approx(0.45)
    assert result.metrics["MolecularHandwriting: score"] == pytest.approx(2 / 3)
    assert result.metrics["doc_parsing"] == result.metrics["total"] == pytest.approx((0.45 + 2 / 3) / 2)
    assert result.per_sample["f1"].tolist() == pytest.approx([0.9, 0.0, 2 / 3])
    assert result.vlmevalkit.metrics == pytest.approx(result.metrics)


def test_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "CCOCR_DocParsing_FormulaHandwriting.tsv", [
        {"index": 0, "image": b64(image_bytes()), "question": "Convert the formula to LaTeX.", "answer": "a + b",
         "category": "doc_parsing", "l2-category": "formula", "split": "FormulaHandwriting", "image_name": "f0"}])
    ds = build_dataset("CCOCR_DocParsing_FormulaHandwriting", root=lmu_root, progress=False, keep_local_tsv=True)
    assert ds.build_prompt(0)[-1]["value"] == "Convert the formula to LaTeX."
    result = ds.evaluate(ds.data.assign(prediction=["```latex\na+b\n```"]))
    assert result.metrics["total"] == 1.0
