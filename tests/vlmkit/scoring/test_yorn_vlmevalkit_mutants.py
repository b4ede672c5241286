"""vlmkit.scoring.kinds.yorn_vlmevalkit.yorn_figure, what its direct test leaves open (issue 31, mutation testing):
a failed call is Unknown whatever the reader would make of it, the rows handed to the report (with their `index`
column, and a notes list it may write to), the exact notes, a reply that is the text `nan` itself never noted as
changed by the round trip, and a judge prompt for a row without a question."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.choice_judge import yorn_judge_prompt
from vlmkit.scoring.kinds.yorn import vlmevalkit_yes_no
from vlmkit.scoring.kinds.yorn_vlmevalkit import yorn_figure
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference

UNKNOWN = "Unknown"


def _rate(seen: list[pd.DataFrame]):
    """A report that writes a note of its own (the figure keeps none of them) and keeps the rows it was given."""

    def rate(rows: pd.DataFrame, notes: list[str]) -> tuple[dict[str, float], pd.DataFrame, str]:
        notes.append("a report's own note")
        seen.append(rows)
        return {"acc": float(rows["hit"].mean())}, rows, "acc"

    return rate


def test_a_failed_call_is_unknown_whatever_the_reader_says() -> None:
    df = pd.DataFrame({"index": [7, 8], "prediction": ["yes", None], "answer": ["Yes", "Yes"]})
    mine = pd.DataFrame({"index": [7, 8], "extracted": ["Yes", UNKNOWN], "hit": [True, False]})
    seen: list[pd.DataFrame] = []
    figure = yorn_figure(df, mine, read=lambda text: "Yes", rate=_rate(seen), judge=None, asked={},
                         ignore_case=False, unknown=UNKNOWN)
    rows = seen[0]
    assert list(rows.columns) == ["index", "extracted", "hit", "target"]
    assert rows["index"].tolist() == [7, 8]
    assert rows["extracted"].tolist() == ["Yes", UNKNOWN] and rows["hit"].tolist() == [True, False]
    assert figure.metrics == {"acc": 0.5} and figure.primary == "acc"
    assert figure.differing == [] and figure.notes == []


def test_the_notes_word_for_word_and_a_nan_reply_is_not_a_round_trip_change() -> None:
    df = pd.DataFrame({
        "index": [1, 2, 3],
        "prediction": ["NaN", "N/A", "maybe"],
        "answer": ["No", "No", "Yes"],
        "question": ["Is it a?", "Is it b?", "Is it c?"],
    })
    # vlmkit read rows 1 and 2 as No (say, a reader of its own), VLMEvalKit reads the text `nan` as Unknown
    mine = pd.DataFrame({"index": [1, 2, 3], "extracted": ["No", "No", UNKNOWN], "hit": [True, True, False]})

    def answer(request: JudgeRequest) -> str:
        return "Yes" if "Answer: maybe\n" in request.prompt else "I cannot tell"

    judge = FunctionJudge(answer)
    figure = yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_rate([]), judge=judge, asked={},
                         ignore_case=False, unknown=UNKNOWN)
    assert figure.differing == [
        ReadingDifference(1, "No", UNKNOWN, 1.0, 0.0),
        ReadingDifference(2, "No", UNKNOWN, 1.0, 0.0),
        ReadingDifference(3, UNKNOWN, "Yes", 0.0, 1.0),
    ]
    assert figure.notes == [
        "3 reply/replies VLMEvalKit's rule leaves Unknown and vlmkit read were asked of the judge for this figure "
        "(VLMEvalKit sends every such reply to its judge)",
        # only `N/A` (row 2): the reply `NaN` is the text nan already
        "1 reply/replies (empty, or a text pandas reads as NaN such as None, N/A, NA, null) are the text 'nan' to "
        "VLMEvalKit, a quirk of its xlsx round trip; vlmkit reads the reply given: index 2",
    ]


def test_a_row_without_a_question_is_judged_with_an_empty_one() -> None:
    df = pd.DataFrame({"index": [1], "prediction": ["perhaps"], "answer": ["Yes"], "question": [None]})
    mine = pd.DataFrame({"index": [1], "extracted": [UNKNOWN], "hit": [False]})
    judge = FunctionJudge(lambda request: "Yes")
    seen: list[pd.DataFrame] = []
    yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_rate(seen), judge=judge, asked={}, ignore_case=False,
                unknown=UNKNOWN)
    assert [r.prompt for r in judge.asked] == [yorn_judge_prompt("", "perhaps")]
    assert seen[0]["extracted"].tolist() == ["Yes"] and seen[0]["hit"].tolist() == [True]


@pytest.mark.parametrize("ignore_case", [False, True])
def test_no_judge_and_every_row_read(ignore_case: bool) -> None:
    df = pd.DataFrame({"index": ["a", "b"], "prediction": ["Yes.", "no!"], "answer": ["Yes", "No"]})
    mine = pd.DataFrame({"index": ["a", "b"], "extracted": ["Yes", "No"], "hit": [True, True]})
    seen: list[pd.DataFrame] = []
    figure = yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_rate(seen), judge=None, asked={},
                         ignore_case=ignore_case, unknown=UNKNOWN)
    assert seen[0]["target"].tolist() == ["Yes", "No"] and figure.metrics == {"acc": 1.0}
    assert figure.differing == [] and figure.notes == []
