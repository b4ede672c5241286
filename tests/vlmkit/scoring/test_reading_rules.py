"""Answer-reading rules that each need a case of their own: the yes/no reader's last-word rule (replies whose only
answer is their last word, where VLMEvalKit's rule sees both words), VLMEvalKit's yes/no rule itself (it also reads
the judge's replies), and ANLS's default threshold of 0.5 (a similarity between 0.4 and 0.5). Every expected value
is read off the reply by hand or worked out from the documented formula."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.kinds.vqa import anls, score_vqa
from vlmkit.scoring.kinds.yorn import extract_yes_no, score_yorn, vlmevalkit_yes_no

# Replies whose answer is their last word, with the other word earlier in a place that is no answer: the first
# word, the whole reply, a sentence alone and the word after "Answer" read nothing, and VLMEvalKit's rule sees both
# "yes" and "no" and gives up.
LAST_WORD = [
    ("The sign says no parking, but the question asks if there is a car: yes", "Yes"),
    ("Although the label says yes on it, the real answer here is clearly no", "No"),
    ("There is no dog in the photo, but is there a cat on the sofa? yes", "Yes"),
]


@pytest.mark.parametrize("reply, expected", LAST_WORD)
def test_the_last_word_is_an_answer_position(reply: str, expected: str) -> None:
    assert extract_yes_no(reply) == expected
    assert vlmevalkit_yes_no(reply) == "Unknown"  # both words occur: this case needs the last-word rule


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("Yes", "Yes"),
        ("no.", "No"),
        ("YES, it is.", "Yes"),  # lower-cased, the comma dropped
        ("Yes!", "Yes"),
        ('"yes"', "Yes"),
        ("NO, it is not", "No"),
        ("The answer: no", "No"),
        ("I would say yes", "Yes"),  # anywhere in the reply
        ("yes and no", "Unknown"),  # both words
        ("no, yes", "Unknown"),
        ("yes/no", "Unknown"),
        ("yesterday it was sunny", "Unknown"),  # a whole word, never a substring
        ("Nope", "Unknown"),  # only the word "no" itself
        ("not at all", "Unknown"),
        ("It is unknown", "Unknown"),
        ("", "Unknown"),
        (None, "Unknown"),
        (math.nan, "Unknown"),
    ],
)
def test_vlmevalkits_yes_no_rule(reply: object, expected: str) -> None:
    assert vlmevalkit_yes_no(reply) == expected


def test_the_careful_reader_and_vlmevalkits_rule_differ_where_documented() -> None:
    assert (extract_yes_no("Nope"), vlmevalkit_yes_no("Nope")) == ("No", "Unknown")
    assert (extract_yes_no("Yes, no doubt"), vlmevalkit_yes_no("Yes, no doubt")) == ("Yes", "Unknown")


def _keyed(replies: dict[str, str]) -> FunctionJudge:
    """A judge answering each row from a key: the row's index -> its reply."""

    def answer(request: JudgeRequest) -> str:
        return replies[request.row or ""]

    return FunctionJudge(answer, name="keyed")


def test_the_judges_replies_are_read_with_vlmevalkits_rule() -> None:
    rows = [
        (1, "Hmm, hard to say.", "Yes"),  # judge: "Yes, it is." -> Yes, a hit
        (2, "Perhaps.", "No"),  # judge: "NO." -> No, a hit
        (3, "Could be.", "Yes"),  # judge: "Nope" -> VLMEvalKit's rule reads nothing: asked again, then unread
        (4, "Who knows.", "No"),  # judge: "yes and no" -> nothing, unread
        (5, "Unclear.", "Yes"),  # judge: "I would say yes" -> Yes
    ]
    df = pd.DataFrame([{"index": i, "question": "Q?", "prediction": p, "answer": a} for i, p, a in rows])
    judge = _keyed({"1": "Yes, it is.", "2": "NO.", "3": "Nope", "4": "yes and no", "5": "I would say yes"})
    res = score_yorn(df, "acc", judge=judge)
    ps = res.per_sample.set_index("index")
    assert ps["extracted"].tolist() == ["Yes", "No", "Unknown", "Unknown", "Yes"]
    assert ps["method"].tolist() == ["judge", "judge", "judge_unread", "judge_unread", "judge"]
    assert ps["hit"].tolist() == [True, True, False, False, True]
    assert (res.counts["by_judge"], res.counts["unread"], res.counts["hits"]) == (3, 2, 3)
    # a reply read at the first try is asked once; an unreadable one at each of the 5 temperatures
    asked = sorted((r.row, r.attempt) for r in judge.asked)
    assert [a for r, a in asked if r == "1"] == [0]
    assert [a for r, a in asked if r == "3"] == [0, 1, 2, 3, 4]


def test_anls_default_threshold_is_one_half() -> None:
    answer = "abcdefghijklmnopqrst"  # 20 characters
    # "abcdefghi": 11 deletions -> similarity 1 - 11/20 = 0.45, under 0.5: no credit, though 0.4 would give it
    assert anls("abcdefghi", [answer]) == 0.0
    assert anls("abcdefghi", [answer], threshold=0.4) == pytest.approx(0.45)
    # "abcdefghijk": 9 deletions -> 0.55, kept whole
    assert anls("abcdefghijk", [answer]) == pytest.approx(0.55)
    # exactly 0.5 (10 deletions) is kept
    assert anls("abcdefghij", [answer]) == pytest.approx(0.5)
    # the table scorer uses the same default: (0 + 55 + 50) / 3 rows, x100
    df = pd.DataFrame({"index": [1, 2, 3], "prediction": ["abcdefghi", "abcdefghijk", "abcdefghij"],
                       "answer": [answer] * 3})
    assert score_vqa(df, "anls").metrics["Overall"] == pytest.approx(35.0)


def test_anls_compares_case_and_white_space_blind_and_takes_the_best_answer() -> None:
    # "kitten" vs "sitting": 3 edits over 7 characters -> 4/7
    assert anls("Kitten", ["sitting"]) == pytest.approx(4 / 7)
    assert anls("  the   CAT ", ["the cat"]) == 1.0
    assert anls("kitten", ["zzzzzzzzzz", "sitting", "kitchen"]) == pytest.approx(5 / 7)  # kitchen: 2 edits of 7
    assert anls("", [""]) == 1.0  # both empty
    assert anls("abc", []) == 0.0
