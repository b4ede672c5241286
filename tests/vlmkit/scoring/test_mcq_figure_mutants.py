"""VLMEvalKit's MCQ figure with a judge (vlmkit.scoring.kinds.mcq_figure.figure_rows): which rows are sent, with which
prompt, and how each verdict is counted, on small hand-worked tables with a judge answering from a key
(FunctionJudge: a real Judge, a Python rule instead of HTTP). Also the option columns' round trip for cells whose
type matters, checked against a real xlsx written and read back with pandas and openpyxl."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.choice_judge import Judged, mcq_judge_prompt
from vlmkit.scoring.kinds.mcq_figure import figure_rows, vlmevalkit_choices



def _columns(n: int) -> dict[str, list[str]]:
    return {"A": ["cat"] * n, "B": ["dog"] * n}


def _keyed_judge(replies: dict[str, str | Exception]) -> FunctionJudge:
    """Answers each prompt by the reply (the prediction's text is in the prompt) it names; an Exception is raised
    (a failed call)."""

    def answer(request: JudgeRequest) -> str:
        for reply, verdict in replies.items():
            if f"Answer: {reply}\n" in request.prompt:
                if isinstance(verdict, Exception):
                    raise verdict
                return verdict
        raise AssertionError(f"unexpected prompt {request.prompt!r}")

    return FunctionJudge(answer)


def test_rows_no_rule_reads_go_to_the_judge_and_each_verdict_is_counted_by_its_kind():
    # replies no rule reads (no letter, no option's text), each answered by the judge in its own way
    replies = ["A", "a small puppy", "a striped kitten", "a wooden chair", "nothing at all", "a loud bark"]
    answers = ["A", "B", "B", "A", "A", "A"]
    judge = _keyed_judge({
        "a small puppy": "B",  # names the right option
        "a striped kitten": "A",  # names an option, the wrong one
        "a wooden chair": "Z",  # none of the options: a reading (`Z`) and a miss
        "nothing at all": "I cannot tell",  # never names an option in its three rounds
        "a loud bark": RuntimeError("server gone"),  # a failed call
    })
    assert figure_rows([1, 2, 3, 4, 5, 6], replies, answers, _columns(6)).readings == ["A"] + [None] * 5
    got = figure_rows([1, 2, 3, 4, 5, 6], replies, answers, _columns(6), judge=judge)
    assert got.readings == ["A", "B", "A", "Z", None, None]
    assert got.hits.tolist() == [True, True, False, False, False, False]
    assert (got.judged, got.judge_unread, got.judge_errors) == (5, 1, 1)
    # the rule-read row is never sent; the unread one three times (VLMEvalKit's three rounds at temperature 0), the
    # failed one once (its retries are the HTTP layer's)
    sent = [r.prompt.split("Answer: ")[-1].split("\n")[0] for r in judge.asked]
    assert sorted(set(sent)) == sorted(replies[1:])
    assert sent.count("nothing at all") == 3 and sent.count("a loud bark") == 1
    assert {r.temperature for r in judge.asked} == {0.0}


def test_a_judge_answering_z_scores_as_vlmevalkit_where_the_answer_cell_is_z():
    # VLMEvalKit's extract_answer_from_item returns opt `Z` from the judge's reply and its hit is opt == GT; a reply
    # the rule reads as `Z` is already a hit against the answer `Z` here (the rule path)
    assert figure_rows([1], ["Z"], ["Z"], _columns(1)).hits.tolist() == [True]
    judge = _keyed_judge({"a wooden chair": "Z"})
    got = figure_rows([1], ["a wooden chair"], ["Z"], _columns(1), judge=judge)
    assert got.readings == ["Z"] and got.hits.tolist() == [True]


def test_the_prompt_is_vlmevalkits_default_with_the_question_or_an_empty_one():
    judge = _keyed_judge({"a small puppy": "B"})
    figure_rows([7], ["a small puppy"], ["B"], _columns(1), judge=judge)  # no questions, the default prompt
    assert [r.prompt for r in judge.asked] == [mcq_judge_prompt("", {"A": "cat", "B": "dog"}, "a small puppy")]
    judge = _keyed_judge({"a small puppy": "B"})
    figure_rows([7], ["a small puppy"], ["B"], _columns(1), questions=["Which pet?"], judge=judge)
    assert [r.prompt for r in judge.asked] == [
        mcq_judge_prompt("Which pet?", {"A": "cat", "B": "dog"}, "a small puppy")
    ]
    # the question is the text between `Question: ` and its added `?` in the third example
    assert "Question: Which pet??\n" in judge.asked[0].prompt
    judge = _keyed_judge({"a small puppy": "B"})
    figure_rows([7], ["a small puppy"], ["B"], _columns(1), questions=[float("nan")], judge=judge)
    assert "Question: ?\n" in judge.asked[0].prompt


def test_an_unknown_judge_prompt_is_refused_and_blink_is_its_own_template():
    judge = _keyed_judge({"a small puppy": "B"})
    with pytest.raises(ValueError, match="judge_prompt"):
        figure_rows([7], ["a small puppy"], ["B"], _columns(1), judge=judge, judge_prompt="nope")
    figure_rows([7], ["a small puppy"], ["B"], _columns(1), judge=judge, judge_prompt="blink")
    assert judge.asked[-1].prompt == mcq_judge_prompt("", {"A": "cat", "B": "dog"}, "a small puppy", "blink")


def test_verdicts_already_asked_are_served_without_asking_again():
    prompt = mcq_judge_prompt("", {"A": "cat", "B": "dog"}, "a small puppy")
    judge = _keyed_judge({"a striped kitten": "A"})
    got = figure_rows([1, 2], ["a small puppy", "a striped kitten"], ["B", "A"], _columns(2), judge=judge,
                      asked={prompt: Judged("judge", "B", "B")})
    assert got.readings == ["B", "A"] and got.hits.tolist() == [True, True] and got.judged == 2
    assert [r.prompt.split("Answer: ")[-1].split("\n")[0] for r in judge.asked] == ["a striped kitten"]


def test_circular_groups_already_lost_by_a_rule_read_row_are_not_sent():
    # group 0: row 1 is read by rule and wrong, so row 2 (unread) cannot change the group: not asked; group 1: row 3
    # is read and right, row 4 unread: asked; group 2: row 5 failed (a miss), row 6 not asked
    replies = ["B", "a small puppy", "A", "a striped kitten", None, "a wooden chair"]
    answers = ["A", "B", "A", "A", "A", "A"]
    judge = _keyed_judge({"a small puppy": "B", "a striped kitten": "A", "a wooden chair": "A"})
    got = figure_rows([1, 2, 3, 4, 5, 6], replies, answers, _columns(6), judge=judge,
                      lost_groups=np.array([0, 0, 1, 1, 2, 2]))
    assert [r.prompt.split("Answer: ")[-1].split("\n")[0] for r in judge.asked] == ["a striped kitten"]
    assert got.readings == ["B", None, "A", "A", None, None] and got.judged == 1
    # without groups every unread row is sent
    judge = _keyed_judge({"a small puppy": "B", "a striped kitten": "A", "a wooden chair": "A"})
    got = figure_rows([1, 2, 3, 4, 5, 6], replies, answers, _columns(6), judge=judge)
    assert got.judged == 3 and got.readings == ["B", "B", "A", "A", None, "A"]


def test_repeated_indices_are_judged_row_by_row():
    judge = _keyed_judge({"a small puppy": "B", "a striped kitten": "A"})
    got = figure_rows([1, 1], ["a small puppy", "a striped kitten"], ["B", "B"], _columns(2), judge=judge)
    assert got.readings == ["B", "A"] and got.hits.tolist() == [True, False] and got.judged == 2


def _xlsx_round_trip(cells: list[object]) -> list[object]:
    """A second implementation of the round trip: write the column to a real xlsx and read it back with pandas."""
    pytest.importorskip("openpyxl")
    buffer = io.BytesIO()
    pd.DataFrame({"cell": cells}).to_excel(buffer, index=False, engine="openpyxl")
    buffer.seek(0)
    return pd.read_excel(buffer)["cell"].tolist()


def test_option_cells_of_other_types_stay_apart_as_a_real_xlsx_keeps_them():
    # 1 and True are equal in Python but not the same cell: the file keeps a number and a boolean
    column = [1, True, "x", 1]
    expected = [{"A": str(v)} for v in _xlsx_round_trip(column)]
    assert expected == [{"A": "1"}, {"A": "True"}, {"A": "x"}, {"A": "1"}]
    assert vlmevalkit_choices({"A": column}) == expected


def test_an_unhashable_option_cell_makes_the_whole_column_round_trip():
    # a list in a cell (a custom table may hold one) is written as its text
    assert vlmevalkit_choices({"A": [["x"], "y", "y"], "B": ["p", "q", None]}) == [
        {"A": "['x']", "B": "p"}, {"A": "y", "B": "q"}, {"A": "y"},
    ]


def test_a_failed_call_is_never_sent_to_the_judge_and_loses_its_group():
    failure = "Failed to obtain answer via API"  # VLMEvalKit's failure text, as a reply holding it
    judge = _keyed_judge({"a small puppy": "B", failure: "A"})
    got = figure_rows([1, 2], [f"{failure}: timeout", "a small puppy"], ["A", "B"], _columns(2), judge=judge)
    assert [r.prompt.split("Answer: ")[-1].split("\n")[0] for r in judge.asked] == ["a small puppy"]
    assert got.readings == [None, "B"] and got.hits.tolist() == [False, True]
    # circular: the failed row's group is lost, its other row is not sent
    judge = _keyed_judge({"a small puppy": "B"})
    got = figure_rows([1, 2], [f"{failure}: timeout", "a small puppy"], ["A", "B"], _columns(2), judge=judge,
                      lost_groups=np.array([0, 0]))
    assert judge.asked == [] and got.judged == 0


def test_unread_and_failed_verdicts_are_each_counted_once_a_row():
    judge = _keyed_judge({"maybe one": "no idea", "maybe two": "still none",
                          "gone one": OSError("reset"), "gone two": OSError("reset"), "gone three": OSError("reset")})
    replies = ["maybe one", "maybe two", "gone one", "gone two", "gone three"]
    got = figure_rows(list(range(5)), replies, ["A"] * 5, _columns(5), judge=judge)
    assert (got.judged, got.judge_unread, got.judge_errors) == (5, 2, 3)
    assert got.readings == [None] * 5 and not got.hits.any()
    assert got.notes(list(range(5)))[0].startswith("2 row(s) the judge never matched")
