"""GUI grounding scoring (vlmkit.scoring.benchmarks.gui_grounding) worked by hand from VLMEvalKit's rules
(vlmeval/dataset/GUI/screenspot.py, screenspot_pro.py, osworld_g.py at e8e78f05): target boxes per layout, the
edges of a box, the figures and their weighting, the counts, notes and per-row table, and VLMEvalKit's figure with
the rows it reads otherwise. Screenshots are 1000x500 so that x and y scale differently."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.gui_grounding import LAYOUTS, inside, score_gui_grounding, summary, target_box

SIZE = (1000, 500)


def frame(rows: list[dict], size: tuple[int, int] = SIZE) -> pd.DataFrame:
    return pd.DataFrame([{"index": i + 1, "image_width": size[0], "image_height": size[1], **r}
                         for i, r in enumerate(rows)])  # fmt: skip


@pytest.mark.parametrize(
    ("layout", "cell", "box"),
    [
        # x, y, w, h with the last pixel inside: (200, 50, 200 + 301 - 1, 50 + 151 - 1) = (200, 50, 500, 200) px
        ("screenspot", "[200, 50, 301, 151]", (0.2, 0.1, 0.5, 0.4)),
        ("screenspot_pro", "[200, 50, 500, 200]", (0.2, 0.1, 0.5, 0.4)),  # x1, y1, x2, y2
        ("osworld_g", "[200, 50, 300, 150]", (0.2, 0.1, 0.5, 0.4)),  # x, y, w, h: (200, 50, 500, 200) px
        ("venusbench", "[200, 50, 500, 200]", (0.2, 0.1, 0.5, 0.4)),
        ("screenspot_pro", (200, 50, 500, 200), (0.2, 0.1, 0.5, 0.4)),  # a tuple cell
        ("screenspot_pro", [np.int64(200), np.int64(50), np.int64(500), np.int64(200)], (0.2, 0.1, 0.5, 0.4)),
        ("screenspot_pro", "  [200, 50, 500, 200]\n", (0.2, 0.1, 0.5, 0.4)),  # white space around the cell
        ("screenspot_pro", "[-1, -1, 500, 250]", (0.0, 0.0, 0.5, 0.5)),  # a -1 coordinate counts as 0
        ("screenspot", "[-1, -1, 51, 51]", (0.0, 0.0, 0.049, 0.098)),  # corners (-1, -1, 49, 49) px
        ("screenspot_pro", "[0, 0, 1000, 500]", (0.0, 0.0, 1.0, 1.0)),  # the whole screenshot is inside it
        ("osworld_g", "[0, 0, 1000, 600]", (0.0, 0.0, 1.0, 1.2)),  # OSWorld_G checks no range
        ("venusbench", "[-5, 0, 10, 10]", (-0.005, 0.0, 0.01, 0.02)),  # nor VenusBench-GD
        ("screenspot_pro", "[0, 0, 1001, 500]", None),  # past the right edge
        ("screenspot_pro", "[0, 0, 10, 501]", None),  # past the bottom edge
        ("screenspot_pro", "[-2, 0, 10, 10]", None),  # left of the screenshot
        ("screenspot", "[0, 0, 1002, 10]", None),  # x2 = 0 + 1002 - 1 = 1001 px: past the right edge
        ("screenspot_pro", "[1, 2, 3]", None),
        ("screenspot_pro", "[1, 'a', 3, 4]", None),
        ("screenspot_pro", "abc", None),
        ("screenspot_pro", "7", None),
        ("screenspot_pro", "[1, 2", None),
        ("screenspot_pro", None, None),
    ],
)
def test_the_target_box_of_each_layout(layout, cell, box):
    got = target_box(cell, *SIZE, LAYOUTS[layout])
    assert got == (None if box is None else pytest.approx(box))


def test_a_screenspot_box_ends_on_its_last_pixel_in_both_directions():
    # [0, 0, 1001, 10]: x2 = 1000 px (inside); [0, 0, 10, 501]: y2 = 500 px (inside); one more is outside
    spec = LAYOUTS["screenspot"]
    assert target_box("[0, 0, 1001, 501]", *SIZE, spec) == pytest.approx((0.0, 0.0, 1.0, 1.0))
    assert target_box("[0, 0, 10, 502]", *SIZE, spec) is None
    assert target_box("[0, 0, 11, 11]", *SIZE, spec) == pytest.approx((0.0, 0.0, 0.01, 0.02))


@pytest.mark.parametrize(
    ("point", "hit"),
    [
        ((0.2, 0.25), True), ((0.5, 0.25), True), ((0.3, 0.1), True), ((0.3, 0.4), True), ((0.45, 0.25), True),
        ((0.19, 0.25), False), ((0.51, 0.25), False), ((0.3, 0.09), False), ((0.3, 0.41), False),
        ((0.15, 0.25), False),
    ],
)  # fmt: skip
def test_a_point_on_the_edge_of_the_box_is_inside(point, hit):
    assert inside(point, (0.2, 0.1, 0.5, 0.4)) is hit


def test_summary_of_stats_worked_by_hand():
    spec = LAYOUTS["screenspot_pro"]
    keys = ["CAD:text", "CAD:icon", "Office:text", "Office:icon", "Office:icon", "Office:richtext"]
    stats = [1, 0, -1, 1, 0, 1]
    categories = ["CAD", "CAD", "Office", "Office", "Office", "Office"]
    figures, per_key = summary(keys, stats, spec, categories)
    # Overall 3 of 6; one format error; Text [1, -1] (`richtext` is not `text`); Icon [0, 1, 0]; CAD [1, 0];
    # Office [-1, 1, 0, 1]
    assert figures == pytest.approx({"Overall_Accuracy": 50.0, "Format_Err_Rate": 100 / 6, "Text_Accuracy": 50.0,
                                     "Icon_Accuracy": 100 / 3, "CAD_Accuracy": 50.0, "Office_Accuracy": 50.0})
    assert per_key == {"CAD:text": 1, "CAD:icon": 1, "Office:text": 1, "Office:icon": 2, "Office:richtext": 1}
    weighted, _ = summary(keys, stats, spec, categories, weighted=True)
    # each key's list repeated once per row: Icon [0] + [1, 0] + [1, 0] = 2 of 5; Office [-1] + [1, 0] x 2 + [1]
    assert weighted == pytest.approx({"Overall_Accuracy": 50.0, "Format_Err_Rate": 100 / 6, "Text_Accuracy": 50.0,
                                      "Icon_Accuracy": 40.0, "CAD_Accuracy": 50.0, "Office_Accuracy": 50.0})
    assert summary([], [], spec, None) == ({}, {})


def test_screenspot_keys_carry_the_category_where_the_table_has_one():
    rows = [{"prediction": p, "bbox": "[200, 50, 301, 151]", "data_type": t, "category": c, "data_source": "s"}
            for p, t, c in [("pyautogui.click(x=300, y=100)", "text", "mobile"),
                            ("pyautogui.click(x=900, y=100)", "icon", "mobile"),
                            ("pyautogui.click(x=300, y=100)", "icon", "web")]]  # fmt: skip
    result = score_gui_grounding(frame(rows), "screenspot")
    assert result.per_sample["key"].tolist() == ["mobile:text", "mobile:icon", "web:icon"]
    assert result.metrics == pytest.approx({"Overall_Accuracy": 200 / 3, "Format_Err_Rate": 0.0,
                                            "Text_Accuracy": 100.0, "Icon_Accuracy": 50.0, "mobile_Accuracy": 50.0,
                                            "web_Accuracy": 100.0, "source:s": 200 / 3})  # fmt: skip


PRO_BOX = "[200, 50, 500, 200]"  # (0.2, 0.1, 0.5, 0.4) of 1000x500


def test_a_pro_table_counts_notes_and_rows_worked_by_hand():
    rows = [
        {"prediction": "pyautogui.click(x=300, y=100)", "bbox": PRO_BOX, "category": "CAD", "ui_type": "text",
         "application": "a"},  # pixels (0.3, 0.2): a hit
        {"prediction": "I do not know", "bbox": PRO_BOX, "category": "CAD", "ui_type": "icon", "application": "a"},
        {"prediction": None, "bbox": PRO_BOX, "category": "Office", "ui_type": "text", "application": "b"},
        {"prediction": "pyautogui.click(x=0.6, y=0.2)", "bbox": PRO_BOX, "category": "Office", "ui_type": "icon",
         "application": "b"},  # 0-1 (0.6, 0.2): right of the box
        {"prediction": "pyautogui.click(x=0.01, y=0.01)", "bbox": "[0, 0, 2000, 10]", "category": "Office",
         "ui_type": "icon", "application": "b"},  # a box past the screenshot: a named miss
    ]
    result = score_gui_grounding(frame(rows), "screenspot_pro")
    # 1 hit of 5; 1 unreadable reply (the failed call is not a format error); Text [1, 0]; Icon [-1, 0, 0]
    assert result.metrics == pytest.approx({"Overall_Accuracy": 20.0, "Format_Err_Rate": 20.0, "Text_Accuracy": 50.0,
                                            "Icon_Accuracy": 0.0, "CAD_Accuracy": 50.0, "Office_Accuracy": 0.0,
                                            "application:a": 50.0, "application:b": 0.0})  # fmt: skip
    assert result.counts == {"total": 5, "scored": 5, "hits": 1, "unread": 1, "inference_errors": 1,
                             "invalid_target": 1, "by_rule": 4, "by_judge": 0, "judge_errors": 0, "CAD:text:cnt": 1,
                             "CAD:icon:cnt": 1, "Office:text:cnt": 1, "Office:icon:cnt": 2}  # fmt: skip
    assert result.notes == [
        "click points read by VLMEvalKit's rule for this dataset (coords auto): a coordinate above 1 means pixels "
        "of the original screenshot, else 0-1",
        "Format_Err_Rate counts replies with no readable click point (VLMEvalKit reads them as (0, 0))",
        "1 row(s) have a target box that is not four numbers inside the screenshot (misses; VLMEvalKit stops on "
        "them): index 5",
    ]
    rows_out = result.per_sample
    assert list(rows_out.columns) == ["index", "key", "read", "method", "x", "y", "box", "hit"]
    assert rows_out["index"].tolist() == [1, 2, 3, 4, 5]
    assert rows_out["key"].tolist() == ["CAD:text", "CAD:icon", "Office:text", "Office:icon", "Office:icon"]
    assert rows_out["read"].tolist() == ["xy", "unread", "inference_error", "xy", "xy"]
    assert rows_out["method"].tolist() == ["click", "unparsed", "inference_error", "click", "click"]
    assert [None if pd.isna(v) else v for v in rows_out["x"]] == [0.3, None, None, 0.6, 0.01]
    assert [None if pd.isna(v) else v for v in rows_out["y"]] == [0.2, None, None, 0.2, 0.01]
    assert rows_out["box"].tolist() == [[0.2, 0.1, 0.5, 0.4]] * 4 + [None]
    assert rows_out["hit"].tolist() == [True, False, False, False, False]
    assert result.scorer == "gui_grounding" and result.primary == "Overall_Accuracy"
    assert result.table_suffix == "acc" and result.scale.kind == "percent"
    assert result.table.to_dict("records") == [result.metrics]
    figure = result.vlmevalkit
    # VLMEvalKit: (0, 0) for the unreadable reply (outside this box), no format error; weighted Icon [0] + [0, 0] x 2
    assert figure.metrics == pytest.approx({"Overall_Accuracy": 20.0, "Format_Err_Rate": 0.0, "Text_Accuracy": 50.0,
                                            "Icon_Accuracy": 0.0, "CAD_Accuracy": 50.0, "Office_Accuracy": 0.0})
    assert figure.primary == "Overall_Accuracy" and figure.differing == []
    assert figure.notes == [
        "VLMEvalKit reads `x=<n>, y=<n>` only (else the point (0, 0)) and its own rule for the numbers",
        "VLMEvalKit's Text, Icon and per-category accuracies weigh each category:type group by its row count "
        "(its lists are repeated once per row)",
        "VLMEvalKit stops on a target box outside the screenshot; the figure counts such rows as misses",
    ]


def test_vlmevalkits_figure_names_each_row_it_reads_otherwise():
    corner, small = "[-1, -1, 51, 51]", "[10, 10, 21, 21]"  # (0, 0, 0.049, 0.098) and (0.01, 0.02, 0.03, 0.06)
    rows = [{"prediction": p, "bbox": b, "data_type": "icon", "data_source": "s"} for p, b in [
        (None, corner),  # a failed call: a miss on both sides (and the rows after it still count)
        ("no idea", corner),  # vlmkit: no point; VLMEvalKit: (0, 0), inside
        ('{"point_2d": [20, 20]}', small),  # vlmkit: (0.02, 0.04), inside; VLMEvalKit: (0, 0), outside
        ("x=1.2.3, y=4", corner),  # neither reads a point: VLMEvalKit's float() refuses `1.2.3` (its format error)
        ("[500, 400]", corner),  # vlmkit: (0.5, 0.8), a miss; VLMEvalKit: (0, 0), inside
    ]]  # fmt: skip
    result = score_gui_grounding(frame(rows), "screenspot")
    assert result.per_sample["hit"].tolist() == [False, False, True, False, False]
    assert result.metrics == pytest.approx({"Overall_Accuracy": 20.0, "Format_Err_Rate": 40.0, "Icon_Accuracy": 20.0,
                                            "source:s": 20.0})  # fmt: skip
    figure = result.vlmevalkit
    # theirs [0, 1, 0, -1, 1]: 2 hits of 5, one format error; the single key `icon` weighs the same
    assert figure.metrics == pytest.approx({"Overall_Accuracy": 40.0, "Format_Err_Rate": 20.0, "Icon_Accuracy": 40.0})
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (2, "no point", "(0, 0)", 0.0, 1.0),
        (3, "(0.02, 0.04)", "(0, 0)", 1.0, 0.0),
        (5, "(0.5, 0.8)", "(0, 0)", 0.0, 1.0),
    ]
    assert len(figure.notes) == 2  # no box outside the screenshot


def test_a_rows_min_pixels_enlarges_the_resized_frame():
    # 100x100, Qwen2-VL rule: default limits -> 112x112 (100 / 28 rounds to 4); min_pixels 40000 -> beta =
    # sqrt(40000 / 10000) = 2, ceil(200 / 28) * 28 = 224: 224x224. (112, 112) is (1, 1) of the first and
    # (0.5, 0.5) of the second; the box (0.4, 0.4, 0.6, 0.6) holds only the second.
    from vlmkit.scoring.benchmarks.gui_points import Convention

    reply = "pyautogui.click(x=112, y=112)"
    rows = [{"prediction": reply, "bbox": "[40, 40, 60, 60]", "category": "c", "ui_type": "text", "min_pixels": m}
            for m in (40000, "n/a", None)]  # fmt: skip
    result = score_gui_grounding(frame(rows, size=(100, 100)), "screenspot_pro", Convention("abs"))
    assert result.per_sample["hit"].tolist() == [True, False, False]
    assert result.per_sample["x"].tolist() == pytest.approx([0.5, 1.0, 1.0])


def test_bad_tables_are_refused_in_one_line_naming_what():
    with pytest.raises(ValueError) as err:
        score_gui_grounding(frame([{"prediction": "x"}]), "nope")
    assert str(err.value) == ("GUI grounding scoring: layout 'nope'; choose one of screenspot, screenspot_pro, "
                              "osworld_g, venusbench")
    no_category = frame([{"prediction": "x", "bbox": PRO_BOX, "ui_type": "text"}])
    with pytest.raises(ValueError, match=r"^GUI grounding scoring: the predictions table has no `category` column"):
        score_gui_grounding(no_category, "screenspot_pro")
    empty = frame([{"prediction": "x", "bbox": PRO_BOX, "ui_type": "text", "category": "c"}]).iloc[:0]
    with pytest.raises(ValueError, match=r"^GUI grounding scoring: the predictions table has no rows$"):
        score_gui_grounding(empty, "screenspot_pro")
