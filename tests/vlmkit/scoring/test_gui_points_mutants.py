"""The GUI click reader and coordinate conventions (vlmkit.scoring.benchmarks.gui_points), worked by hand: how each
reply reads, VLMEvalKit's `auto` rule at its boundary (a coordinate above 1 is pixels: vlmeval/dataset/GUI/
screenspot.py at e8e78f05), the per-row resize limits, the option checks and the one-line descriptions."""

from __future__ import annotations

import pytest

from vlmkit.scoring.benchmarks.gui_points import Click, Convention, read_click


def test_each_reply_form_reads_its_point_and_how():
    assert read_click("pyautogui.click(x=3, y=4)") == Click(3.0, 4.0, "xy")
    assert read_click("start_box='(0.25,0.75)'") == Click(0.25, 0.75, "point")
    assert read_click("[10, 20, 30, 40]") == Click(20.0, 30.0, "box")  # a box stands for its centre
    assert read_click("(100,200),(300,400)") == Click(200.0, 300.0, "box")  # two pairs starting where one pair does
    assert read_click("see (5, 6) then [0, 0, 10, 10]") == Click(5.0, 6.0, "point")  # the earliest
    assert read_click("nothing here") is None


def test_auto_reads_pixels_only_above_1():
    pixels = Convention()  # VLMEvalKit's ScreenSpot rule
    assert pixels.to_unit(Click(1, 0.5, "xy"), 1000, 500) == (1, 0.5)  # 1 is not above 1: 0-1
    assert pixels.to_unit(Click(0.5, 1, "xy"), 1000, 500) == (0.5, 1)
    assert pixels.to_unit(Click(2, 0.5, "xy"), 1000, 500) == (0.002, 0.001)  # either above 1: both pixels
    assert pixels.to_unit(Click(0.5, 2, "xy"), 1000, 500) == (0.0005, 0.004)
    osworld = Convention(vlmevalkit_rule="norm1000")
    assert osworld.to_unit(Click(500, 250, "xy"), 1000, 500) == (0.5, 0.25)
    assert Convention("norm1000").to_unit(Click(0.5, 1, "xy"), 1000, 500) == (0.0005, 0.001)
    assert Convention("norm1").to_unit(Click(3, 4, "xy"), 1000, 500) == (3, 4)


def test_a_rows_min_pixels_reaches_the_resize():
    # 100x100: default limits -> 112x112 (100 / 28 rounds to 4); min_pixels 40000 -> beta 2 -> ceil(200 / 28) * 28
    # = 224; max_pixels 3136 (56x56) brings it down: beta sqrt(10000 / 3136) -> floor(56 / 28) * 28 = 56
    abs_ = Convention("abs")
    assert abs_.frame(100, 100) == (112, 112)
    assert abs_.frame(100, 100, min_pixels=40000) == (224, 224)
    assert abs_.frame(100, 100, max_pixels=3136) == (56, 56)
    assert Convention("abs", min_pixels=40000, max_pixels=1003520).frame(100, 100) == (224, 224)
    assert abs_.to_unit(Click(112, 56, "xy"), 100, 100, 40000, None) == (0.5, 0.25)
    assert abs_.to_unit(Click(112, 56, "xy"), 100, 100) == (1.0, 0.5)
    assert Convention("abs", smart_resize=False).frame(100, 50) == (100, 50)


def test_pixel_limits_are_checked():
    Convention(min_pixels=1, max_pixels=1)  # the smallest allowed, and min equal to max
    Convention(min_pixels=5, max_pixels=5)
    with pytest.raises(ValueError) as err:
        Convention(min_pixels=0)
    assert str(err.value) == "min_pixels 0 and max_pixels 1003520: need 0 < min <= max"
    with pytest.raises(ValueError, match=r"^min_pixels 6 and max_pixels 5: need 0 < min <= max$"):
        Convention(min_pixels=6, max_pixels=5)


def test_unknown_options_are_named_with_the_choices():
    with pytest.raises(ValueError) as err:
        Convention("pixels")
    assert str(err.value) == "coords 'pixels'; choose one of abs, norm1000, norm1, auto"
    with pytest.raises(ValueError) as err:
        Convention(vlmevalkit_rule="other")
    assert str(err.value) == "vlmevalkit_rule 'other'; choose one of pixels_over_1, norm1000"


def test_each_convention_describes_itself_in_one_line():
    assert Convention().describe() == ("click points read by VLMEvalKit's rule for this dataset (coords auto): "
                                       "a coordinate above 1 means pixels of the original screenshot, else 0-1")
    assert Convention("abs", source="convention from --coords").describe() == (
        "click points read as absolute pixels of the image resized by the Qwen2-VL rule (coords abs, min_pixels "
        "3136, max_pixels 1003520, unless the row says); convention from --coords")
    assert Convention("abs", smart_resize=False).describe() == (
        "click points read as absolute pixels of the original screenshot (coords abs, no resize)")
    assert Convention("norm1000").describe() == (
        "click points read as 0-1000 of the screenshot's width and height (coords norm1000)")
    assert Convention("norm1").describe() == (
        "click points read as 0-1 of the screenshot's width and height (coords norm1)")
