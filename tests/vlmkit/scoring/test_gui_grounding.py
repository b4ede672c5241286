"""GUI grounding scoring (ScreenSpot, ScreenSpot_v2, ScreenSpot_Pro, OSWorld_G): click points read in each model
family's convention, VLMEvalKit's boxes and figures, worked by hand from vlmeval/dataset/GUI/*.py at e8e78f05."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.gui_grounding import score_gui_grounding
from vlmkit.core.qwen_resize import smart_resize
from vlmkit.scoring.benchmarks.gui_points import Click, Convention, read_click


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("pyautogui.click(x=12.5, y=30)", Click(12.5, 30, "xy")),
        ("pyautogui.click(x='7', y='8')", Click(7, 8, "xy")),
        ('<point x="61.5" y="40.6" alt="OK">OK</point>', Click(61.5, 40.6, "xy")),
        ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [640, 360]}}'
         "</tool_call>", Click(640, 360, "point")),
        ('```json\n[{"bbox_2d": [10, 20, 30, 40], "label": "OK"}]\n```', Click(20, 30, "box")),
        ("<|box_start|>(100,200),(300,400)<|box_end|>", Click(200, 300, "box")),
        ("click(start_box='(0.25,0.75)')", Click(0.25, 0.75, "point")),
        ("[[0.125, 0.25, 0.375, 0.5]]", Click(0.25, 0.375, "box")),  # exact in binary
        ("The button is at (5, 6); its box is [0, 0, 10, 10]", Click(5, 6, "point")),  # the earliest wins
    ],
)
def test_click_points_are_read_in_each_familys_format(reply, expected):
    assert read_click(reply) == expected


@pytest.mark.parametrize("reply", ["I cannot find it", "", "x=, y=", "(1, 2, 3)"])
def test_a_reply_without_a_point_reads_none(reply):
    assert read_click(reply) is None


def test_smart_resize_equals_the_qwen2_vl_processors_rule():
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize as theirs

    # by hand: 2560x1440 has 3686400 pixels > 1003520; beta = sqrt(3686400 / 1003520) = 1.9166;
    # height floor(1440 / 1.9166 / 28) * 28 = 26 * 28 = 728, width floor(2560 / 1.9166 / 28) * 28 = 47 * 28 = 1316
    assert smart_resize(1440, 2560) == (728, 1316)
    assert smart_resize(500, 1000) == (504, 1008)  # rounded to multiples of 28 only: 17.86 -> 18, 35.71 -> 36
    assert smart_resize(20, 30) == (56, 84)  # brought up to min_pixels 3136: beta = sqrt(3136 / 600)
    for height, width in [(1080, 1920), (2160, 3840), (812, 375), (768, 1366), (100, 7000), (28, 28), (3000, 2000)]:
        for limits in [{}, {"min_pixels": 256 * 28 * 28, "max_pixels": 1280 * 28 * 28}, {"max_pixels": 12845056}]:
            assert smart_resize(height, width, **limits) == tuple(theirs(height, width, **limits)), (height, width)


def frame(rows, layout="screenspot_pro", size=(2560, 1440)):
    base = {"image_width": size[0], "image_height": size[1]}
    return pd.DataFrame([{**base, "index": i + 1, **row} for i, row in enumerate(rows)])


# ScreenSpot_Pro: box [1280, 720, 1400, 800] (x1, y1, x2, y2) on 2560x1440 = (0.5, 0.5, 0.546875, 0.5556) of it
PRO_BOX = "[1280, 720, 1400, 800]"


def pro_row(prediction, **extra):
    return {"prediction": prediction, "bbox": PRO_BOX, "category": "CAD", "ui_type": "icon", "application": "blender",
            **extra}  # fmt: skip


@pytest.mark.parametrize(
    ("coords", "reply", "hit"),
    [
        # Qwen2.5-VL: pixels of the resized 1316x728 image: (700/1316, 380/728) = (0.532, 0.522): inside
        ("abs", "pyautogui.click(x=700, y=380)", True),
        # the same numbers as pixels of the original (VLMEvalKit's rule, auto): (0.273, 0.264): outside
        ("auto", "pyautogui.click(x=700, y=380)", False),
        # 0-1000 (Qwen2-VL): a box whose centre is (520, 525) -> (0.52, 0.525): inside
        ("norm1000", "<|box_start|>(510,515),(530,535)<|box_end|>", True),
        ("norm1", "[0.52, 0.52]", True),
        ("norm1", "[0.56, 0.52]", False),  # x 0.56 > 0.546875
        # auto: numbers not above 1 are 0-1 (VLMEvalKit's rule)
        ("auto", "pyautogui.click(x=0.51, y=0.51)", True),
        # auto: original pixels (1300, 740) -> (0.5078, 0.5139): inside
        ("auto", "pyautogui.click(x=1300, y=740)", True),
    ],
)
def test_the_click_is_read_in_the_convention_given(coords, reply, hit):
    result = score_gui_grounding(frame([pro_row(reply)]), "screenspot_pro", Convention(coords))
    assert result.per_sample["hit"].tolist() == [hit]
    assert result.metrics["Overall_Accuracy"] == (100.0 if hit else 0.0)
    assert f"coords {coords}" in result.notes[0]


def test_a_rows_pixel_limits_change_the_resized_frame():
    # max_pixels 3686400 (the whole screenshot): smart_resize(1440, 2560) = (1428, 2548); (1300, 740) there is
    # (0.5102, 0.5182): inside. With the default limits the frame is 1316x728: (0.988, 1.016): outside.
    rows = [pro_row("pyautogui.click(x=1300, y=740)", max_pixels=3686400),
            pro_row("pyautogui.click(x=1300, y=740)")]  # fmt: skip
    rows[1]["max_pixels"] = None
    result = score_gui_grounding(frame(rows), "screenspot_pro", Convention("abs"))
    assert result.per_sample["hit"].tolist() == [True, False]
    no_resize = score_gui_grounding(frame(rows), "screenspot_pro", Convention("abs", smart_resize=False))
    assert no_resize.per_sample["hit"].tolist() == [True, True]  # (0.5078, 0.5139) of the original


def test_screenspot_pro_figures_by_category_and_type():
    # hand: 5 rows; CAD:text right, CAD:icon wrong, Office:text right, Office:icon right, Office:icon unreadable
    box = "[100, 100, 200, 200]"  # on 1000x1000: (0.1, 0.1, 0.2, 0.2)
    inside, outside = "pyautogui.click(x=150, y=150)", "pyautogui.click(x=250, y=150)"
    rows = [
        {"prediction": inside, "bbox": box, "category": "CAD", "ui_type": "text", "application": "autocad"},
        {"prediction": outside, "bbox": box, "category": "CAD", "ui_type": "icon", "application": "autocad"},
        {"prediction": inside, "bbox": box, "category": "Office", "ui_type": "text", "application": "word"},
        {"prediction": inside, "bbox": box, "category": "Office", "ui_type": "icon", "application": "excel"},
        {"prediction": "I do not know", "bbox": box, "category": "Office", "ui_type": "icon", "application": "excel"},
    ]
    result = score_gui_grounding(frame(rows, size=(1000, 1000)), "screenspot_pro")
    m = result.metrics
    assert m["Overall_Accuracy"] == pytest.approx(60.0)  # 3 of 5
    assert m["Text_Accuracy"] == pytest.approx(100.0)  # 2 of 2
    assert m["Icon_Accuracy"] == pytest.approx(100 / 3)  # 1 of 3
    assert m["CAD_Accuracy"] == pytest.approx(50.0) and m["Office_Accuracy"] == pytest.approx(200 / 3)
    assert m["Format_Err_Rate"] == pytest.approx(20.0)  # vlmkit: 1 reply holds no point
    assert m["application:excel"] == pytest.approx(50.0) and m["application:word"] == 100.0
    assert result.counts["CAD:text:cnt"] == 1 and result.counts["Office:icon:cnt"] == 2
    assert result.counts["unread"] == 1
    theirs = result.vlmevalkit.metrics
    # VLMEvalKit reads "I do not know" as (0, 0): a miss, not a format error
    assert theirs["Overall_Accuracy"] == pytest.approx(60.0) and theirs["Format_Err_Rate"] == 0.0
    assert result.vlmevalkit.differing == []


def test_screenspot_boxes_are_x_y_w_h_with_the_last_pixel_inside():
    # [100, 50, 201, 101] on 1000x500 -> (100, 50, 300, 150) px -> (0.1, 0.1, 0.3, 0.3)
    rows = [{"prediction": f"pyautogui.click(x={x}, y=100)", "bbox": "[100, 50, 201, 101]", "data_type": "text",
             "data_source": "shop"} for x in (300, 301)]  # fmt: skip
    result = score_gui_grounding(frame(rows, size=(1000, 500)), "screenspot")
    assert result.per_sample["hit"].tolist() == [True, False]
    assert result.metrics["Text_Accuracy"] == 50.0 and "Icon_Accuracy" not in result.metrics  # no icon rows
    assert result.metrics["source:shop"] == 50.0
    assert result.counts["text:cnt"] == 2


def test_osworld_g_reads_0_1000_as_vlmevalkit_does():
    # [100, 50, 200, 100] x, y, w, h on 1000x500 -> (100, 50, 300, 150) px -> (0.1, 0.1, 0.3, 0.3)
    rows = [{"prediction": "pyautogui.click(x=200, y=200)", "bbox": "[100, 50, 200, 100]", "category": "text_matching",
             "ui_type": "text", "application": "gimp"}]  # fmt: skip
    auto = score_gui_grounding(frame(rows, size=(1000, 500)), "osworld_g")
    assert auto.per_sample["hit"].tolist() == [True]  # (0.2, 0.2)
    assert auto.vlmevalkit.metrics["Overall_Accuracy"] == 100.0
    pixels = score_gui_grounding(frame(rows, size=(1000, 500)), "osworld_g", Convention("abs", smart_resize=False))
    assert pixels.per_sample["hit"].tolist() == [False]  # (0.2, 0.4)
    assert pixels.vlmevalkit.metrics["Overall_Accuracy"] == 100.0  # VLMEvalKit divides by 1000 whatever
    assert [d.index for d in pixels.vlmevalkit.differing] == [1]


def test_vlmevalkits_figure_lists_the_rows_it_reads_otherwise():
    # the box (-1, -1, w 51, h 51) touches the top-left corner: (0, 0, 49, 49) px on 1000x500 = (0, 0, .049, .098)
    rows = [
        {"prediction": "no idea", "bbox": "[-1, -1, 51, 51]", "data_type": "icon", "data_source": "s"},
        {"prediction": '{"point_2d": [20, 20]}', "bbox": "[-1, -1, 51, 51]", "data_type": "icon", "data_source": "s"},
        {"prediction": None, "bbox": "[-1, -1, 51, 51]", "data_type": "icon", "data_source": "s"},
    ]
    result = score_gui_grounding(frame(rows, size=(1000, 500)), "screenspot")
    # vlmkit: no point (format error), (20, 20) px -> (0.02, 0.04) inside, a failed call: a miss
    assert result.per_sample["hit"].tolist() == [False, True, False]
    assert result.per_sample["read"].tolist() == ["unread", "point", "inference_error"]
    assert result.counts["inference_errors"] == 1
    # VLMEvalKit: (0, 0) for both replies -> inside; the failed call is a miss on both sides
    assert result.vlmevalkit.metrics["Overall_Accuracy"] == pytest.approx(200 / 3)
    assert result.metrics["Overall_Accuracy"] == pytest.approx(100 / 3)
    assert [d.index for d in result.vlmevalkit.differing] == [1]


def test_a_box_outside_the_screenshot_is_a_named_miss():
    rows = [{"prediction": "pyautogui.click(x=5, y=5)", "bbox": "[0, 0, 2000, 10]", "category": "CAD",
             "ui_type": "text"}]  # fmt: skip
    result = score_gui_grounding(frame(rows, size=(1000, 500)), "screenspot_pro")
    assert result.counts["invalid_target"] == 1 and not result.per_sample["hit"][0]
    assert any("index 1" in note for note in result.notes)
    assert math.isclose(result.metrics["Overall_Accuracy"], 0.0)


def test_a_missing_column_is_named():
    with pytest.raises(ValueError, match="ui_type"):
        score_gui_grounding(frame([{"prediction": "x", "bbox": PRO_BOX, "category": "CAD"}]), "screenspot_pro")


def test_each_row_says_how_it_was_read_in_the_reports_words():
    """`method` is what the report's sample filters read: a reply with no click is `unparsed`, not a plain miss."""
    rows = [pro_row("pyautogui.click(x=0.51, y=0.51)"), pro_row("I cannot find it")]
    result = score_gui_grounding(frame(rows), "screenspot_pro", Convention("auto"))
    assert result.per_sample["method"].tolist() == ["click", "unparsed"]
    assert result.per_sample["hit"].tolist() == [True, False]
