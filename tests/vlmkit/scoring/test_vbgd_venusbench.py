"""VBGD and VenusBench-GD (vlmeval/dataset/GUI/vbgd.py, venusbench.py at e8e78f05), and VLMEvalKit's own arithmetic
for the GUI Text/Icon/category figures: each `category:type` list of stats is repeated once per row before the mean
(`[v for k, v in stats.items() if ... for x in v]`, chained). Every figure below is worked by hand."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, write_tsv
from vlmkit.scoring.benchmarks.gui_grounding import score_gui_grounding

INSIDE, OUTSIDE = "pyautogui.click(x=150, y=150)", "pyautogui.click(x=250, y=150)"
BOX = "[100, 100, 200, 200]"  # x1, y1, x2, y2 on 1000x1000: (0.1, 0.1, 0.2, 0.2)


def frame(rows: list[dict], size=(1000, 1000)) -> pd.DataFrame:
    return pd.DataFrame([{"index": i, "image_width": size[0], "image_height": size[1], **r}
                         for i, r in enumerate(rows)])


def test_vlmevalkits_text_icon_and_category_figures_weigh_each_group_by_its_rows():
    rows = [  # VLMEvalKit's stats: CAD:text [1], CAD:icon [0], Office:text [1], Office:icon [1, 0]
        {"prediction": INSIDE, "bbox": BOX, "category": "CAD", "ui_type": "text"},
        {"prediction": OUTSIDE, "bbox": BOX, "category": "CAD", "ui_type": "icon"},
        {"prediction": INSIDE, "bbox": BOX, "category": "Office", "ui_type": "text"},
        {"prediction": INSIDE, "bbox": BOX, "category": "Office", "ui_type": "icon"},
        {"prediction": OUTSIDE, "bbox": BOX, "category": "Office", "ui_type": "icon"},
    ]
    result = score_gui_grounding(frame(rows), "screenspot_pro")
    mine, theirs = result.metrics, result.vlmevalkit.metrics
    assert mine["Icon_Accuracy"] == pytest.approx(100 / 3) and mine["Office_Accuracy"] == pytest.approx(200 / 3)
    # Icon: [0] + [1, 0] twice = 2 of 5; Office: [1] + [1, 0] twice = 3 of 5; CAD: [1] + [0]; Text: [1] + [1]
    assert theirs["Icon_Accuracy"] == pytest.approx(40.0) and theirs["Office_Accuracy"] == pytest.approx(60.0)
    assert theirs["CAD_Accuracy"] == 50.0 and theirs["Text_Accuracy"] == 100.0
    assert theirs["Overall_Accuracy"] == mine["Overall_Accuracy"] == pytest.approx(60.0)


def test_venusbench_has_no_range_check_and_no_text_icon_figures():
    rows = [
        {"prediction": INSIDE, "bbox": BOX, "category": "Web", "ui_type": "text"},
        # a box past the screenshot's edge is kept (VenusBench_GD does not check); 0.95 is 0-1: inside
        {"prediction": "pyautogui.click(x=0.95, y=0.95)", "bbox": "[900, 900, 1100, 1100]", "category": "Web",
         "ui_type": "icon"},
        {"prediction": "pyautogui.click(x=500, y=500)", "bbox": BOX, "category": "Mobile", "ui_type": "icon"},
    ]  # fmt: skip
    result = score_gui_grounding(frame(rows), "venusbench")
    assert result.metrics == pytest.approx({"Overall_Accuracy": 200 / 3, "Format_Err_Rate": 0.0,
                                            "Mobile_Accuracy": 0.0, "Web_Accuracy": 100.0})  # fmt: skip
    assert result.counts["invalid_target"] == 0 and result.counts["Web:icon:cnt"] == 1
    # VLMEvalKit stops at its per-category accuracy: its figure keeps what it computed before
    assert result.vlmevalkit.metrics == pytest.approx({"Overall_Accuracy": 200 / 3, "Format_Err_Rate": 0.0})
    assert any("TypeError" in note for note in result.vlmevalkit.notes)


def test_the_catalog_rows():
    rows = catalog_rows()
    assert rows["VBGD"].status == "ok" and rows["VBGD"].kwargs == {"layout": "screenspot_pro"}
    assert rows["VenusBench-GD"].status == "ok" and rows["VenusBench-GD"].kwargs == {"layout": "venusbench"}


def test_venusbench_by_name_reads_the_screenshot_size(lmu_root: Path):
    out = io.BytesIO()
    Image.new("RGB", (800, 400), "white").save(out, format="PNG")
    write_tsv(lmu_root / "VenusBench-GD.tsv", [
        {"index": 0, "image": b64(out.getvalue()), "image_path": "a.png", "question": "open settings",
         "bbox": "[400, 200, 480, 240]", "category": "Web", "ui_type": "icon"},
        {"index": 1, "image": "0", "image_path": "a.png", "question": "close", "bbox": "[0, 0, 80, 40]",
         "category": "Mobile", "ui_type": "text"},
    ])  # fmt: skip
    ds = build_dataset("VenusBench-GD", root=lmu_root, progress=False, keep_local_tsv=True)
    system, user = ds.build_prompt(0)
    assert system["role"] == "system" and user["content"][-1]["value"].endswith(":\nopen settings")
    # (440, 220) px of 800x400 is (0.55, 0.55): inside row 0's box; (0.5, 0.5) is outside row 1's
    replies = ["pyautogui.click(x=440, y=220)", "pyautogui.click(x=0.5, y=0.5)"]
    result = ds.evaluate(ds.data.assign(prediction=replies))
    assert result.metrics["Web_Accuracy"] == 100.0 and result.metrics["Mobile_Accuracy"] == 0.0
