"""RefCOCO as VLMEvalKit scores it (vlmeval/dataset/refcoco.py at e8e78f05): boxes read in 0-1, 0-1000 and pixel
coordinates, gold boxes from the bbox columns or the answer column, IoU >= 0.5, per-split and macro figures, all
worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.refcoco import iou, read_box, score_refcoco, split_of, to_absolute


@pytest.mark.parametrize(("text", "box"), [
    ("The box is [10, 20, 30, 40].", [10, 20, 30, 40]), ("<box>(12,34),(56,78)</box>", [12, 34, 56, 78]),
    ("[0.1 0.2 0.3 0.4] then [5, 6, 7, 8]", [0.1, 0.2, 0.3, 0.4]), ("x 1 2 3", None), ("", None),
])  # fmt: skip
def test_the_box_is_read(text, box):
    assert read_box(text) == box


@pytest.mark.parametrize(("box", "pixels"), [
    ([0.1, 0.2, 0.5, 0.6], [20, 20, 100, 60]),  # relative
    ([100, 200, 500, 600], [20, 20, 100, 60]),  # 0-1000 grid
    ([1200, 50, 1100, 90], [200, 50, 200, 90]),  # pixels (largest > 1000), clipped to width 200
    ([-0.1, 0, 1.2, 1], [0, 0, 200, 100]),  # relative, clipped
])  # fmt: skip
def test_to_absolute(box, pixels):
    assert to_absolute(box, 200, 100) == pytest.approx(pixels)
    assert to_absolute([1200, 50, 1100, 90], 1500, 100) == [1100, 50, 1200, 90]  # pixels, the pair put in order


def test_iou_and_split_names():
    assert iou([0, 0, 100, 50], [0, 0, 100, 100]) == 0.5
    assert iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0  # touching edges
    assert split_of("RefCOCO+ testA") == "RefCOCO+_testA" and split_of("RefCOCOg val") == "RefCOCOg_val"
    assert split_of("RefCOCO") == "RefCOCO" and split_of("RefCOCO test-b") == "RefCOCO_testB" and split_of("") is None


def _box_rows() -> pd.DataFrame:
    rows = [  # width 200, height 100; gold boxes in pixels
        ("RefCOCO val", [20, 20, 100, 60], "[100, 200, 500, 600]"),  # 0-1000 -> the gold box: IoU 1
        ("RefCOCO val", [0, 0, 100, 100], "[0.0, 0.0, 0.5, 0.5]"),  # [0,0,100,50]: IoU 0.5, a hit
        ("RefCOCO+ testA", [0, 0, 100, 100], "bbox 0 0 50 100"),  # 0-1000 -> [0,0,10,10]: IoU 0.01
        ("RefCOCO+ testA", [0, 0, 100, 100], None),  # failed call
        ("RefCOCOg test", [0, 0, 100, 100], "[0, 0, 0.5, 1]"),  # relative -> the gold box
    ]
    return pd.DataFrame([{"index": i, "category": c, "width": 200, "height": 100, "bbox_x1": g[0], "bbox_y1": g[1],
                          "bbox_x2": g[2], "bbox_y2": g[3], "prediction": p} for i, (c, g, p) in enumerate(rows)])


def test_scores_per_split_and_their_mean():
    result = score_refcoco(_box_rows())
    m = result.metrics
    assert m["RefCOCO_val Precision@1"] == 100 and m["RefCOCO_val Average IoU"] == pytest.approx(0.75)
    assert m["RefCOCO+_testA Precision@1"] == 0 and m["RefCOCO+_testA Average IoU"] == pytest.approx(0.005)
    assert m["RefCOCOg_test Precision@1"] == 100 and m["RefCOCOg_test Average IoU"] == pytest.approx(1.0)
    assert m["Precision@1"] == pytest.approx(200 / 3) and m["Average IoU"] == pytest.approx((0.75 + 0.005 + 1) / 3)
    assert result.primary == "Precision@1" and result.counts["inference_errors"] == 1
    assert result.per_sample["hit"].tolist() == [True, True, False, False, True]
    assert result.vlmevalkit.metrics == pytest.approx(m)
    assert list(result.table["Split"]) == ["RefCOCO_val", "RefCOCO+_testA", "RefCOCOg_test", "Average"]


def test_gold_from_the_answer_column():
    # pixels: the column's largest value is > 1.5, so every answer is pixels (a relative one too, as VLMEvalKit does)
    df = pd.DataFrame([
        {"index": 0, "answer": "[20, 20, 100, 60]", "width": 200, "height": 100, "prediction": "[0.1,0.2,0.5,0.6]"},
        {"index": 1, "answer": "[0.1, 0.1, 0.5, 0.5]", "width": 200, "height": 100, "prediction": "[0.1,0.1,0.5,0.5]"},
    ])  # fmt: skip
    result = score_refcoco(df, "RefCOCO_local")
    # row 1: gold [0.1,0.1,0.5,0.5] pixels, reply [20,10,100,50] pixels: no overlap
    assert result.per_sample["iou"].tolist() == [1.0, 0.0]
    assert result.metrics["Precision@1"] == 50 and "RefCOCO_local Precision@1" in result.metrics  # no standard split
    # relative: every answer <= 1.5, so each is scaled by the row's width and height
    rel = df.assign(answer=["[0.1, 0.2, 0.5, 0.6]", "[0.1, 0.1, 0.5, 0.5]"], width=[200, 0])  # width 0 counts as 1
    # row 1: gold [0.1,10,0.5,50]; reply relative -> [0.1,10,0.5,50]
    assert score_refcoco(rel).per_sample["iou"].tolist() == pytest.approx([1.0, 1.0])


def test_the_prompt_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "RefCOCO.tsv", [
        {"index": 7, "image": b64(image_bytes()), "question": "Locate the man on the left.",
         "answer": "[10, 10, 50, 50]", "category": "RefCOCO testB", "width": 64, "height": 64},
    ])  # fmt: skip
    ds = build_dataset("RefCOCO", root=lmu_root, progress=False, keep_local_tsv=True)
    image, text = ds.build_prompt(0)
    assert image["type"] == "image" and text == {"type": "text", "value": "Locate the man on the left."}
    # the gold answer is pixels; a reply of numbers <= 1000 is read on the 0-1000 grid, as VLMEvalKit reads it
    result = ds.evaluate(ds.data.assign(prediction=["[156.25, 156.25, 781.25, 781.25]"]))
    assert result.metrics["RefCOCO_testB Precision@1"] == 100 and result.metrics["Precision@1"] == 100
    assert ds.evaluate(ds.data.assign(prediction=["[10, 10, 50, 50]"])).metrics["Precision@1"] == 0
