"""score_mcq end to end on tables worked by hand: option cells of every kind, answers as `(c)`, failed calls in the
middle, invalid answers, circular groups (tools/mutation_test.py found these unguarded)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.kinds.mcq import score_mcq

NAN = math.nan


def table() -> pd.DataFrame:
    return pd.DataFrame({
        "index": [0, 1, 2, 3, 4, 5],
        "A": ["cat", "cat", "cat", 1, "cat", "cat"],
        "B": ["dog", "  ", "dog", 2.0, "dog", " "],
        "C": [NAN, "cow", "cow", NAN, None, "cow"],
        "answer": ["B", "(c)", "B", "B", "D", "B"],
        "prediction": ["B", "The answer is C", None, 2, "A", "B"],
    })  # fmt: skip


def test_a_table_of_every_kind_of_cell_by_hand():
    # row 0: `B` exact, hit; row 1: B blank is no option, the answer `(c)` is C, read by the answer phrase: hit;
    # row 2: no prediction (inference error) in the middle; row 3: the number 2 reads as option B's text `2`
    # (the cell 2.0): hit; row 4: `D` is no option (invalid, a miss); row 5: `B` is blank there: invalid, and the
    # reply names no option
    result = score_mcq(table(), circular=False)
    assert result.per_sample["extracted"].tolist() == ["B", "C", None, "B", "A", None]
    assert result.per_sample["method"].tolist() == ["exact", "marker", "inference_error", "exact", "exact",
                                                    "unparsed"]
    assert result.per_sample["hit"].tolist() == [True, True, False, True, False, False]
    assert result.metrics["Overall"] == pytest.approx(3 / 6)
    assert result.counts["invalid_target"] == 2 and result.counts["inference_errors"] == 1
    assert result.counts["hits"] == 3 and result.counts["scored"] == 6
    assert result.notes[0] == (
        "2 row(s) have an answer that is not one of their options (scored as misses): index 4, 5"
    )
    assert result.scorer == "mcq" and result.table_suffix == "acc" and result.scale.kind == "fraction"
    assert result.interval.unit == "row" and result.interval.n == 6
    # VLMEvalKit: the answer cell as it is (`(c)` is not `C`); a blank-looking ` ` cell is an option there, so
    # row 5's `B` is a hit; row 3's `2` is option B's `2` there too
    assert result.per_sample["vlmevalkit_hit"].tolist() == [True, False, False, True, False, True]


def test_circular_groups_are_the_unit():
    df = pd.DataFrame({
        "index": [0, 1_000_000, 1, 1_000_001],
        "A": ["cat", "dog", "cat", "dog"], "B": ["dog", "cat", "dog", "cat"],
        "answer": ["B", "A", "A", "B"], "prediction": ["B", "A", "A", "A"],
    })  # fmt: skip
    result = score_mcq(df, circular=True)
    assert result.scorer == "mcq_circular"
    assert result.per_sample["group_hit"].tolist() == [True, True, False, False]
    assert result.metrics["Overall"] == pytest.approx(0.5)
    assert result.interval.unit == "circular group" and result.interval.n == 2
    assert result.counts["groups"] == 2 and result.counts["hits"] == 1


def test_circular_indices_are_read_as_int_of_float():
    # 2**53 + 1 is not a float: read as int(float(value)) it is 2**53, the index before it
    df = pd.DataFrame({"index": [2**53, 2**53 + 1], "A": ["x", "x"], "B": ["y", "y"], "answer": ["A", "A"],
                       "prediction": ["A", "A"]})
    with pytest.raises(ValueError, match=r"^circular MCQ: duplicate `index` value\(s\): 9007199254740992$"):
        score_mcq(df, circular=True)


def test_bad_tables_are_one_line_naming_the_scorer():
    df = table()
    with pytest.raises(ValueError) as err:
        score_mcq(df.drop(columns="answer"), circular=False)
    assert str(err.value).startswith("MCQ: the predictions table has no `answer` column (columns: index, A, B, C,")
    with pytest.raises(ValueError) as err:
        score_mcq(df.drop(columns="answer"), circular=True)
    assert str(err.value).startswith("circular MCQ: the predictions table has no `answer` column")
    with pytest.raises(ValueError) as err:
        score_mcq(df.iloc[:0], circular=False)
    assert str(err.value) == "MCQ: the predictions table has no rows"
    with pytest.raises(ValueError) as err:
        score_mcq(df.assign(index=[1_000_000 + i for i in range(6)]), circular=True)
    assert str(err.value) == "circular MCQ: no main rows (index < 1000000) to report"


# ------------------------------------------------------------------ VLMEvalKit's figure (mcq_figure), no judge

def test_figure_notes_say_each_quirk_with_its_count():
    import numpy as np

    from vlmkit.scoring.kinds.mcq_figure import FigureRows

    rows = FigureRows(readings=[None] * 3, hits=np.zeros(3, dtype=bool), nan_rows=[0, 2], judge_unread=2,
                      judge_errors=1)
    assert rows.notes([10, 11, 12]) == [
        "VLMEvalKit reads 2 reply(ies) as the text `nan` (its xlsx round trip turns an empty reply, `None`, `N/A`, "
        "`NA`, `null`... into NaN); vlmkit reads the reply itself: index 10, 12",
        "2 row(s) the judge never matched to an option: VLMEvalKit draws a random letter there, counted as misses "
        "here",
        "1 judge call(s) failed: misses here (VLMEvalKit retries, then draws a random letter)",
    ]
    assert FigureRows(readings=[], hits=np.zeros(0, dtype=bool)).notes([]) == []


def test_figure_rows_read_what_the_round_trip_leaves():
    from vlmkit.scoring.kinds.mcq_figure import figure_rows, vlmevalkit_choices

    assert vlmevalkit_choices({}) == []
    # no option columns: nothing is read
    assert figure_rows([1, 2], ["A", "Z"], ["A", "A"], {}).readings == [None, None]
    # a failed call is written as VLMEvalKit's failure text, so the column stays text: `1` is read as `1`, the text
    # of option B (`1.0` would hold both options' texts)
    got = figure_rows([1, 2], [1, None], ["B", "B"], {"A": ["1.0", "1.0"], "B": ["1", "1"]})
    assert got.readings == ["B", None] and got.hits.tolist() == [True, False]
    # a row whose every option is blank has no choices: even `Z` reads nothing there
    got = figure_rows([1, 2], ["Z", "Z"], ["A", "A"], {"A": [None, "x"], "B": [None, "y"]})
    assert got.readings == [None, "Z"]
    # `None` is NaN after the round trip (listed), the reply `nan` already is the text nan (not listed)
    got = figure_rows([1, 2, 3, 4], ["None", "nan", "Failed to obtain answer via API", "B"], ["A"] * 4,
                      {"A": ["x"] * 4, "B": ["y"] * 4})
    assert got.nan_rows == [0] and got.readings == [None, None, None, "B"]


def test_differences_list_every_row_but_failed_calls_where_letter_or_score_differs():
    import numpy as np

    from vlmkit.scoring.kinds.mcq_figure import FigureRows, differences
    from vlmkit.scoring.vlmevalkit_figure import ReadingDifference

    theirs = FigureRows(readings=["A", None, "C", "Z", "B"], hits=np.array([False, False, False, False, True]))
    got = differences([1, 2, 3, 4, 5], ["A", "D", "B", None, "B"], np.array([True, False, False, False, True]),
                      theirs, [False, True, False, False, False])
    # row 1: same letter, other score; row 2: failed (never listed); row 3: other letter; row 4: `Z` is no letter,
    # the same as vlmkit's None; row 5: the same
    assert got == [ReadingDifference(1, "A", "A", 1.0, 0.0), ReadingDifference(3, "B", "C", 0.0, 0.0)]


def test_a_failure_message_in_the_middle_and_an_answer_that_is_no_letter():
    df = pd.DataFrame({"index": [0, 1, 2], "A": ["cat"] * 3, "B": ["dog"] * 3, "answer": ["A", "A", "dog"],
                       "prediction": ["A", "Failed to obtain answer via API", "B"]})
    result = score_mcq(df, circular=False)
    assert result.per_sample["method"].tolist() == ["exact", "inference_error", "exact"]
    assert result.per_sample["extracted"].tolist() == ["A", None, "B"]
    # `dog` is kept as it is, and is not one of the letters: an invalid answer, a miss
    assert result.per_sample["hit"].tolist() == [True, False, False]
    assert result.counts["invalid_target"] == 1 and result.counts["inference_errors"] == 1
