"""The single-rule MCQ readers (regex_mcq) on replies that need each step, and a whole result worked by hand
(tools/mutation_test.py found these unguarded). Expectations follow the rules the module docstring states."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.kinds.regex_mcq import (
    read_answer_line,
    read_boxed_or_phrase,
    read_characters,
    read_first_letter,
    score_regex_mcq,
    target_of,
    vlmevalkit_first_letter,
)

FAILED = "Failed to obtain answer via API"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The answer is(b)", ("B", "choice_text")),  # prefix removed, then `(b)` is part of `(b)`
        ("The answer is b", (None, "unparsed")),  # ` b` (its space kept) is part of no `(b)`
        ("x", (None, "unparsed")),  # part of no `(a)`..`(e)`
        ("hello there", (None, "unparsed")),
        ("The best answer is", (None, "unparsed")),  # nothing left
    ],
)
def test_characters(reply, expected):
    assert read_characters(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("【B】", ("B", "last_line")),  # full-width brackets made ASCII
        ("Answer: 【C】", ("C", "last_line")),
        ("Some reasoning.\nB", ("B", "last_line")),  # the last non-empty line
        ("Reasoning.\n\\boxed{\nC}", ("C", "boxed_tail")),  # a box across the last two lines
        ("Reasoning.\n\\boxed{\nc}", ("C", "boxed_tail")),
        ("   ", (None, "unparsed")),
        ("", (None, "unparsed")),
    ],
)
def test_answer_line(reply, expected):
    assert read_answer_line(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("  B", ("B", "boxed")),  # no box: the whole reply, stripped
        ("\\boxed{ B}", ("B", "boxed")),  # two characters in the box
        ("\\boxed{ B }", (None, "unparsed")),  # three: the whole reply is looked at, and reads nothing
        ("I pick (C).<|endoftext|>", ("C", "phrase")),  # the end marker is dropped first
        ("I think the answer is C and more", (None, "unparsed")),  # up to the line end: `c and more`
        ("the answer is C\nbecause it is", ("C", "phrase")),
        ("Answer: A\nFinal answer: C", ("C", "phrase")),  # the text after the last `answer:`
    ],
)
def test_boxed_or_phrase(reply, expected):
    assert read_boxed_or_phrase(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected", "theirs"),
    [
        ("E", ("E", "exact"), "E"),  # the default letters are A-E
        ("x", (None, "unparsed"), None),
        ("X.", (None, "unparsed"), None),
        ("B: because", ("B", "leading"), "B"),
        ("B-ish", ("B", "leading"), "B"),
        ("I doubt A; the answer is C", ("C", "phrase"), "A"),
    ],
)
def test_first_letter_and_vlmevalkits(reply, expected, theirs):
    assert read_first_letter(reply) == expected
    assert vlmevalkit_first_letter(reply) == theirs


def test_targets():
    assert target_of(" b ", "upper") == "B"
    assert [target_of(v, "letter_index") for v in ("0", "3", "4", "b", " C ", "x")] == ["A", "D", "4", "B", "C", "x"]
    assert target_of(" b ", "casefold") == " b " and target_of(None, "exact") is None


def test_a_whole_result_by_hand():
    df = pd.DataFrame({
        "index": [1, 2, 3, 4, 5],
        "prediction": ["B", "the answer is C", FAILED, "D", "nothing"],
        "answer": ["B", "c", "A", None, "A"],
        "category": ["x", "x", "y", "y", "y"],
    })  # fmt: skip
    result = score_regex_mcq(df, rule="boxed_or_phrase", answer_match="casefold", groups=[("category", "cat {}")])
    assert result.per_sample.to_dict("list") == {
        "index": [1, 2, 3, 4, 5],
        "extracted": ["B", "C", None, "D", None],
        "method": ["boxed", "phrase", "inference_error", "boxed", "unparsed"],
        "hit": [True, True, False, False, False],
    }
    assert result.counts == {
        "total": 5, "scored": 5, "hits": 2, "boxed": 2, "phrase": 1, "inference_errors": 1, "by_rule": 3,
        "by_judge": 0, "unread": 1, "judge_errors": 0, "invalid_target": 1,
    }
    assert result.notes == [
        "1 row(s) have no answer (scored as misses): index 4",
        "1 reply(ies) could not be read by the benchmark's rule (misses)",
    ]
    assert result.metrics == {"Overall": pytest.approx(40.0), "cat x": pytest.approx(100.0), "cat y": 0.0}
    # answer_match exact: `c` is not `C`
    exact = score_regex_mcq(df, rule="boxed_or_phrase", groups=[("category", "cat {}")])
    assert exact.per_sample["hit"].tolist() == [True, False, False, False, False]


def test_bad_arguments_and_tables_are_one_line():
    df = pd.DataFrame({"index": [1], "prediction": ["A"], "answer": ["A"]})
    for kwargs in ({"rule": "nope"}, {"rule": "characters", "answer_match": "nope"},
                   {"rule": "characters", "report": "nope"}, {"rule": "characters", "scale": "nope"}):
        with pytest.raises(ValueError, match=r"^regex MCQ: unknown rule/answer_match/report/scale "):
            score_regex_mcq(df, **kwargs)
    with pytest.raises(ValueError) as err:
        score_regex_mcq(df.drop(columns="answer"), rule="characters")
    assert str(err.value) == "regex MCQ: the predictions table has no `answer` column (columns: index, prediction)"
    with pytest.raises(ValueError) as err:
        score_regex_mcq(df.iloc[:0], rule="characters")
    assert str(err.value) == "regex MCQ: the predictions table has no rows"
