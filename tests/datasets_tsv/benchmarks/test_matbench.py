"""MATBench as VLMEvalKit's MATBench builds and scores it (matbench.py mat_evaluate at e8e78f05): the prompt from the
third column, the first image only, normalised F1/EM per category and split and the row means, worked by hand."""

from __future__ import annotations

import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.matbench import f1_and_em, normalize

ROWS = [
    # (answer, category, split, reply)
    ("The Eiffel Tower", "code", "simple", "Eiffel tower."),  # EM: F1 1
    ("42 apples", "code", "hard", "about 42"),  # 1 word of 2 each way: F1 0.5
    ("北京", "search", "simple", "答案是北京。"),  # characters: 2 of 5 and 2 of 2: F1 4/7
    ("1990", "search", "hard", None),  # a failed call: 0
    ("a cat", "search", "hard", "cat cat"),  # a set of shared words: P 1/2, R 1: F1 2/3
]


def build(lmu_root, rows=ROWS, question_column="question"):
    red, blue = b64(image_bytes("red")), b64(image_bytes("blue"))
    write_tsv(lmu_root / "MATBench.tsv", [
        {"index": i, "image": f"['{red}', '{blue}']" if i == 0 else red, question_column: f"Q{i}?", "answer": answer,
         "category": category, "split": split} for i, (answer, category, split, _) in enumerate(rows)])  # fmt: skip
    return build_dataset("MATBench", root=lmu_root, progress=False, keep_local_tsv=True)


def test_normalisation_and_row_scores():
    assert normalize("The  Eiffel, Tower!") == "eiffel tower"
    assert normalize("北京 大学。") == "北京大学"
    assert f1_and_em("Eiffel tower.", "The Eiffel Tower") == (1.0, 1)
    assert f1_and_em("about 42", "42 apples") == (pytest.approx(0.5), 0)
    assert f1_and_em("答案是北京。", "北京") == (pytest.approx(4 / 7), 0)
    assert f1_and_em("nothing", "42") == (0.0, 0)


def test_prompt_is_the_third_column_and_the_first_image(lmu_root):
    ds = build(lmu_root, question_column="query")
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"]
    assert msgs[1]["value"] == "Q0?\nAnswer the question directly. The answer should be very brief."


def test_scored_by_hand(lmu_root):
    ds = build(lmu_root)
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in ROWS]))
    m = result.metrics
    assert (m["code_simple_f1"], m["code_simple_em"]) == (1.0, 1.0)
    assert (m["code_hard_f1"], m["code_hard_em"]) == (pytest.approx(0.5), 0.0)
    assert m["search_simple_f1"] == pytest.approx(4 / 7)
    assert m["search_hard_f1"] == pytest.approx((0 + 2 / 3) / 2)
    assert m["code_f1_avg"] == pytest.approx(0.75) and m["code_em_avg"] == pytest.approx(0.5)
    assert m["search_f1_avg"] == pytest.approx((4 / 7 + 0 + 2 / 3) / 3) and m["search_em_avg"] == 0.0
    assert m["overall_f1_avg"] == pytest.approx((1 + 0.5 + 4 / 7 + 0 + 2 / 3) / 5)
    assert m["overall_em_avg"] == pytest.approx(1 / 5)
    assert result.primary == "overall_f1_avg" and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics == pytest.approx(m)


def test_vlmevalkit_leaves_out_numeric_answers(lmu_root):
    ds = build(lmu_root, rows=[("3", "code", "simple", "3"), ("4", "code", "simple", "five")])
    result = ds.evaluate(ds.data.assign(prediction=["3", "five"]))
    assert result.metrics["overall_em_avg"] == pytest.approx(0.5)
    # the answer column reads back as numbers from VLMEvalKit's xlsx: both rows are skipped, every figure is 0
    assert result.vlmevalkit.metrics["overall_em_avg"] == 0.0
    assert "left out" in result.vlmevalkit.notes[0]


def test_another_split_is_one_line(lmu_root):
    ds = build(lmu_root, rows=[("x", "code", "medium", "x")])
    with pytest.raises(Exception, match=r"row index 0, field category/split: 'code'/'medium'"):
        ds.evaluate(ds.data.assign(prediction=["x"]))
