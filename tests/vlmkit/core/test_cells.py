"""The one definition of missing, blank, index key and whole number that every reader shares."""

import math

import numpy as np
import pandas as pd
import pytest

from vlmkit.core.cells import index_key, is_blank, is_missing, listed, whole_number


@pytest.mark.parametrize("value", [None, float("nan"), np.nan, pd.NA, pd.NaT, np.float32("nan")])
def test_missing_values(value):
    assert is_missing(value)
    assert is_blank(value)


@pytest.mark.parametrize("value", ["", " ", "0", "nan", "None", 0, 0.0, False, [], {}, ["a"], np.int64(3), b""])
def test_values_that_are_not_missing(value):
    # an empty prediction is an answer (scored wrong), not a failed call; "nan" in a cell is text
    assert not is_missing(value)


@pytest.mark.parametrize("value,blank", [("", True), ("  \t\n", True), (" x ", False), ("0", False), (0, False)])
def test_blank_is_missing_or_white_space(value, blank):
    assert is_blank(value) is blank


@pytest.mark.parametrize(
    "value,key",
    [
        (3, "3"), (3.0, "3"), ("3", "3"), ("3.0", "3"), (" 3", "3"), ("3 ", "3"), (np.int64(3), "3"),
        (np.float64(3.0), "3"), ("-2", "-2"), ("3.5", "3.5"), ("a1", "a1"), (" a1 ", "a1"), ("nan", "nan"),
        ("inf", "inf"), ("007", "7"),
    ],
)
def test_index_key_agrees_across_readers(value, key):
    assert index_key(value) == key


def test_index_key_of_journal_and_table_forms_agree():
    # a journal stores what the table had; the TSV reader may see the same index as text with padding
    for table_value, file_value in [(3, " 3"), (3.0, "3"), ("x-1", "x-1 ")]:
        assert index_key(table_value) == index_key(file_value)


@pytest.mark.parametrize(
    "value,number",
    [(3, 3), (3.0, 3), ("3", 3), (" 12 ", 12), (np.int64(5), 5), (0, 0), (True, None), (3.5, None), ("3.5", None),
     ("-1", -1), ("1e3", None), ("", None), (None, None), (math.nan, None)],
)
def test_whole_number(value, number):
    assert whole_number(value) == number


def test_listed_cuts_long_lists():
    assert listed([1, 2, 3]) == "1, 2, 3"
    assert listed(list(range(25))) == ", ".join(map(str, range(20))) + " ... and 5 more"
    assert listed(["a", "b", "c"], most=2) == "a, b ... and 1 more"
