"""Numbers, booleans and NaN through VLMEvalKit's xlsx round trip (vlmevalkit_cells), worked by hand.

xlsxwriter writes a number with `%.16G` (so 3.0 is stored as `3`, 2.5 as `2.5`) and a bool as a boolean cell;
openpyxl reads `3` back as the int 3 and `2.5` as a float; pandas then makes a column of ints and floats all floats.
"""

from __future__ import annotations

import math

import numpy as np

from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, nan_note, vlmevalkit_cells, vlmevalkit_texts


def typed(values):
    return [(type(v).__name__, v) for v in values]


def test_integral_floats_are_written_as_integers():
    assert typed(vlmevalkit_cells([3.0, 4])) == [("int", 3), ("int", 4)]
    assert typed(vlmevalkit_cells([np.float64(5.0), np.int64(-2)])) == [("int", 5), ("int", -2)]
    assert vlmevalkit_texts([3.0]) == ["3"]


def test_a_fraction_makes_the_whole_column_floats():
    assert typed(vlmevalkit_cells([2.5, 1])) == [("float", 2.5), ("float", 1.0)]
    assert vlmevalkit_texts([2.5, 1]) == ["2.5", "1.0"]
    assert vlmevalkit_texts([-0.25]) == ["-0.25"]


def test_booleans_stay_booleans_and_a_missing_number_is_nan():
    assert typed(vlmevalkit_cells([True, False])) == [("bool", True), ("bool", False)]
    cells = vlmevalkit_cells([1.0, float("nan"), None])
    assert cells[0] == 1.0 and all(is_nan_cell(c) for c in cells[1:])
    assert vlmevalkit_texts([1, None]) == ["1.0", "nan"]


def test_a_number_among_texts_reads_back_as_its_digits():
    assert vlmevalkit_texts([7.0, "x"]) == ["7", "x"]
    assert vlmevalkit_texts([0.5, "x"]) == ["0.5", "x"]


def test_is_nan_cell_only_for_float_nan():
    assert is_nan_cell(float("nan")) and is_nan_cell(np.float64("nan"))
    assert not any(is_nan_cell(v) for v in ("nan", None, 0.0, math.inf, 3))


def test_empty_column_and_nan_note():
    assert vlmevalkit_cells([]) == [] and vlmevalkit_texts([]) == []
    assert nan_note([4, 9], "scores them as misses") == (
        "2 reply/replies (empty, or a text pandas reads as NaN such as None, N/A, NA, null) are the text 'nan' to "
        "VLMEvalKit, a quirk of its xlsx round trip; vlmkit scores them as misses: index 4, 9"
    )
