"""regex_mcq's MME-RealWorld report, VLMEvalKit's figure for every rule, and the result's own fields, where mutation
testing (tools/mutation_test.py, target regex-mcq) found them unguarded.

The MME-RealWorld figures are worked by hand from VLMEvalKit's get_dimension_rating (utils/multiple_choice.py at the
pinned commit): one accuracy per task, per task/subtask and per task/subtask/l2-category (lower case, an
l2-category naming `attribute` folded into `<first part>/attribute`), each over the rows it holds, and Overall over
all rows; vlmkit flattens the nesting depth first (a task, then each of its subtasks with its categories).
"""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.kinds.regex_mcq import score_regex_mcq
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference

FAILED = "Failed to obtain answer via API"

OCR = "Perception/OCR with Complex Context"
MME_RW = [  # (category, l2-category, answer, reply, hit worked by hand)
    (OCR, "Text Recognition", "A", "A", True),
    (OCR, "Text Recognition", "B", "C", False),
    ("Perception/Monitoring", "Vehicle/Attribute/Color", "C", "C", True),  # -> vehicle/attribute
    ("Perception/Monitoring", "Vehicle/Attribute/Size", "D", "The answer is D", True),  # -> vehicle/attribute
    ("Perception/Monitoring", "Vehicle/Counting", "E", "B", False),
    ("Reasoning/Autonomous_Driving", "Intention/Ego", "A", "(a)", True),  # part of `(a)`
    ("Reasoning/Monitoring", "Calculation", "B", "I have no idea", False),  # no capital A-E: nothing read
]


def mme_table(rows=MME_RW) -> pd.DataFrame:
    return pd.DataFrame({
        "index": list(range(1, len(rows) + 1)),
        "prediction": [r[3] for r in rows],
        "answer": [r[2] for r in rows],
        "category": [r[0] for r in rows],
        "l2-category": [r[1] for r in rows],
    })  # fmt: skip


# by hand: hits at rows 1, 3, 4, 6 of 7; the keys in get_dimension_rating's nesting order, depth first
MME_FRACTIONS = {
    "Overall": 4 / 7,
    "Perception": 3 / 5,
    "Perception/Monitoring": 2 / 3,
    "Perception/Monitoring/vehicle/attribute": 1.0,
    "Perception/Monitoring/vehicle/counting": 0.0,
    f"{OCR}": 1 / 2,
    f"{OCR}/text recognition": 1 / 2,
    "Reasoning": 1 / 2,
    "Reasoning/Autonomous_Driving": 1.0,
    "Reasoning/Autonomous_Driving/intention/ego": 1.0,
    "Reasoning/Monitoring": 0.0,
    "Reasoning/Monitoring/calculation": 0.0,
}


def test_mme_realworld_report_layout_order_and_figures_by_hand():
    result = score_regex_mcq(mme_table(), rule="characters", report="mme_realworld", scale="fraction")
    assert result.per_sample["hit"].tolist() == [r[4] for r in MME_RW]
    assert list(result.metrics) == list(MME_FRACTIONS)  # the order too: each task's subtasks with their categories
    assert result.metrics == pytest.approx(MME_FRACTIONS)
    # VLMEvalKit reads these replies as vlmkit does: the same figures, no row differs
    assert result.vlmevalkit.metrics == pytest.approx(MME_FRACTIONS)
    assert list(result.vlmevalkit.metrics) == list(MME_FRACTIONS)
    assert result.vlmevalkit.differing == []


def test_mme_realworld_report_in_percent():
    result = score_regex_mcq(mme_table(), rule="characters", report="mme_realworld")  # scale defaults to percent
    assert result.metrics == pytest.approx({k: 100.0 * v for k, v in MME_FRACTIONS.items()})
    assert result.vlmevalkit.metrics == pytest.approx({k: 100.0 * v for k, v in MME_FRACTIONS.items()})
    assert result.scale_of("Overall").kind == "percent"


def test_mme_realworld_task_is_the_part_before_the_first_slash():
    rows = [
        ("Perception/Monitoring/Night", "Counting", "A", "A", True),
        ("Perception/Monitoring", "Counting", "B", "C", False),
    ]
    result = score_regex_mcq(mme_table(rows), rule="characters", report="mme_realworld", scale="fraction")
    assert result.metrics["Overall"] == pytest.approx(0.5)
    assert result.metrics["Perception"] == pytest.approx(0.5)  # both rows are the Perception task
    # the subtask is the second part alone, as VLMEvalKit's split('/')[1]: both rows are the Monitoring subtask
    assert result.metrics["Perception/Monitoring"] == pytest.approx(0.5)
    assert not any(key.startswith("Perception/Monitoring/Night") for key in result.metrics)


def test_mme_realworld_needs_its_columns_named_in_one_line():
    df = mme_table().drop(columns="l2-category")
    with pytest.raises(ValueError) as err:
        score_regex_mcq(df, rule="characters", report="mme_realworld")
    assert str(err.value) == (
        "MME-RealWorld: the predictions table has no `l2-category` column (columns: index, prediction, answer, "
        "category)"
    )


def test_result_fields():
    result = score_regex_mcq(mme_table(), rule="characters", report="mme_realworld", scale="fraction")
    assert result.primary == "Overall" and result.vlmevalkit.primary == "Overall"
    assert result.table_suffix == "acc"
    assert result.table.to_dict("records") == [pytest.approx(MME_FRACTIONS)]
    assert list(result.table.columns) == list(MME_FRACTIONS)


def test_groups_after_a_missing_grouping_column_still_report():
    df = pd.DataFrame({"index": [1, 2, 3], "prediction": ["A", "B", "C"], "answer": ["A", "A", "C"],
                       "category": ["x", "x", "y"]})  # fmt: skip
    result = score_regex_mcq(df, rule="characters", groups=[("difficulty", "level {}"), ("category", "cat {}")],
                             scale="fraction")  # fmt: skip
    assert result.metrics == pytest.approx({"Overall": 2 / 3, "cat x": 0.5, "cat y": 1.0})


def test_vlmevalkit_figure_reads_with_the_other_rules():
    # boxed_or_phrase (VisuLogic, exact targets) and answer_line (VisualPuzzles, casefold): VLMEvalKit's own rules
    df = pd.DataFrame({"index": [1, 2, 3], "prediction": ["\\boxed{B}", "the answer is C", "D"],
                       "answer": ["B", "C", "A"]})  # fmt: skip
    result = score_regex_mcq(df, rule="boxed_or_phrase", scale="fraction")
    assert result.metrics == {"Overall": pytest.approx(2 / 3)}
    assert result.vlmevalkit.metrics == {"Overall": pytest.approx(2 / 3)}
    assert result.vlmevalkit.differing == []
    lines = pd.DataFrame({"index": [1, 2], "prediction": ["Steps\nAnswer: b", "\\boxed{C}"], "answer": ["B", "a"]})
    result = score_regex_mcq(lines, rule="answer_line", answer_match="casefold", scale="fraction")
    assert result.per_sample["extracted"].tolist() == ["B", "C"]
    assert result.vlmevalkit.metrics == {"Overall": pytest.approx(0.5)}
    assert result.vlmevalkit.differing == []


def test_the_figure_compares_as_the_benchmark_does():
    # exact (VisuLogic): `C` is not the answer `c`, in both figures
    df = pd.DataFrame({"index": [1, 2], "prediction": ["C", "B"], "answer": ["c", "B"]})
    result = score_regex_mcq(df, rule="boxed_or_phrase", answer_match="exact", scale="fraction")
    assert result.metrics == {"Overall": 0.5} and result.vlmevalkit.metrics == {"Overall": 0.5}
    # letter_index (MedQ-Bench): the answer `2` is C, in both figures
    df = pd.DataFrame({"index": [1, 2], "prediction": ["C", "A"], "answer": ["2", "3"]})
    result = score_regex_mcq(df, rule="first_letter", answer_match="letter_index", letters="ABCD", scale="fraction")
    assert result.metrics == {"Overall": 0.5} and result.vlmevalkit.metrics == {"Overall": 0.5}
    assert result.vlmevalkit.differing == []


def test_first_letter_letters_reach_both_readings():
    df = pd.DataFrame({"index": [1, 2, 3], "prediction": ["E", "X", "AB"], "answer": ["E", "A", "A"]})
    # the default letters are A-E: `E` reads, `X` does not, `AB` is no single letter
    result = score_regex_mcq(df, rule="first_letter", scale="fraction")
    assert result.per_sample["extracted"].tolist() == ["E", None, None]
    assert result.vlmevalkit.metrics == {"Overall": pytest.approx(1 / 3)}
    assert result.vlmevalkit.differing == []
    # with A-D, `E` is no option for either reading
    result = score_regex_mcq(df, rule="first_letter", letters="ABCD", scale="fraction")
    assert result.per_sample["extracted"].tolist() == [None, None, None]
    assert result.per_sample["method"].tolist() == ["unparsed"] * 3
    assert result.vlmevalkit.differing == []


def test_a_row_read_differently_is_listed_even_when_both_miss():
    # VLMEvalKit upper-cases the <answer> text: `THE ANSWER IS B` keeps its prefix (case-sensitive) and reads the E
    # of THE; vlmkit removes the prefix and ` b` is part of no `(b)`: nothing. The answer is C: both miss.
    df = pd.DataFrame({"index": [7], "prediction": ["<answer>The answer is b</answer>"], "answer": ["C"]})
    result = score_regex_mcq(df, rule="characters", scale="fraction")
    assert result.vlmevalkit.differing == [ReadingDifference(7, None, "E", 0.0, 0.0)]


def test_nan_replies_failed_calls_and_their_notes():
    df = pd.DataFrame({"index": [1, 2, 3, 4], "prediction": ["N/A", "nan", "B", FAILED],
                       "answer": ["B", "B", "B", "A"]})  # fmt: skip
    result = score_regex_mcq(df, rule="characters", scale="fraction")
    # vlmkit: `N/A` reads A (its first capital A-E), `nan` nothing, a failed call is an inference error
    assert result.per_sample["extracted"].tolist() == ["A", None, "B", None]
    assert result.metrics == {"Overall": 0.25}
    # VLMEvalKit: `N/A` and `nan` come back NaN (a miss here), the failed call is a miss, not the A of `API`
    assert result.vlmevalkit.metrics == {"Overall": 0.25}
    assert result.vlmevalkit.differing == [ReadingDifference(1, "A", None, 0.0, 0.0)]
    # only `N/A` is noted: the reply `nan` is the text VLMEvalKit reads anyway
    assert result.counts["vlmevalkit_nan_replies"] == 1
    nan_note = (
        "VLMEvalKit reads 1 reply(ies) as NaN (its xlsx round trip turns an empty reply, `None`, `N/A`, `NA`, "
        "`null`... into NaN); vlmkit reads the reply itself: index 1"
    )
    assert result.vlmevalkit.notes == [
        nan_note,
        "VLMEvalKit at this commit stops with a TypeError on such a reply (re.search on NaN); its figure here counts "
        "them as misses",
    ]
    assert nan_note in result.notes
    only_nan = score_regex_mcq(df.iloc[[1, 2]], rule="characters")
    assert "vlmevalkit_nan_replies" not in only_nan.counts and only_nan.vlmevalkit.notes == []


def test_a_failed_call_keeps_the_other_replies_text_in_vlmevalkits_table():
    # VLMEvalKit's table holds its failure message for a failed call, so a column whose other replies look like
    # numbers still reads back as text: `1E5` stays `1E5` (its first capital A-E is E), not the number 100000
    df = pd.DataFrame({"index": [1, 2], "prediction": ["1E5", None], "answer": ["E", "A"]})
    result = score_regex_mcq(df, rule="characters", scale="fraction")
    assert result.metrics == {"Overall": 0.5}
    assert result.vlmevalkit.metrics == {"Overall": 0.5}
    assert result.vlmevalkit.differing == []
