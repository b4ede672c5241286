"""SPAR-Bench as VLMEvalKit's SparBench builds and scores it (sparbench.py at e8e78f05): the prompt per task kind
byte for byte, option letters, MRA, the view-change metric and the level figures worked by hand."""

from __future__ import annotations

import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.kinds.base import DatasetError
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.sparbench import instructions, view_change_score

ROWS = [
    # (task, answer, reply)
    ("obj_spatial_relation_oo", "A", "A"),  # hit
    ("obj_spatial_relation_oo", "B", "A. left"),  # reads A: miss
    ("position_matching", "C", "(C)"),  # hit
    ("depth_prediction_oc", "2.5", "2.5 meters"),  # MRA 1
    ("distance_prediction_oo", "10", "8.7"),  # error 0.13: 8 thresholds of 10
    ("view_change_infer", "move_right:1.0,rotate_left:10", "move_right:1.0, rotate_left:8.7"),  # 0.96
    ("view_change_infer", "move_forward:2", None),  # a failed call: 0
]


def build(lmu_root, name="SparBench", rows=ROWS):
    image = b64(image_bytes())
    write_tsv(lmu_root / f"{name}.tsv", [{"index": i, "image": image, "question": f"Q{i}?", "task": task,
                                          "answer": answer} for i, (task, answer, _) in enumerate(rows)])  # fmt: skip
    return build_dataset(name, root=lmu_root, progress=False, keep_local_tsv=True)


def test_prompts_are_vlmevalkits(lmu_root):
    ds = build(lmu_root)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"]
    assert msgs[1]["value"] == "\nQ0?\n\nAnswer with the option's letter from the given choices directly."
    assert ds.build_prompt(2)[1]["value"] == (
        "\nQ2?\nThe values represent the bounding box coordinates normalized to a 0-1000 scale, with the top-left "
        "corner as the origin of the image.\nAnswer with the option's letter from the given choices directly.")
    assert ds.build_prompt(3)[1]["value"] == "\nQ3?\nPlease answer the question using a single word or phrase."
    assert ds.build_prompt(5)[1]["value"] == "\nQ5?\n\n"


def test_view_change_metric_by_hand():
    assert instructions("move_right:0.3, move_left:x, junk, rotate_up:1:2") == {"move_right": 0.3}
    # right 1 vs 1, rotate right-left -8.7 vs -10 (error 0.13: 0.8), three axes 0 vs 0 (1 each)
    assert view_change_score("move_right:1.0, rotate_left:8.7", "move_right:1.0,rotate_left:10") == pytest.approx(0.96)
    # no action read: the answer's forward 2 against 0 is error 1 (0); the other four axes are 0 vs 0
    assert view_change_score("I cannot tell", "move_forward:2") == pytest.approx(0.8)
    assert view_change_score(None, "move_forward:2") == 0.0


def test_scored_by_hand(lmu_root):
    ds = build(lmu_root, "SparBench_tiny")
    result = ds.evaluate(ds.data.assign(prediction=[r[2] for r in ROWS]))
    m = result.metrics
    assert m["obj_spatial_relation_oo_accuracy"] == pytest.approx(0.5)
    assert m["position_matching_accuracy"] == pytest.approx(1.0)
    assert m["depth_prediction_oc_MRA:.5:.95:.05"] == pytest.approx(1.0)
    assert m["distance_prediction_oo_MRA:.5:.95:.05"] == pytest.approx(0.8)
    assert m["view_change_infer_vci_metric"] == pytest.approx(0.48)
    assert m["overall"] == pytest.approx((0.5 + 1 + 1 + 0.8 + 0.48) / 5)
    assert (m["Low"], m["Middle"], m["High"]) == pytest.approx((0.9, 0.74, 0.5))
    assert list(m)[:4] == ["overall", "Low", "Middle", "High"]
    assert result.primary == "overall" and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics == pytest.approx(m)


def test_an_unknown_task_is_one_line(lmu_root):
    ds = build(lmu_root, rows=[("room_layout", "A", "A")])
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field task: unknown SPAR-Bench task 'room_layout'"):
        ds.build_prompt(0)
    with pytest.raises(DatasetError, match=r"SparBench.tsv: .*row index 0, field task"):
        ds.evaluate(ds.data.assign(prediction=["A"]))
