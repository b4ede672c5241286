"""CMMMU as VLMEvalKit builds and scores it (cmmmu.py at e8e78f05): the three prompts byte for byte, the readings of
multiple-choice, true/false and fill-in replies, VLMEvalKit's random picks scored by their chance, and the figures
worked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.cmmmu import choice_reading, extract_numbers, fill_matches, normalize, true_false_reading

OPTIONS = ("cat", "dog", "bird", "fish")
ROWS = [
    # (category, type, answer, reply)
    ("科学", "选择", "B", "(B)"),  # hit
    ("科学", "选择", "A", "I choose the dog"),  # no letter: the option text `dog` reads B: miss
    ("商业", "选择", "C", "我不知道"),  # nothing found: VLMEvalKit picks at random: 1/4
    ("商业", "判断", "对", "这个说法是正确的。"),  # key phrase 正确的: positive: hit
    ("商业", "判断", "错", "无法判断"),  # no positive, no negative: a random verdict: 1/2
    ("科学", "填空", "12", "答案是12。"),  # the number 12: hit
    ("科学", "填空", "铁", "结果是铁块\n所以是铁"),  # phrases 铁块 and 铁 both hold 铁: VLMEvalKit counts 2
    ("艺术与设计", "填空", "3.14", None),  # a failed call
]


def write(lmu_root: Path, rows=ROWS) -> None:
    image = b64(image_bytes())
    write_tsv(lmu_root / "CMMMU_VAL.tsv", [
        {"index": i, "image": image, "question": f"题目{i}", "type": kind, "answer": answer, "category": cat,
         **{f"option{k}": o for k, o in enumerate(OPTIONS, 1)}} for i, (cat, kind, answer, _) in enumerate(rows)])


def test_prompts_are_vlmevalkits(lmu_root: Path):
    write(lmu_root)
    ds = build_dataset("CMMMU_VAL", root=lmu_root, progress=False, keep_local_tsv=True)
    assert [p["type"] for p in ds.build_prompt(0)] == ["image", "text"]
    assert ds.build_prompt(0)[-1]["value"] == (
        "问题: 题目0\nOptions:\nA. cat\nB. dog\nC. bird\nD. fish\n请回答上述多项选择题，并选出正确选项。这些题目可能包括单选和多选"
        "题型。如果所提供的信息不足以确定一个明确的答案，那么请根据可用的数据和你的判断来选择最可能正确的选项。")
    assert ds.build_prompt(3)[-1]["value"] == (
        "题目3\n请回答上述判断题，并根据题目描述和所给的信息来判断问题中陈述的对错。如果信息不完整或不足以作出绝对判断，请运用你的逻辑"
        "推理和现有信息来做出最可能的判断。")
    assert ds.build_prompt(5)[-1]["value"] == (
        "题目5\n请回答上述填空题，并根据题目的要求和所提供的信息来给出最恰当的答案。如果信息不足以确切回答，那么请依据现有的数据和你"
        "的推理能力来填写最合理的答案。")


def test_readings_by_hand():
    options = dict(zip("ABCD", OPTIONS))
    assert choice_reading("The answer is (A) or (C). (C)!", options) == "C"  # (C) twice
    assert choice_reading("A and B", options) == "AB"  # a tie: both, in order
    assert choice_reading("CAT", options) == "AC"  # bare letters anywhere count, as in VLMEvalKit
    assert choice_reading("不知道", options) is None  # VLMEvalKit: random.choice
    assert true_false_reading("这个说法是正确的") == "对"
    assert true_false_reading("我认为这个陈述是错误的。") == "错"
    assert true_false_reading("这是不对的") == "对"  # 不对 holds 对, and positive words are looked for first
    assert true_false_reading("无法判断") is None  # a tie: VLMEvalKit picks at random
    # the three patterns' finds, concatenated: the plain-number pattern also finds `000` and the 3s of 3.5e3
    assert extract_numbers("共1，000个, 3.5e3 和 -2") == ["1，000", "3.5e3", "000", "3", "3", "-2"]
    assert normalize(" 1,234.567 ", "x") == [1234.57]
    assert normalize("a very long answer that is far longer than the gold", "x") == []
    assert fill_matches("答案是12。", "12") == 1
    assert fill_matches("结果是铁块\n所以是铁", "铁") == 2


def test_scored_by_hand(lmu_root: Path):
    write(lmu_root)
    ds = build_dataset("CMMMU_VAL", root=lmu_root, progress=False, keep_local_tsv=True)
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in ROWS]))
    m = result.metrics
    assert m["总准确率"] == pytest.approx((1 + 0 + 0.25 + 1 + 0.5 + 1 + 1 + 0) / 8)
    assert m["科学"] == pytest.approx(0.75) and m["商业"] == pytest.approx(1.75 / 3) and m["艺术与设计"] == 0.0
    assert set(m) == {"总准确率", "科学", "商业", "艺术与设计"}  # categories without rows are left out
    assert result.counts["by_chance"] == 2 and result.counts["inference_errors"] == 1
    # VLMEvalKit counts the fill-in row with two matching phrases twice
    assert result.vlmevalkit.metrics["总准确率"] == pytest.approx(5.75 / 8)
    assert result.vlmevalkit.metrics["科学"] == pytest.approx(1.0)
    assert [d.index for d in result.vlmevalkit.differing] == [6]


def test_another_category_is_one_line(lmu_root: Path):
    write(lmu_root, [("数学", "选择", "A", "A")])
    ds = build_dataset("CMMMU_VAL", root=lmu_root, progress=False, keep_local_tsv=True)
    with pytest.raises(Exception, match=r"row index 0, field category: '数学' is not one of CMMMU's"):
        ds.evaluate(ds.data.assign(prediction=["A"]))
