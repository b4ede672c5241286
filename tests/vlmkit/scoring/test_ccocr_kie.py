"""CC-OCR's KIE track as VLMEvalKit's KieEvaluator scores it (kie_evaluator.py at e8e78f05): the JSON reading, the
normalisation, field F1 and tree-edit-distance accuracy, worked by hand; the tree edit distance against a second,
plain recursive implementation on random trees; the KIE names by catalog name."""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.ccocr import score_ccocr
from vlmkit.scoring.benchmarks.ccocr_kie import (
    Node, canonical, change_cost, field_counts, node_cost, normalize_text, normalize_values, read_reply,
    tree_accuracy, tree_distance,
)  # fmt: skip


@pytest.mark.parametrize(("reply", "value"), [
    ('{"a": "1"}', {"a": "1"}), ('Here:\n```json\n{"a":\n "1"}\n```\nDone', {"a": "1"}),
    ('```json\n{"a": "1"}', None),  # no closing fence
    ("not json", None), ("[1, 2]", [1, 2]), ('{"a": "x\ny"}', {"a": "xy"}),  # line breaks removed first
])  # fmt: skip
def test_the_reply_is_read_as_json(reply, value):
    assert read_reply(reply) == value


def test_normalisation():
    assert normalize_text("Total :  5 , Tax") == "Total: 5 , Tax"  # after a digit the comma keeps its space
    assert normalize_text("ＡＢ１\u3000中 文") == "AB 1中文"
    assert normalize_text("甲、乙") == "甲, 乙"  # 、 becomes a comma, which then takes one space after it
    assert normalize_values({"items": ["ＡＢ", {"n": "ＡＢ"}], "k": 5}) == {"items": ["ＡＢ", {"n": "AB"}], "k": 5}
    assert canonical({"bb": "x", "a": ["", " y ", 3, True, None], "c": {}}) == {"a": ["y", "3"], "bb": ["x"]}
    assert list(canonical({"bb": 1, "a": 1, "ab": 1})) == ["a", "ab", "bb"]
    assert canonical({"m": [{"n": "c"}, {}]}) == {"m": [{"n": ["c"]}]}


def test_fields_and_tree_accuracy_of_one_row():
    answer = {"company": "ABC Ltd", "total": "12.50"}
    pred = normalize_values(read_reply('```json\n{"company": "ABC  Ltd", "total": "12.5"}\n```'))
    assert field_counts(pred, answer) == (1, 2)  # company matches; total is a false positive and a false negative
    # one change, "12.5" -> "12.50" (1), over the whole answer tree: total (1) + 5 + company (1) + 7 = 14
    assert tree_accuracy(pred, answer) == pytest.approx(13 / 14)
    assert tree_accuracy({}, answer) == 0.0 and tree_accuracy(answer, answer) == 1.0


def _brute(a: Node, b: Node) -> int:
    """Ordered forest edit distance by its recursive definition (rightmost roots), memoised."""

    def frozen(node: Node) -> tuple:
        return (node.label, tuple(frozen(k) for k in node.kids))

    def cost(node: tuple) -> int:
        return node_cost(Node(node[0], []))

    def size(forest: tuple) -> int:
        return sum(cost(t) + size(t[1]) for t in forest)

    @lru_cache(maxsize=None)
    def d(f: tuple, g: tuple) -> int:
        if not f or not g:
            return size(f) + size(g)
        v, w = f[-1], g[-1]
        return min(d(f[:-1] + v[1], g) + cost(v), d(f, g[:-1] + w[1]) + cost(w),
                   d(f[:-1], g[:-1]) + d(v[1], w[1]) + change_cost(Node(v[0], []), Node(w[0], [])))  # fmt: skip

    return d((frozen(a),), (frozen(b),))


def _random_tree(rng: random.Random, depth: int) -> Node:
    if depth == 0 or rng.random() < 0.3:
        return Node("<leaf>" + rng.choice(["", "a", "ab", "ba", "abc"]), [])
    return Node(rng.choice(["k", "m", "<subtree>"]), [_random_tree(rng, depth - 1) for _ in range(rng.randint(0, 3))])


def test_tree_distance_equals_the_recursive_definition():
    rng = random.Random(7)
    for _ in range(150):
        a, b = _random_tree(rng, 3), _random_tree(rng, 3)
        assert tree_distance(a, b) == _brute(a, b)


def kie(index, answer, prediction, split="CORD", image_name=None):
    return {"index": index, "category": "kie", "l2-category": "constrained_category", "split": split,
            "answer": answer, "prediction": prediction, "image_name": image_name or f"i{index}"}  # fmt: skip


def test_a_kie_sub_dataset_and_the_track():
    rows = [
        kie(1, '{"company": "ABC Ltd", "total": "12.50"}', '```json\n{"company": "ABC  Ltd", "total": "12.5"}\n```'),
        kie(2, '{"total": "3", "company": "X"}', "not json"),  # no prediction: 2 false negatives, accuracy 0
        kie(3, "{'total': '7'}", None),  # a failed call (a Python-literal answer): 1 false negative, accuracy 0
    ]
    result = score_ccocr(pd.DataFrame(rows))
    assert result.metrics["CORD: f1_score"] == pytest.approx(1 / (1 + 5 / 2 + 1e-6))
    assert result.metrics["CORD: acc"] == pytest.approx((13 / 14) / (3 + 1e-6))
    assert result.metrics["CORD: response_success_ratio"] == pytest.approx(2 / 3)
    assert result.metrics["kie"] == result.metrics["total"] == result.metrics["CORD: acc"]
    assert result.per_sample["f1"].tolist() == pytest.approx([13 / 14, 0, 0])  # a KIE row's own score: its accuracy
    assert result.vlmevalkit.metrics == pytest.approx(result.metrics) and result.vlmevalkit.differing == []


def test_kie_and_text_reading_tracks_average_into_total():
    rows = [kie(1, '{"a": "x"}', '{"a": "x"}'),
            {"index": 2, "category": "multi_lan_ocr", "l2-category": "doc", "split": "French", "answer": "a b",
             "prediction": "a c", "image_name": "f"}]  # fmt: skip
    result = score_ccocr(pd.DataFrame(rows))
    assert result.metrics["kie"] == pytest.approx(1.0, abs=1e-5)
    assert result.metrics["lan_ocr"] == pytest.approx(0.5, abs=1e-6)
    assert result.metrics["total"] == pytest.approx(0.75, abs=1e-5)


def test_a_bad_answer_cell_is_named():
    with pytest.raises(ValueError, match=r"row index 4, field answer: not a JSON object or list"):
        score_ccocr(pd.DataFrame([kie(4, "total = 3", "{}")]))


def test_the_kie_names_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "CCOCR_Kie_Cord.tsv", [
        {"index": 0, "image": b64(image_bytes()), "question": "Extract the fields as JSON.", "answer": '{"a": "b"}',
         "category": "kie", "l2-category": "constrained_category", "split": "CORD", "image_name": "c0"}])  # fmt: skip
    ds = build_dataset("CCOCR_Kie_Cord", root=lmu_root, progress=False, keep_local_tsv=True)
    assert ds.build_prompt(0)[-1]["value"] == "Extract the fields as JSON."
    result = ds.evaluate(ds.data.assign(prediction=['{"a": "b"}']))
    assert result.metrics["total"] == pytest.approx(1.0, abs=1e-5)
