"""VisFactor scored as VLMEvalKit's VisFactor.evaluate scores it (vlmeval/dataset/visfactor.py at e8e78f05), and its
prompt built as VLMEvalKit builds it: values worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.visfactor import json_answer, score_visfactor

ROWS = [  # (category_id, eval_index, answer, additional, reply)
    ("CF1", "e1", "T", None, 'I think so. {"answer": "yes"}'),  # T: right
    ("CF1", "e1", "F", None, '{"answer": "true"}'),  # T: wrong -> item e1 wrong
    ("CF1", "e2", "F", None, '{"answer": 0}'),  # F: right -> CF1 = 1 of 2 items
    ("CS1", "e3", "Cat,dog", None, '{"answer": "DOG"}'),  # one of the items: right
    ("CF3", "e4", "(3, 4)", None, "points 1, 3 and 4"),  # no JSON: the reply's last two numbers: right
    ("VZ3", "e5", "C", "2", 'The answer is B. {"answer": "C"}'),  # additional a number: last capital of "C"
    ("VZ3", "e6", "F", "abc", '{"answer": "no"}'),  # additional not a number: true/false: F, right
    ("XX9", "e7", "A", None, "A"),  # a test without a rule: a miss here, right in VLMEvalKit
]


def frame() -> pd.DataFrame:
    return pd.DataFrame([{"index": i, "category_id": c, "eval_index": e, "answer": a, "additional": x, "prediction": p}
                         for i, (c, e, a, x, p) in enumerate(ROWS)])  # fmt: skip


def test_the_last_json_answer_is_read():
    assert json_answer('{"answer": "a"} then {"answer": \'b\'}') == "b"
    assert json_answer('{ "answer" : 12 }') == "12" and json_answer("no json") == ""


def test_tests_items_and_all():
    result = score_visfactor(frame())
    assert result.metrics == pytest.approx({"CF1": 0.5, "CF3": 1.0, "CS1": 1.0, "VZ3": 1.0, "XX9": 0.0, "ALL": 0.7})
    assert result.per_sample["read"].tolist()[:7] == ["T", "T", "F", "DOG", "(3, 4)", "C", "F"]
    assert result.vlmevalkit.metrics["XX9"] == 1.0 and result.vlmevalkit.metrics["ALL"] == pytest.approx(0.9)
    assert [d.index for d in result.vlmevalkit.differing] == [7]
    assert "index 7" in result.notes[0]


def test_a_failed_call_is_a_miss_on_both_sides():
    df = frame().iloc[:3].copy()
    df.loc[2, "prediction"] = None
    result = score_visfactor(df)
    assert result.metrics["CF1"] == 0.0 and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics["CF1"] == 0.0 and result.vlmevalkit.differing == []


QUESTION = 'Look: <IMAGE_0> and <IMAGE_1><br>Item <ADDITIONAL_1>. Output: Respond with {"answer": ...}'


@pytest.mark.parametrize("name", ["VisFactor_GE", "VisFactor_GE_CoT"])
def test_the_prompt_interleaves_images_and_fills_the_additional_items(lmu_root: Path, name: str):
    images = json.dumps([b64(image_bytes("red")), b64(image_bytes("blue"))])
    write_tsv(lmu_root / f"{name}.tsv", [{"index": 0, "image": images, "question": QUESTION, "answer": "T",
                                          "category_id": "CF1", "eval_index": "1", "additional": "x;y<br>z"}])  # fmt: skip
    ds = build_dataset(name, root=lmu_root, progress=False, keep_local_tsv=True)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "image", "text", "image", "text"]
    assert parts[0]["value"] == "Look: " and parts[2]["value"] == " and "
    tail = ("Output: Solve the problem step-by-step. First, reason through the problem clearly. At the end, respond"
            if name.endswith("CoT") else "Output: Respond")  # fmt: skip
    assert parts[4]["value"] == f'\nItem y\nz. {tail} with {{"answer": ...}}'
    assert parts[1]["value"] != parts[3]["value"]
    result = ds.evaluate(ds.data.assign(prediction=['{"answer": "T"}']))
    assert result.metrics["ALL"] == 1.0
