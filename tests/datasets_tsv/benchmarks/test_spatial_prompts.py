"""Each EASI spatial prompt style as a function of a row's cells, the texts assembled here by hand."""

from __future__ import annotations

import math

from datasets_tsv.benchmarks import spatial_prompts as sp


def test_column_options_are_the_filled_letter_columns_in_order():
    line = {"B": "two", "A": "one", "C": float("nan"), "D": None, "E": 5, "question": "q", "a": "lower"}
    assert sp.column_options(line) == [("A", "one"), ("B", "two"), ("E", "5")]


def test_site_lists_the_options_column_with_letters_and_colons():
    text = sp.STYLES["site"]({}, "Which?", ["red", "blue", "green"], 1)
    assert text == "Question: Which?\nOptions:\nA: red\nB: blue\nC: green\nGive me the answer letter directly. " \
                   "The best answer is:"
    assert sp.STYLES["site"]({}, "Q", None, 0) == "Question: Q\nOptions:\n\n" + sp.SITE_POST


def test_mmsi_with_hint_and_options_and_without_either():
    line = {"hint": "look left", "A": "x", "B": "y"}
    assert sp.STYLES["mmsi"](line, "Where?", None, 1) == (
        "Hint: look left\nWhere?\nOptions: A: x, B: y, \n" + sp.MMSI_POST
    )
    assert sp.STYLES["mmsi"]({"hint": math.nan}, "Where?", None, 1) == "Where?\n\n" + sp.MMSI_POST


def test_spatialviz_direct_and_cot_put_the_instruction_first():
    line = {"A": "1", "B": "2"}
    assert sp.STYLES["spatialviz"](line, "Count?", None, 1) == f"{sp.SPATIALVIZ_DIRECT}\nQuestion:Count?\nA. 1\nB. 2\n"
    assert sp.STYLES["spatialviz_cot"](line, "Count?", None, 1).startswith(sp.SPATIALVIZ_COT + "\nQuestion:Count?")


def test_omnispatial_direct_and_with_a_system_text():
    line = {"A": "near", "B": "far"}
    assert sp.STYLES["omnispatial"](line, "How far?", None, 1) == (
        "How far?\nA. near\nB. far\nAnswer directly with the option letter from the given choices. "
    )
    for mode in ("default", "zeroshot_cot", "manual_cot"):
        text = sp.STYLES[f"omnispatial_{mode}"](line, "How far?", None, 1)
        assert text == sp.OMNI_SYSTEM[mode] + "\n" + sp.OMNI_FORMAT + "\n\nHow far?\nA. near\nB. far"
    # the three system texts share head and tail and differ in their middle
    assert len(set(sp.OMNI_SYSTEM.values())) == 3
    assert all(t.startswith("\nYou are a spatial-reasoning assistant.") for t in sp.OMNI_SYSTEM.values())
    assert "noqa" not in sp.OMNI_SYSTEM["manual_cot"]  # VLMEvalKit's stray linter comment is left out


def test_viewspatial_shows_the_candidates_cell():
    text = sp.STYLES["viewspatial"]({"candidates": "['A. left']"}, "Where?", None, 1)
    assert text == "Question: Where?\nChoices: ['A. left']\nReply only to the corresponding option.\nAnswer:"


def test_stare_unescapes_and_adds_an_image_mark_only_when_images_come_without_one():
    raw = "Line one\\nLine two with a \\\\ slash"
    unescaped = "Line one\nLine two with a \\ slash"
    assert sp.STYLES["stare"]({}, raw, None, 2) == f"{unescaped}\n<image>\n\n{sp.STARE_FORMAT}\n{sp.STARE_DIRECT}"
    assert sp.STYLES["stare_cot"]({}, raw, None, 0) == f"{unescaped}\n\n{sp.STARE_FORMAT}\n{sp.STARE_COT}"
    marked = "See <image> here"
    assert sp.STYLES["stare"]({}, marked, None, 1) == f"{marked}\n\n{sp.STARE_FORMAT}\n{sp.STARE_DIRECT}"


def test_dise_strips_the_question_and_column_is_verbatim():
    assert sp.STYLES["dise"]({}, "  Which view?\n", None, 3) == "Which view?\n" + sp.DISE_POST
    assert sp.STYLES["column"]({"x": 1}, "  as is \n", ["a"], 2) == "  as is \n"


def test_every_style_needing_a_column_is_a_style():
    assert set(sp.STYLE_COLUMNS) <= set(sp.STYLES)
    assert sp.STYLE_COLUMNS == {"site": ("options",), "viewspatial": ("candidates",)}
