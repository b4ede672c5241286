"""GroundingME as VLMEvalKit scores it (vlmeval/dataset/groundingme.py at e8e78f05): the box read, the IoU taken as
given and scaled to the image, Rejection rows, and the figures worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.groundingme import best_iou, read_box, score_groundingme


@pytest.mark.parametrize(("reply", "box"), [
    ('{"bbox_2d": [10, 20, 110, 220]}', [10, 20, 110, 220]), ('Found: {"bbox_2d": null}', [0, 0, 0, 0]),
    ("box (1, 2, 3, 4) or 5, 6, 7, 8", [5, 6, 7, 8]), ('{"bbox_2d": [1, 2, 3]} 9 9 9 9', [9, 9, 9, 9]),
    ("no box", [0, 0, 0, 0]),
])  # fmt: skip
def test_the_box_is_read(reply, box):
    assert read_box(reply) == box


def test_iou_as_given_or_scaled():
    gold = [100.0, 100.0, 300.0, 300.0]
    assert best_iou(gold, [100, 100, 300, 300], 640, 480) == 1.0
    # half the width overlaps: 100 x 200 over 200 x 200 + 200 x 200 - 100 x 200 -> 1/3
    assert best_iou(gold, [200, 100, 400, 300], 640, 480) == pytest.approx(1 / 3)
    # fractions of a 1000 x 1000 image: 0.1..0.3 -> 100..300
    assert best_iou(gold, [0.1, 0.1, 0.3, 0.3], 1000, 1000) == pytest.approx(1.0)
    # 0-999 coordinates on a 999 x 999 image are the pixels themselves
    assert best_iou(gold, [100, 100, 300, 300], 999, 999) == 1.0
    assert best_iou([0.0] * 4, [0, 0, 0, 0], 10, 10) == 1.0 and best_iou([0.0] * 4, [1, 1, 2, 2], 10, 10) == 0.0


def test_figures():
    def row(index, l1, l2, answer, prediction):
        return {"index": index, "subtask_l1": l1, "subtask_l2": l2, "answer": answer, "width": 640, "height": 480,
                "prediction": prediction}  # fmt: skip

    df = pd.DataFrame([
        row(1, "Attribute", "color", "[100, 100, 300, 300]", '{"bbox_2d": [100, 100, 300, 300]}'),  # IoU 1
        row(2, "Attribute", "", "[100, 100, 300, 300]", '{"bbox_2d": [200, 100, 400, 300]}'),  # IoU 1/3
        row(3, "Rejection", "", "", '{"bbox_2d": null}'),  # right: no box
        row(4, "Rejection", "", "", None),  # failed call: a miss (VLMEvalKit: right)
    ])  # fmt: skip
    result = score_groundingme(df)
    assert result.metrics == pytest.approx({
        "IoU": (1 + 1 / 3 + 1 + 0) / 4, "ACC@0.5": 0.5, "ACC@0.75": 0.5, "ACC@0.9": 0.5,
        "Attribute_ACC@0.5": 0.5, "Attribute_ACC@0.75": 0.5, "Attribute_ACC@0.9": 0.5,
        "Rejection_ACC@0.5": 0.5, "Rejection_ACC@0.75": 0.5, "Rejection_ACC@0.9": 0.5,
        "Attribute_color_ACC@0.5": 1.0})  # fmt: skip
    assert result.vlmevalkit.metrics["ACC@0.5"] == 0.75 and result.counts["inference_errors"] == 1
    with pytest.raises(ValueError, match="row index 1, field answer: 'oops'"):
        score_groundingme(df.assign(answer=["oops", "", "", ""]))


def test_the_prompt_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "GroundingME.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "the red cup",
                                              "answer": "[1, 2, 30, 20]", "width": 32, "height": 24,
                                              "subtask_l1": "Attribute"}])  # fmt: skip
    ds = build_dataset("GroundingME", root=lmu_root, progress=False, keep_local_tsv=True)
    text = ds.build_prompt(0)[-1]["value"]
    assert text.startswith("All spatial relationships are defined from the viewer's perspective, where 'front' means "
                           "closer to the viewer")  # fmt: skip
    assert "statement describes:\nthe red cup\nEnsure that all details" in text
    assert text.endswith('{"bbox_2d": [x1, y1, x2, y2]}. If no matching object is found, output {"bbox_2d": null}.')
    assert ds.evaluate(ds.data.assign(prediction=['{"bbox_2d": [1, 2, 30, 20]}'])).metrics["ACC@0.9"] == 1.0
