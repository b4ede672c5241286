"""The console table `vlmkit run` / `vlmkit perf` print: widths, number formats and blanks, worked by hand."""

from __future__ import annotations

from vlmkit.outputs.console_table import format_table


def test_columns_are_as_wide_as_their_widest_cell_and_two_spaces_apart():
    rows = [{"model": "tiny", "score": 0.5, "n": 12}, {"model": "a-longer-name", "score": 73.456, "n": None}]
    text = format_table(rows, ["model", "score", "n"])
    # model: 13 wide ("a-longer-name"); score: 5 ("score", "0.5", "73.46"); n: 2 ("12")
    assert text.split("\n") == [
        "model          score  n ",
        "-------------  -----  --",
        "tiny           0.5    12",
        "a-longer-name  73.46    ",
    ]


def test_floats_below_one_keep_four_significant_digits_others_two_decimals():
    rows = [{"v": 0.123456}, {"v": -0.98765}, {"v": 1.0}, {"v": -2.5}, {"v": 1234.5678}, {"v": 0.00012345}]
    lines = format_table(rows, ["v"]).split("\n")[2:]
    assert [line.rstrip() for line in lines] == ["0.1235", "-0.9877", "1.00", "-2.50", "1234.57", "0.0001234"]


def test_a_missing_key_and_none_are_blank_and_other_values_are_str():
    rows = [{"a": True}, {"b": "x"}]
    assert format_table(rows, ["a", "b"]).split("\n") == ["a     b", "----  -", "True   ", "      x"]


def test_no_rows_gives_the_header_and_its_rule():
    assert format_table([], ["model", "n"]) == "model  n\n-----  -"
