"""vlmkit.scoring.common.breakdown on small hand-made tables: the split / category table (VLMEvalKit's report_acc
layout), flat group means, and the one-line errors for missing columns, empty tables and repeated indices. Every
mean below is worked out by hand from the table above it."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.common.breakdown import (
    MMBENCH_ABBREVIATIONS,
    NO_SPLIT,
    group_means,
    keyed_records,
    require_columns,
    required_text,
    split_category_table,
    split_series,
)

# dev: hits 1, 0, 1 (cat a, a, b); test: hits 1, 1 (cat b, missing)
TABLE = pd.DataFrame({
    "index": [1, 2, 3, 4, 5],
    "split": ["dev", "dev", "dev", "test", "test"],
    "category": ["a", "a", "b", "b", None],
    "hit": [1, 0, 1, 1, 1],
})


def test_split_category_table_by_hand() -> None:
    table = split_category_table(TABLE, "hit", groups=("category",), scale=100)
    assert table.columns.tolist() == ["split", "Overall", "a", "b"]
    assert table["split"].tolist() == ["dev", "test"]
    # dev: 2 of 3 -> 66.67, a: 1 of 2 -> 50, b: 1 of 1 -> 100; test: 2 of 2 -> 100, a: no row -> NaN, b: 100
    assert table["Overall"].tolist() == pytest.approx([200 / 3, 100.0])
    assert table["a"].iloc[0] == pytest.approx(50.0) and math.isnan(table["a"].iloc[1])
    assert table["b"].tolist() == pytest.approx([100.0, 100.0])


def test_without_a_split_column_one_row_named_none() -> None:
    table = split_category_table(TABLE.drop(columns="split"), "hit", groups=("category", "absent"))
    assert table["split"].tolist() == [NO_SPLIT] == ["none"]
    assert table["Overall"].tolist() == pytest.approx([4 / 5])
    assert table.columns.tolist() == ["split", "Overall", "a", "b"]  # a group column not in the table: skipped
    assert table["a"].tolist() == pytest.approx([0.5]) and table["b"].tolist() == pytest.approx([1.0])


def test_group_columns_follow_the_groups_order_and_values_are_sorted_as_text() -> None:
    df = pd.DataFrame({"hit": [1, 0, 1, 0], "l2-category": ["logic_reasoning", "coarse_perception"] * 2,
                       "category": ["z", "y", 10, 9]})
    table = split_category_table(df, "hit", rename=MMBENCH_ABBREVIATIONS)
    # l2 first (renamed to VLMEvalKit's abbreviations, sorted by full name), then category sorted as text
    assert table.columns.tolist() == ["split", "Overall", "CP", "LR", "10", "9", "y", "z"]
    assert table[["CP", "LR", "10", "9", "y", "z"]].iloc[0].tolist() == pytest.approx([0, 1, 1, 0, 0, 1])


def test_empty_split_cells_are_none() -> None:
    series = split_series(pd.DataFrame({"split": ["dev", None, math.nan, 3]}))
    assert series.tolist() == ["dev", "none", "none", "3"]
    assert split_series(pd.DataFrame({"x": [1, 2]})).tolist() == ["none", "none"]


def test_group_means_over_every_split() -> None:
    means = group_means(TABLE, "hit", groups=("category",), scale=100)
    # all 5 rows: 4 of 5; a: 1 of 2; b: 2 of 2; the row without a category only in Overall
    assert means == pytest.approx({"Overall": 80.0, "a": 50.0, "b": 100.0})
    assert list(means) == ["Overall", "a", "b"]
    assert group_means(TABLE, "hit", groups=()) == pytest.approx({"Overall": 0.8})
    renamed = group_means(pd.DataFrame({"hit": [1, 0], "g": ["logic_reasoning", "x"]}), "hit", groups=("g",),
                          rename=MMBENCH_ABBREVIATIONS)
    assert renamed == {"Overall": 0.5, "LR": 1.0, "x": 0.0}


def test_a_value_column_that_is_not_numeric_is_an_error() -> None:
    with pytest.raises(ValueError):
        group_means(pd.DataFrame({"hit": ["yes", "no"]}), "hit")


def test_require_columns_names_the_first_missing_one() -> None:
    df = pd.DataFrame({"index": [1], "prediction": ["A"]})
    require_columns(df, ("index", "prediction"), "MCQ")  # all there: no error
    with pytest.raises(ValueError, match=r"^MCQ: the predictions table has no `answer` column \(columns: index, "
                                         r"prediction\)$"):
        require_columns(df, ("index", "answer", "category"), "MCQ")


def test_keyed_records() -> None:
    records, keys = keyed_records(pd.DataFrame({"index": [3, "b"], "x": [1, 2]}), ("index",), "T")
    assert records == [{"index": 3, "x": 1}, {"index": "b", "x": 2}] and keys == ["3", "b"]
    with pytest.raises(ValueError, match=r"^T: the predictions table has no rows$"):
        keyed_records(pd.DataFrame({"index": []}), ("index",), "T")
    with pytest.raises(ValueError, match=r"^T: duplicate `index` value\(s\): 1, 2$"):
        keyed_records(pd.DataFrame({"index": [2, 1, 1, 2, 3]}), ("index",), "T")
    with pytest.raises(ValueError, match="no `index` column"):
        keyed_records(pd.DataFrame({"x": [1]}), ("index",), "T")


def test_required_text_names_the_row_and_field() -> None:
    assert required_text({"index": 4, "question": "Why?"}, "question", "Q") == "Why?"
    with pytest.raises(ValueError, match=r"^Q: row index 4, field `question`: missing$"):
        required_text({"index": 4, "question": None}, "question", "Q")
    with pytest.raises(ValueError, match=r"^Q: row index 5, field `answer`: missing$"):
        required_text({"index": 5}, "answer", "Q")
