"""breakdown.py piece by piece (mutation round 4): the messages of bad tables, the split / category table worked by
hand, and the headline split against VLMEvalKit's `_choose_primary_metric_key` rule written out here."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from vlmkit.scoring.common import breakdown as bd


def vlmevalkit_primary(splits: list[str]) -> str:
    """VLMEvalKit's choice among `split=<name>|Overall` keys: 95 points each, plus 4/3/2/1 for test / validation /
    val / dev in the lower-cased key; the best score, ties to the smallest key."""
    scored = []
    for name in splits:
        key = f"split={name}|Overall"
        lower = key.lower()
        score = 95
        if "split=test" in lower:
            score += 4
        elif "split=validation" in lower:
            score += 3
        elif "split=val" in lower:
            score += 2
        elif "split=dev" in lower:
            score += 1
        scored.append((score, key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored[0][1].removeprefix("split=").removesuffix("|Overall")


def test_mmbench_abbreviations_are_vlmevalkits() -> None:
    assert dict(bd.MMBENCH_ABBREVIATIONS) == {
        "coarse_perception": "CP", "finegrained_perception (instance-level)": "FP-S",
        "finegrained_perception (cross-instance)": "FP-C", "logic_reasoning": "LR", "relation_reasoning": "RR",
        "attribute_reasoning": "AR"}
    assert bd.NO_SPLIT == "none"


def test_bad_tables_are_named_in_one_line() -> None:
    df = pd.DataFrame({"index": [1, 2], "hit": [1, 0]})
    missing = r"^MCQ: the predictions table has no `answer` column \(columns: index, hit\)$"
    with pytest.raises(ValueError, match=missing):
        bd.require_columns(df, ["index", "answer", "category"], "MCQ")
    bd.require_columns(df, ["hit", "index"], "MCQ")
    with pytest.raises(ValueError, match=r"^VQA: the predictions table has no rows$"):
        bd.keyed_records(df.iloc[:0], ["index"], "VQA")
    twice = pd.DataFrame({"index": [3, "b", 3, "b", 1], "hit": [0] * 5})
    with pytest.raises(ValueError, match=r"^VQA: duplicate `index` value\(s\): 3, b$"):
        bd.keyed_records(twice, ["index"], "VQA")
    records, keys = bd.keyed_records(df, ["index"], "VQA")
    assert records == [{"index": 1, "hit": 1}, {"index": 2, "hit": 0}] and keys == ["1", "2"]
    with pytest.raises(ValueError, match=r"^Cap: row index 7, field `answer`: missing$"):
        bd.required_text({"index": 7, "answer": None}, "answer", "Cap")
    with pytest.raises(ValueError, match=r"^Cap: row index None, field `answer`: missing$"):
        bd.required_text({}, "answer", "Cap")
    assert bd.required_text({"index": 7, "answer": " B "}, "answer", "Cap").strip() == "B"


def test_split_series() -> None:
    df = pd.DataFrame({"split": ["dev", None, 3, float("nan")]}, index=[5, 6, 7, 8])
    out = bd.split_series(df)
    assert out.tolist() == ["dev", "none", "3", "none"] and out.index.tolist() == [5, 6, 7, 8]
    assert out.dtype == object
    bare = bd.split_series(pd.DataFrame({"x": [1, 2]}, index=[4, 9]))
    assert bare.tolist() == ["none", "none"] and bare.index.tolist() == [4, 9] and bare.dtype == object


def test_split_category_table_worked_by_hand() -> None:
    df = pd.DataFrame({
        "hit": [1, 0, 1, 1, 0, 1],
        "split": ["test", "test", "dev", "dev", "test", "dev"],
        "category": ["b", "a", "a", None, "a", "b"],
        "l2-category": ["coarse_perception", "logic_reasoning", "coarse_perception", "logic_reasoning",
                        "coarse_perception", "coarse_perception"],
    })
    table = bd.split_category_table(df, "hit", scale=100.0, rename=bd.MMBENCH_ABBREVIATIONS)
    assert list(table.columns) == ["split", "Overall", "CP", "LR", "a", "b"]
    assert table["split"].tolist() == ["dev", "test"]
    # dev: hits 1, 1, 1 (Overall 100); CP rows 1, 1 -> 100; LR row 1 -> 100; a: 1 -> 100; b: 1 -> 100
    # test: hits 1, 0, 0 (Overall 33.3); CP rows 1, 0 -> 50; LR row 0 -> 0; a: 0, 0 -> 0; b: 1 -> 100
    assert table.loc[0, ["Overall", "CP", "LR", "a", "b"]].tolist() == [100.0, 100.0, 100.0, 100.0, 100.0]
    assert table.loc[1, "Overall"] == pytest.approx(100 / 3)
    assert table.loc[1, ["CP", "LR", "a", "b"]].tolist() == [50.0, 0.0, 0.0, 100.0]
    only_cat = bd.split_category_table(df, "hit", groups=("category",))
    assert list(only_cat.columns) == ["split", "Overall", "a", "b"]
    assert only_cat.loc[1, "Overall"] == pytest.approx(1 / 3)
    # a split with no row of a value: NaN
    sparse = pd.DataFrame({"hit": [1, 0], "split": ["x", "y"], "category": ["c", "d"]})
    t = bd.split_category_table(sparse, "hit", groups=("category",))
    assert t.loc[0, "c"] == 1.0 and math.isnan(t.loc[0, "d"]) and math.isnan(t.loc[1, "c"]) and t.loc[1, "d"] == 0.0
    named = bd.split_category_table(sparse, "hit", groups=("category",), rename={"c": "C!"})
    assert list(named.columns) == ["split", "Overall", "C!", "d"]


def test_group_values_sorted_as_text_without_missing() -> None:
    df = pd.DataFrame({"hit": [1, 1, 1, 0, 1], "category": pd.Series([10, 9, None, 10, 9], dtype=object)})
    out = bd.group_means(df, "hit", groups=("category",), scale=10.0, rename={"9": "nine"})
    assert list(out) == ["Overall", "10", "nine"]
    assert out == {"Overall": pytest.approx(8.0), "10": pytest.approx(5.0), "nine": pytest.approx(10.0)}
    assert bd.group_means(df, "hit", groups=("nothing",)) == {"Overall": pytest.approx(0.8)}
    assert bd.group_means(df, "hit", groups=("category",))["10"] == pytest.approx(0.5)


@pytest.mark.parametrize("names", [
    ["dev", "test"], ["val", "dev"], ["validation", "val"], ["b", "a"], ["dev", "x"], ["TEST", "dev"],
    ["test_hard", "testing", "validation"], ["valid", "dev", "z"], ["a_dev", "b"], ["x", "devx", "val2"],
])
def test_headline_split_is_vlmevalkits_choice(names: list[str]) -> None:
    for order in itertools.permutations(names):
        assert bd.headline_split(list(order) + [names[0]]) == vlmevalkit_primary(names)


def test_one_split_has_no_headline_split() -> None:
    assert bd.headline_split(["test", "test"]) is None and bd.headline_split([]) is None


def test_split_headline_adds_each_splits_overall() -> None:
    units = pd.DataFrame({"hit": [1, 0, 1, 1], "split": ["dev", "dev", "test", None]})
    metrics: dict[str, float] = {"Overall": 0.75}
    assert bd.split_headline(units, "hit", metrics) == "Overall (test)"
    assert metrics == {"Overall": 0.75, "Overall (dev)": 0.5, "Overall (test)": 1.0, "Overall (none)": 1.0}
    single: dict[str, float] = {}
    assert bd.split_headline(units.iloc[:2], "hit", single) == "Overall" and single == {}
    assert isinstance(metrics["Overall (dev)"], float) and not isinstance(metrics["Overall (dev)"], np.floating)


def test_a_missing_group_column_before_a_present_one_is_skipped() -> None:
    df = pd.DataFrame({"hit": [1, 0, 1], "category": ["x", "y", "x"]})
    assert bd.group_means(df, "hit") == {"Overall": pytest.approx(2 / 3), "x": 1.0, "y": 0.0}
    table = bd.split_category_table(df, "hit")
    assert list(table.columns) == ["split", "Overall", "x", "y"] and table.loc[0, ["x", "y"]].tolist() == [1.0, 0.0]


def test_keyed_records_names_a_missing_column() -> None:
    with pytest.raises(ValueError, match=r"^VQA: the predictions table has no `answer` column \(columns: index\)$"):
        bd.keyed_records(pd.DataFrame({"index": [1]}), ["index", "answer"], "VQA")


@pytest.mark.parametrize("names", [["dev", "a"], ["validation", "val-a"], ["val-a", "dev", "b"], ["dev-x", "c"]])
def test_each_tag_outranks_a_name_sorting_before_it(names: list[str]) -> None:
    for order in itertools.permutations(names):
        assert bd.headline_split(list(order)) == vlmevalkit_primary(names) == names[0]


def test_a_tag_inside_a_name_counts_as_vlmevalkits_substring_test_does() -> None:
    for names in (["xsplit=test", "validation"], ["zsplit=validation", "val"], ["ysplit=val", "dev"]):
        for order in itertools.permutations(names):
            assert bd.headline_split(list(order)) == vlmevalkit_primary(names) == names[0]
