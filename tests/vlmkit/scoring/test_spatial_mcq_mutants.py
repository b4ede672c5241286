"""vlmkit.scoring.benchmarks.spatial_mcq on hand-worked tables: every field of the result (per-row readings, counts,
notes, figures), VLMEvalKit's figure (the xlsx round trip's `nan`, the rows listed as read differently), the reading
steps that the think-tags and option lines decide, the option counts of the class-adjusted accuracy, and STARE's
report on VLMEvalKit's side."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.spatial_mcq import (
    class_adjusted,
    option_count,
    parse_option_list,
    read_option_letter,
    score_spatial_mcq,
)
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference

FAILED = "Failed to obtain answer via API: timeout"
ROWS = [
    # index, prediction, answer: (vlmkit's letter, method), VLMEvalKit's letter
    (10, "B", "B"),  # (B, last_lines), B: a hit on both sides
    (11, "N/A", "A"),  # (A, last_lines): the lone A of N/A; VLMEvalKit reads `nan`: nothing
    (12, None, "A"),  # a failed call
    (13, "I cannot tell", "C"),  # unparsed on both sides
    (14, "nan", "D"),  # the text nan: nothing on both sides, and not a reply the round trip changed
    (15, "A", "no letter here"),  # an answer without a letter: a miss, said
    (16, FAILED, "A"),  # VLMEvalKit's failure text: a failed call
    (17, "C", "B"),  # a wrong letter on both sides
    (18, "N/A", "B"),  # vlmkit reads A (a miss), VLMEvalKit nothing (a miss): read differently, the same score
]


def _table() -> pd.DataFrame:
    return pd.DataFrame([{"index": i, "prediction": p, "answer": a, "category": "x" if i < 14 else "y"}
                         for i, p, a in ROWS])


def test_every_field_of_the_result_worked_by_hand():
    result = score_spatial_mcq(_table())
    rows = result.per_sample
    assert list(rows.columns) == ["index", "extracted", "target", "method", "hit", "vlmevalkit"]
    assert rows["index"].tolist() == [i for i, _, _ in ROWS]
    assert rows["extracted"].tolist() == ["B", "A", None, None, None, "A", None, "C", "A"]
    assert rows["target"].tolist() == ["B", "A", "A", "C", "D", None, "A", "B", "B"]
    assert rows["target"].dtype == object and rows["vlmevalkit"].dtype == object
    assert rows["method"].tolist() == ["last_lines", "last_lines", "inference_error", "unparsed", "unparsed",
                                       "last_lines", "inference_error", "last_lines", "last_lines"]
    assert rows["hit"].tolist() == [True, True, False, False, False, False, False, False, False]
    assert rows["vlmevalkit"].tolist() == ["B", None, None, None, None, "A", None, "C", None]
    assert result.counts == {
        "total": 9, "scored": 9, "hits": 2, "answer_block": 0, "tag_tail": 0, "last_lines": 5, "tail_lines": 0,
        "phrase": 0, "lone_letter": 0, "unparsed": 2, "inference_errors": 2, "by_rule": 5, "by_judge": 0,
        "unread": 2, "judge_errors": 0, "invalid_target": 1,
    }
    assert result.notes == [
        "1 row(s) have an answer from which no option letter can be read (scored as misses): index 15",
        "2 reply(ies) name no option letter by VLMEvalKit's spatial_bench rule (misses)",
    ]
    # x: rows 10-13 (2 hits of 4); y: rows 14-18 (none)
    assert result.metrics == pytest.approx({"Overall": 200 / 9, "x_accuracy": 50.0, "y_accuracy": 0.0})
    assert (result.scorer, result.primary, result.table_suffix) == ("spatial_mcq", "Overall", "acc")
    assert result.scale is not None and result.scale.to_dict()["scale"] == "percent"
    assert result.table.to_dict("records") == [result.metrics]


def test_vlmevalkits_figure_reads_the_round_trip_and_lists_rows_read_differently():
    figure = score_spatial_mcq(_table()).vlmevalkit
    assert figure.primary == "Overall"
    assert figure.metrics == pytest.approx({"Overall": 100 / 9, "x_accuracy": 25.0, "y_accuracy": 0.0})
    assert figure.differing == [ReadingDifference(11, "A", None, 1.0, 0.0), ReadingDifference(18, "A", None, 0.0, 0.0)]
    (note,) = figure.notes
    assert note.startswith("2 reply/replies") and note.endswith("vlmkit reads the reply itself: index 11, 18")


def test_a_table_without_differences_has_no_notes():
    figure = score_spatial_mcq(pd.DataFrame([{"index": 1, "prediction": "B", "answer": "B"}])).vlmevalkit
    assert figure.differing == [] and figure.notes == []


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (None, (None, "unparsed")),
        (5, (None, "unparsed")),
        ("\u200bB\u200b", ("B", "last_lines")),  # zero-width characters removed, not replaced
        # after </think> nothing: the tail's lines decide
        ("C\n<think>\nthinking\n</think>", ("C", "tail_lines")),
        # the lines after <think> (there is no </think>)
        ("D is out\n<think>\nB\n", ("B", "last_lines")),
        # after the last </think> nothing reads; the letter inside the think block is found in the tail
        ("<think>\nB.\n</think>\nno letter", ("B", "tail_lines")),
        ("<think>x</think>\nfirst\n<think>y</think>\nE", ("E", "last_lines")),
        # an option line is skipped, not the end of the search
        ("B\noption C: a chair", ("B", "last_lines")),
        # a letter no line step takes (followed by `-`) but standing alone: the last step
        ("hmm\nB-side", ("B", "lone_letter")),
        ("option A: cat\noption B: dog\nhmm\nB-side", ("B", "lone_letter")),
    ],
)
def test_reading_steps(reply: object, expected: tuple[str | None, str]):
    assert read_option_letter(reply) == expected


@pytest.mark.parametrize(
    ("row", "n"),
    [
        ({"candidates": "['a', 'b']", "options": "['a', 'b', 'c']"}, 2),  # candidates first
        ({"options": "['a', 'b', 'c']"}, 3),
        ({"options": ["a", "b", "c", "d", "e"]}, 5),
        ({"options": "[]"}, 4),  # empty: the default
        ({"options": "('a', 'b', 'c')"}, 4),  # a tuple is no list
        ({"options": "not a list"}, 4),
        ({"options": 7}, 4),
        ({"question": "q"}, 4),
    ],
)
def test_option_counts(row: dict, n: int):
    assert option_count(row) == n


def test_class_adjusted_accuracy_by_hand_and_when_undefined():
    # two rows of 4 options, one of 2: chance 1/4 + 1/4 + 1/2 = 1; 2 hits: (2 - 1) / (3 - 1) = 0.5
    assert class_adjusted([True, True, False], [4, 4, 2]) == pytest.approx(0.5)
    assert class_adjusted([True], [1]) == 0.0  # one option: nothing to adjust, no figure
    assert class_adjusted([], []) == 0.0


def test_option_lists_of_values_are_their_texts():
    assert parse_option_list([1, "a", None]) == ["1", "a", "None"]
    assert parse_option_list('["x", 2]') == ["x", "2"] and parse_option_list("('p',)") == ["p"]
    assert parse_option_list("nope") is None and parse_option_list(3) is None


def test_vlmevalkits_figure_has_the_same_report_options():
    # two grouping columns: prefixed names; class-adjusted accuracy; both sides
    df = pd.DataFrame([
        {"index": 1, "prediction": "A", "answer": "A", "category": "c1", "task": "t", "options": "['p', 'q']"},
        {"index": 2, "prediction": "N/A", "answer": "A", "category": "c2", "task": "t", "options": "['p', 'q']"},
    ])  # fmt: skip
    result = score_spatial_mcq(df, groups=("category", "task"), caa=True)
    # vlmkit: 2 hits, chance 1: (2 - 1) / (2 - 1) = 1; VLMEvalKit: 1 hit: 0
    assert result.metrics["overall_caa"] == pytest.approx(100.0)
    assert result.vlmevalkit.metrics == pytest.approx({
        "Overall": 50.0, "overall_caa": 0.0, "category.c1_accuracy": 100.0, "category.c1_caa": 100.0,
        "category.c2_accuracy": 0.0, "category.c2_caa": -100.0, "task.t_accuracy": 50.0, "task.t_caa": 0.0,
    })
    plain = score_spatial_mcq(df, groups=("category", "task"), group_prefix=False)
    assert set(plain.vlmevalkit.metrics) == {"Overall", "c1_accuracy", "c2_accuracy", "t_accuracy"}


def test_stare_on_vlmevalkits_side_reports_every_category():
    df = pd.DataFrame([
        {"index": 1, "prediction": "A", "answer": "A", "category": "temporal", "question": "q"},
        {"index": 2, "prediction": "B", "answer": "A", "category": "temporal", "question": "q"},
    ])  # fmt: skip
    result = score_spatial_mcq(df, report="stare")
    assert "perspective_accuracy" not in result.metrics  # vlmkit leaves absent categories out
    assert result.vlmevalkit.metrics["perspective_accuracy"] == 0.0  # VLMEvalKit reports them as 0
    assert result.vlmevalkit.metrics["temporal_accuracy"] == pytest.approx(50.0)


def test_bad_arguments_and_tables_are_one_line():
    with pytest.raises(ValueError, match=r"^spatial MCQ: report 'f1'; choose one of acc, stare$"):
        score_spatial_mcq(_table(), report="f1")
    with pytest.raises(ValueError, match=r"^spatial MCQ: the predictions table has no rows$"):
        score_spatial_mcq(pd.DataFrame(columns=["index", "prediction", "answer"]))
    with pytest.raises(ValueError, match=r"^spatial MCQ: .*answer"):
        score_spatial_mcq(pd.DataFrame([{"index": 1, "prediction": "A"}]))


def test_a_reply_the_xlsx_cuts_is_read_to_another_letter_by_vlmevalkit():
    # xlsxwriter keeps 32,767 characters of a cell: the closing `C` is cut off there, and VLMEvalKit's last line
    # is the one that starts with `B`
    reply = "B" + " x" * 20000 + "\nC"
    result = score_spatial_mcq(pd.DataFrame([{"index": 4, "prediction": reply, "answer": "C"}]))
    assert result.per_sample["extracted"].tolist() == ["C"]
    assert result.vlmevalkit.differing == [ReadingDifference(4, "C", "B", 1.0, 0.0)]
