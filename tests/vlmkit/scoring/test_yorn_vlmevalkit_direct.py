"""vlmkit.scoring.kinds.yorn_vlmevalkit.yorn_figure: VLMEvalKit's Y/N figure from the replies vlmkit scored, on a
hand-worked table: its rule on the xlsx round trip's cells, the judge step (every reply its rule leaves Unknown,
vlmkit's own verdicts reused where the prompt is the same), exact or case-blind answers, and the rows listed as
differing."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.choice_judge import YORN_TEMPERATURES, Judged, yorn_judge_prompt
from vlmkit.scoring.kinds.yorn import vlmevalkit_yes_no
from vlmkit.scoring.kinds.yorn_vlmevalkit import yorn_figure
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference

UNKNOWN = "Unknown"


def _accuracy(seen: list[pd.DataFrame]):
    """A report: the share of hits (what the real reports aggregate), keeping the rows it was given."""

    def rate(rows: pd.DataFrame, notes: list[str]) -> tuple[dict[str, float], pd.DataFrame, str]:
        seen.append(rows)
        return {"Overall": float(rows["hit"].mean())}, rows, "Overall"

    return rate


def _table(questions: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = pd.DataFrame({
        "index": [1, 2, 3, 4, 5, 6, 7],
        "prediction": ["Yes, it is.", "no", "maybe yes, maybe no", "I think so", None, "NA", "nan"],
        "answer": ["Yes", "No", "Yes", "Yes", "No", "No", "No"],
    })
    if questions:
        df["question"] = [f"Is it {c}" for c in ("red", "blue", "big", "round", "wet", "old", "new")]
    # vlmkit's own reading (its rules differ: it reads `I think so`, and `NA` as No)
    mine = pd.DataFrame({
        "index": df["index"],
        "extracted": ["Yes", "No", UNKNOWN, "Yes", UNKNOWN, "No", UNKNOWN],
        "hit": [True, True, False, True, False, True, False],
    })
    return df, mine


def test_rules_alone_read_the_round_trip_cells_and_list_the_rows_read_apart():
    df, mine = _table()
    seen: list[pd.DataFrame] = []
    figure = yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_accuracy(seen), judge=None, asked={},
                         ignore_case=False, unknown=UNKNOWN)
    rows = seen[0]
    # `NA` and `nan` are the text nan after the round trip: Unknown; row 5's call failed
    assert rows["extracted"].tolist() == ["Yes", "No", UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN]
    assert rows["hit"].tolist() == [True, True, False, False, False, False, False]
    assert rows["target"].tolist() == ["Yes", "No", "Yes", "Yes", "No", "No", "No"]
    assert figure.metrics == {"Overall": pytest.approx(2 / 7)} and figure.primary == "Overall"
    assert figure.differing == [ReadingDifference(4, "Yes", UNKNOWN, 1.0, 0.0),
                                ReadingDifference(6, "No", UNKNOWN, 1.0, 0.0)]
    # only `NA` is a reply the round trip turned into nan (the reply `nan` already was)
    assert len(figure.notes) == 1 and figure.notes[0].startswith("1 reply/replies") and "index 6" in figure.notes[0]


def test_answers_compared_case_blind_for_amber_and_targets_only_yes_or_no():
    df = pd.DataFrame({"index": [1, 2], "prediction": ["yes", "no"], "answer": ["yes", "maybe"]})
    mine = pd.DataFrame({"index": [1, 2], "extracted": ["Yes", "No"], "hit": [True, False]})
    for ignore_case, hits in ((True, [True, False]), (False, [False, False])):
        seen: list[pd.DataFrame] = []
        yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_accuracy(seen), judge=None, asked={},
                    ignore_case=ignore_case, unknown=UNKNOWN)
        assert seen[0]["hit"].tolist() == hits
        assert seen[0]["target"].tolist() == [None, None]


def _judge(replies: dict[str, str]) -> FunctionJudge:
    def answer(request: JudgeRequest) -> str:
        for reply, verdict in replies.items():
            if f"Answer: {reply}\n" in request.prompt:
                return verdict
        raise AssertionError(f"unexpected prompt {request.prompt!r}")

    return FunctionJudge(answer)


def test_every_reply_the_rule_leaves_unknown_goes_to_the_judge_but_failed_calls():
    df, mine = _table()
    judge = _judge({"maybe yes, maybe no": "Yes", "I think so": "Yes", "nan": "Unknown"})
    seen: list[pd.DataFrame] = []
    figure = yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_accuracy(seen), judge=judge, asked={},
                         ignore_case=False, unknown=UNKNOWN)
    assert seen[0]["extracted"].tolist() == ["Yes", "No", "Yes", "Yes", UNKNOWN, UNKNOWN, UNKNOWN]
    assert figure.metrics["Overall"] == pytest.approx(4 / 7)
    # rows 3, 4, 6 and 7 asked (6 and 7 as `nan`), the two `nan` ones in all five rounds; row 5 (failed) never
    prompts = [r.prompt for r in judge.asked]
    assert prompts.count(yorn_judge_prompt("Is it round", "I think so")) == 1
    assert prompts.count(yorn_judge_prompt("Is it old", "nan")) == len(YORN_TEMPERATURES)
    assert len(prompts) == 2 + 2 * len(YORN_TEMPERATURES)
    assert sorted({r.temperature for r in judge.asked}) == list(YORN_TEMPERATURES)
    assert figure.notes[0].startswith("4 reply/replies VLMEvalKit's rule leaves Unknown")


def test_vlmkits_own_verdicts_are_reused_only_for_the_same_prompt():
    df, mine = _table()
    judge = _judge({"I think so": "No", "nan": "No"})
    asked = {
        2: (yorn_judge_prompt("Is it big", "maybe yes, maybe no"), Judged("judge", "No", "No")),  # the same prompt
        3: ("another prompt", Judged("judge", "Yes", "Yes")),  # asked otherwise: asked again
        5: (yorn_judge_prompt("Is it old", "nan"), Judged("judge_unread", None, "hmm")),  # unread stays Unknown
    }
    seen: list[pd.DataFrame] = []
    figure = yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_accuracy(seen), judge=judge, asked=asked,
                         ignore_case=False, unknown=UNKNOWN)
    assert seen[0]["extracted"].tolist() == ["Yes", "No", "No", "No", UNKNOWN, UNKNOWN, "No"]
    assert [r.prompt for r in judge.asked] == [yorn_judge_prompt("Is it round", "I think so"),
                                               yorn_judge_prompt("Is it new", "nan")]
    assert figure.notes[0].startswith("2 reply/replies")


def test_without_a_question_column_nothing_is_judged():
    df, mine = _table(questions=False)
    judge = _judge({})
    seen: list[pd.DataFrame] = []
    figure = yorn_figure(df, mine, read=vlmevalkit_yes_no, rate=_accuracy(seen), judge=judge, asked={},
                         ignore_case=False, unknown=UNKNOWN)
    assert judge.asked == [] and seen[0]["extracted"].tolist()[2:4] == [UNKNOWN, UNKNOWN]
    assert not any("asked of the judge" in note for note in figure.notes)
