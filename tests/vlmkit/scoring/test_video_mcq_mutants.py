"""vlmkit.scoring.kinds.video_mcq against second implementations written here (issue 31's mutation round).

- The letter rules: VLMEvalKit's `extract_characters_regex` (utils/videomme.py and utils/longvideobench.py at
  e8e78f05) written out with its prefix list as it runs (two missing commas) and with the list vlmkit means, on
  random replies.
- Video-MME, LongVideoBench and MVBench scored on tables that reach every path (rule, judge, Z, unread, a failed
  judge call, a failed inference, replies pandas reads back as NaN, option lines in the question); the figures are
  recomputed here with loops from VLMEvalKit's get_dimension_rating and the per-row outcomes worked by hand.
"""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.kinds.video_mcq import (
    ask_unread,
    candidate_list,
    candidate_options,
    method_counts,
    mvbench_first_word,
    mvbench_target,
    score_longvideobench,
    score_mvbench,
    score_videomme,
    videomme_letter,
    videomme_vlmevalkit_readings,
)
from vlmkit.scoring.kinds.video_mcq import _question_options, vlmevalkit_videomme_letter

# -- the letter rule -----------------------------------------------------------------------------------------------
THEIR_PREFIXES = [  # VLMEvalKit's list as Python reads it: 'The best option is' 'The correct option is' is one string
    "The best answer is", "The correct answer is", "The answer is", "The answer",
    "The best option is" "The correct option is", "Best answer:" "Best option:", "Answer:", "Option:",
]  # fmt: skip
OUR_PREFIXES = [
    "The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
    "The correct option is", "Best answer:", "Best option:", "Answer:", "Option:",
]  # fmt: skip


def _extract(s: str, prefixes: list[str], letters: str) -> str | None:
    """extract_characters_regex written out (its empty string as None)."""
    s = s.strip()
    for prefix in prefixes:
        s = s.replace(prefix, "")
    if len(s.split()) > 10 and not re.search(f"[{letters}]", s):
        return None
    found = re.search(f"[{letters}]", s)
    return found[0] if found else None


FRAGMENTS = ["The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
             "The correct option is", "Best answer:", "Best option:", "Answer:", "Option:", "A", "B", "C", "D", "E",
             "F", "X", "a", "b", "e", "(C)", "E.", "none", "word", "Zebra", " ", "\n", ".", "Cat", "Dog", "Eel"]


@pytest.mark.parametrize("letters", ["ABCD", "ABCDE"])
def test_letter_rules_match_vlmevalkits_code_on_random_replies(letters: str) -> None:
    rng = random.Random(len(letters))
    for _ in range(400):
        reply = " ".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 7)))
        assert videomme_letter(reply, letters) == _extract(reply, OUR_PREFIXES, letters), reply
        records = [{"index": 0, "prediction": reply, "answer": "A", "question": "Q?"}]
        theirs, _, _, _ = videomme_vlmevalkit_readings(records, [False], letters)
        cell = reply if reply.strip() else None  # a blank reply is NaN after the xlsx round trip: `nan`, no letter
        expected = _extract(cell, THEIR_PREFIXES, letters) if cell is not None else None
        assert theirs == [expected], reply


def test_each_prefix_holding_a_capital_is_removed_by_vlmkit() -> None:
    assert videomme_letter("Best answer: C") == "C" and videomme_letter("Best option: D") == "D"
    assert videomme_letter("Answer: C") == "C" and videomme_letter("Answer:B") == "B"
    assert videomme_letter("E", "ABCDE") == "E" and videomme_letter("E") is None
    assert videomme_letter("X") is None and videomme_letter("X", "ABCDE") is None
    assert videomme_letter("  D  ") == "D"


# -- candidates ----------------------------------------------------------------------------------------------------
def test_candidate_lists_and_options() -> None:
    assert candidate_list(["a", 1], "w") == ["a", "1"]
    assert candidate_list(("a", "b"), "w") == ["a", "b"]
    assert candidate_list(np.array(["x", "y"]), "w") == ["x", "y"]
    assert candidate_list('["a", "b"]', "w") == ["a", "b"]
    assert candidate_list("['it''s', 2]", "w") == ["its", "2"]  # a Python literal (adjacent strings join)
    assert candidate_list("('p', 'q')", "w") == ["p", "q"]
    assert candidate_list("[1, 2.5]", "w") == ["1", "2.5"]
    for bad in ('{"a": 1}', "5", "not a list", "[unclosed", 7, None):
        with pytest.raises(ValueError) as err:
            candidate_list(bad, "Video-MME: row index 3, field `candidates`")
        assert str(err.value) == f"Video-MME: row index 3, field `candidates`: not a list of candidates: {str(bad)!r}"
    with pytest.raises(ValueError) as err:
        candidate_list("x" * 100, "w")
    assert str(err.value) == f"w: not a list of candidates: {'x' * 80!r}"
    assert candidate_options(["A. red", "B.green", "C blue", "D.  white  ", "E. A. nested"]) == {
        "A": "red", "B": "green", "C": "C blue", "D": "white", "E": "A. nested"}
    assert candidate_options(["B. off by one", "A. swapped"]) == {"A": "B. off by one", "B": "A. swapped"}


def test_mvbench_target_is_the_last_equal_candidate() -> None:
    assert mvbench_target(["a", "b", "a"], "a") == ("C", "(C) a")
    assert mvbench_target(["x", "y"], "x") == ("A", "(A) x")
    assert mvbench_target([1, 2], "2") == ("B", "(B) 2")
    with pytest.raises(ValueError) as err:
        mvbench_target(["x", "y"], "z")
    assert str(err.value) == "answer 'z' is not one of the candidates"


def test_mvbench_first_word_rule_cases() -> None:
    assert mvbench_first_word("B", "(B) stand") and mvbench_first_word("b.", "(B) stand")
    assert mvbench_first_word("(b)stand", "(B) stand")  # holds `(b)`
    assert mvbench_first_word("x(b)", "(B) stand")
    assert not mvbench_first_word("(c)", "(B) stand") and not mvbench_first_word(".", "(B) stand")
    assert not mvbench_first_word(")", "(B) stand")
    assert mvbench_first_word("B stand", "(b) stand")  # case-blind on both sides


def test_method_counts_by_hand() -> None:
    methods = ["rule", "rule", "judge", "unparsed", "judge_unread", "judge_error", "inference_error", "other"]
    assert method_counts(methods, 9) == {"total": 9, "scored": 9, "by_rule": 2, "by_judge": 1, "unread": 2,
                                         "judge_errors": 1, "inference_errors": 1}


# -- Video-MME -----------------------------------------------------------------------------------------------------
OPTS = "['A. red', 'B. green', 'C. blue', 'D. white']"
VIDEOMME = [
    # groups first met in an order other than sorted (Knowledge before Arts, z1 before s2, u1 before t2)
    # index, prediction, answer, duration, domain, sub_category, task_type, question
    (0, "A", "A", "short", "Knowledge", "z1", "u1", "Q0"),
    (1, "Best answer: C", "C", "short", "Knowledge", "s2", "t2", "Q1"),  # VLMEvalKit reads the B of Best
    (2, "The answer is D", "D", "medium", "Arts", "z1", "u1", "Q2"),
    (3, "I have no clue", "B", "medium", "Arts", "s3", "t2", "Q3"),  # no rule: the judge says B
    (4, None, "A", "long", "Knowledge", "z1", "u1", "Q4"),  # failed inference
    (5, "N/A", "B", "long", "Arts", "s2", "t3", "Q5"),  # vlmkit reads the A of N/A; VLMEvalKit reads NaN: `nan`
    (6, "none of these", "C", "epic", "Knowledge", "s3", "t3", "Q6"),  # judge says Z; a duration outside the three
    (7, "the red one", "A", "short", "Arts", "z1", "t2", "Which?\nA. red\nB. green"),  # judge call fails;
    # VLMEvalKit finds options in the question's lines and reads A (red) from the text
    (8, "hmm", "D", "medium", "Knowledge", "s2", "u1", "Q8"),  # the judge never names an option
]
JUDGE_SAYS = {"I have no clue": "B", "none of these": "Z", "hmm": "I am not sure"}
OURS = [("A", True), ("C", True), ("D", True), ("B", True), (None, False), ("A", False), (None, False), (None, False),
        (None, False)]
THEIRS = [("A", True), ("B", False), ("D", True), (None, False), (None, False), (None, False), (None, False),
          ("A", True), (None, False)]


def _videomme_df() -> pd.DataFrame:
    return pd.DataFrame([
        {"index": i, "prediction": p, "answer": a, "duration": d, "domain": dom, "sub_category": s, "task_type": t,
         "question": q, "candidates": OPTS}
        for i, p, a, d, dom, s, t, q in VIDEOMME
    ])  # fmt: skip


def _prediction_in(request: JudgeRequest) -> str:
    return request.prompt.rsplit("Answer: ", 1)[1].split("\nYour output")[0]


def _letter_judge(says: dict[str, str]) -> FunctionJudge:
    def answer(request: JudgeRequest) -> str:
        reply = _prediction_in(request)
        if reply not in says:
            raise ConnectionError("judge down")
        return says[reply]

    return FunctionJudge(answer, "letters")


def _rating(rows: list[tuple], hits: list[bool]) -> tuple[dict[str, float], list[dict[str, float]]]:
    """get_dimension_rating with loops: (metrics, table rows) over the given rows and hits."""
    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else math.nan

    groups = {"domain": 4, "sub_category": 5, "task_type": 6}
    present = [d for d in ("short", "medium", "long") if any(r[3] == d for r in rows)]
    metrics = {"Overall": mean([float(h) for h in hits])}
    for d in present:
        metrics[d] = mean([float(h) for r, h in zip(rows, hits) if r[3] == d])
    for group, col in groups.items():
        for value in sorted({r[col] for r in rows}):
            metrics[f"{group}: {value}"] = mean([float(h) for r, h in zip(rows, hits) if r[col] == value])
    table = []
    for d in (*present, "overall"):
        part = [(r, h) for r, h in zip(rows, hits) if d == "overall" or r[3] == d]
        row = {"duration": d, "Overall": mean([float(h) for _, h in part])}
        for group, col in groups.items():
            for value in sorted({r[col] for r in rows}):
                row[f"{group}: {value}"] = mean([float(h) for r, h in part if r[col] == value])
        table.append(row)
    return metrics, table


def _cells(series: pd.Series) -> list:
    """A per-sample column as values, None for an empty cell (pandas may hold it as NaN)."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in series.tolist()]


def _same(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(
        (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k])) or a[k] == pytest.approx(b[k]) for k in a)


def test_videomme_every_path_by_hand() -> None:
    judge = _letter_judge(JUDGE_SAYS)
    result = score_videomme(_videomme_df(), judge=judge)
    per = result.per_sample
    assert list(per.columns) == ["index", "extracted", "hit", "method", "judge", "vlmevalkit", "vlmevalkit_hit"]
    assert _cells(per["extracted"]) == [o[0] for o in OURS]
    assert per["hit"].tolist() == [o[1] for o in OURS]
    assert per["method"].tolist() == ["rule", "rule", "rule", "judge", "inference_error", "rule", "judge",
                                      "judge_error", "judge_unread"]
    assert _cells(per["judge"]) == [None, None, None, "B", None, None, "Z", None, "I am not sure"]
    assert _cells(per["vlmevalkit"]) == [t[0] for t in THEIRS]
    assert per["vlmevalkit_hit"].tolist() == [t[1] for t in THEIRS]
    metrics, table = _rating(VIDEOMME, [o[1] for o in OURS])
    assert _same(result.metrics, metrics)
    assert len(result.table) == len(table)
    for got, want in zip(result.table.to_dict("records"), table):
        assert _same(got, want), want["duration"]
    their_metrics, _ = _rating(VIDEOMME, [t[1] for t in THEIRS])
    assert result.vlmevalkit.metrics == {k: round(v, 3) for k, v in their_metrics.items()}
    assert result.vlmevalkit.metrics["medium"] == 0.333 and result.vlmevalkit.primary == "Overall"
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score)
            for d in result.vlmevalkit.differing] == [
        (1, "C", "B", 1.0, 0.0), (3, "B", None, 1.0, 0.0), (5, "A", None, 0.0, 0.0), (7, None, "A", 0.0, 1.0)]
    assert result.counts == {"total": 9, "scored": 9, "by_rule": 4, "by_judge": 2, "unread": 1, "judge_errors": 1,
                             "inference_errors": 1, "vlmevalkit_nan_replies": 1}
    assert (result.scorer, result.primary, result.table_suffix, result.scale.kind) == (
        "videomme", "Overall", "acc", "fraction")
    notes = result.notes
    assert notes[0].startswith("Video-MME letter rule: VLMEvalKit's answer-prefix list lacks two commas")
    assert notes[1].startswith("Video-MME judge fallback:") and notes[2].startswith("a failed inference is a miss")
    assert notes[3] == "durations other than short/medium/long (epic) count in overall only"
    assert any(n.startswith("1 answer(s) the judge's replies never named an option") for n in notes)
    assert any(n.startswith("1 judge call(s) failed") for n in notes)
    assert notes[-1].startswith("1 reply/replies (empty, or a text pandas reads as NaN") and notes[-1].endswith(
        "vlmkit reads the reply itself: index 5")
    fig_notes = result.vlmevalkit.notes
    assert fig_notes[0] == "VLMEvalKit prints Video-MME's figures rounded to 3 decimals; so does this figure"
    assert fig_notes[1].startswith("VLMEvalKit's fallback for a reply its letter rule cannot read")
    assert fig_notes[2].endswith("index 5")
    assert fig_notes[3] == ("1 row(s) whose question holds option lines would go to VLMEvalKit's judge; counted here "
                            "as its rule reads them (misses where it reads nothing)")
    # the judge was asked for the four rows no rule read, with the row's candidates as options
    asked = {r.row: r for r in judge.asked}
    assert sorted(asked) == ["3", "6", "7", "8"]
    assert "Options: A. red\nB. green\nC. blue\nD. white" in asked["3"].prompt or "A. red" in asked["3"].prompt
    assert "Question: Q3?" in asked["3"].prompt
    assert _prediction_in(asked["8"]) == "hmm"


def test_videomme_without_a_judge() -> None:
    df = _videomme_df()
    result = score_videomme(df)
    per = result.per_sample
    assert per["method"].tolist() == ["rule", "rule", "rule", "unparsed", "inference_error", "rule", "unparsed",
                                      "unparsed", "unparsed"]
    assert _cells(per["judge"]) == [None] * 9
    assert per["hit"].tolist() == [True, True, True, False, False, False, False, False, False]
    assert result.counts["unread"] == 4 and result.counts["by_judge"] == 0
    assert "rules only (no --judge): 4 answers no rule could read count as misses" in result.notes
    assert len(result.vlmevalkit.notes) == 3  # no judge: no note on the rows VLMEvalKit would ask its judge
    # a table without unknown durations or NaN replies has neither note nor count
    clean = df[df["index"].isin([0, 1, 2])]
    result = score_videomme(clean)
    assert not any(n.startswith("durations other than") for n in result.notes)
    assert "vlmevalkit_nan_replies" not in result.counts and len(result.vlmevalkit.notes) == 2
    assert result.table["duration"].tolist() == ["short", "medium", "overall"]  # no long rows: no long figure
    assert "long" not in result.metrics
    with pytest.raises(ValueError, match=r"^Video-MME: row index 0, field `candidates`: not a list"):
        score_videomme(clean.assign(candidates="A. red"))


def test_vlmevalkit_readings_of_option_lines_and_failed_rows() -> None:
    records = [
        {"index": 0, "prediction": "the green one", "answer": "B", "question": "Which?\nA. red.\nB. green\nthird"},
        {"index": 1, "prediction": "Answer: C", "answer": "C", "question": "Q?"},
        {"index": 2, "prediction": "A", "answer": "A", "question": "Q?"},  # failed: not read at all
        {"index": 3, "prediction": "nan", "answer": "A", "question": "Q?"},  # the text nan: not a NaN row to note
        {"index": 4, "prediction": "third", "answer": "C", "question": "Which?\nA. x\nB. y\nC. third"},
        {"index": 5, "prediction": "yellow", "answer": "B", "question": "Q\nB. red\nA. yellow"},  # `A.` in line 2
    ]
    readings, hits, nan_rows, asked = videomme_vlmevalkit_readings(records, [False, False, True, False, False,
                                                                             False])
    assert readings == ["B", "C", None, None, "C", None]
    assert hits == [True, True, False, False, True, False]
    assert nan_rows == [] and asked == [0, 4]  # row 5's `A.` is on the line that would be B's


def test_question_option_lines_as_vlmevalkits_extract_option_finds_them() -> None:
    # line k after the first holds letter k's tag somewhere; the text after its first occurrence, stripped of ". \n"
    question = "Which one?\nA. red.\nB.  green A. B. \nno tag here\nsee D. blue..\nE.\tpink"
    assert _question_options(question) == {"A": "red", "B": "green A. B", "D": "blue", "E": "\tpink"}
    assert _question_options("A. only the first line") == {}
    assert _question_options("Q\n\nB. second") == {"B": "second"}
    assert _question_options("Q\nA. one A. two") == {"A": "one A. two"}


# -- LongVideoBench ------------------------------------------------------------------------------------------------
def test_longvideobench_every_path_by_hand() -> None:
    rows = [
        # index, prediction, answer, duration_group, question_category, candidates
        (0, "E", "E", 15, "S2E", ["a", "b", "c", "d", "e"]),
        (1, "Best option: C", "C", 15, "S2E", ["a", "b", "c"]),  # VLMEvalKit: B
        (2, "no idea", "A", 600, "T3O", ["ann", "bob"]),  # the judge says A
        (3, None, "B", 600, "T3O", ["x", "y"]),  # failed inference
        (4, "", "A", 60, "S2E", ["x", "y"]),  # blank: `nan` to VLMEvalKit; the judge fails
        (5, "X marks it", "A", 60, "T3O", ["x", "y"]),  # X is no letter: the judge says Z
    ]
    df = pd.DataFrame([{"index": i, "prediction": p, "answer": a, "duration_group": d, "question_category": c,
                        "candidates": str(cands), "question": f"Q{i}"} for i, p, a, d, c, cands in rows])
    judge = _letter_judge({"no idea": "A", "X marks it": "Z"})
    result = score_longvideobench(df, judge=judge)
    per = result.per_sample
    assert list(per.columns) == ["index", "extracted", "hit", "method", "judge", "vlmevalkit", "vlmevalkit_hit"]
    assert _cells(per["extracted"]) == ["E", "C", "A", None, None, None]
    assert per["hit"].tolist() == [True, True, True, False, False, False]
    assert per["method"].tolist() == ["rule", "rule", "judge", "inference_error", "judge_error", "judge"]
    assert _cells(per["judge"]) == [None, None, "A", None, None, "Z"]
    assert _cells(per["vlmevalkit"]) == ["E", "B", None, None, None, None]
    assert per["vlmevalkit_hit"].tolist() == [True, False, False, False, False, False]
    ours = {"Overall": 3 / 6, "duration_group: 15": 1.0, "duration_group: 60": 0.0, "duration_group: 600": 0.5,
            "question_category: S2E": 2 / 3, "question_category: T3O": 1 / 3}
    assert result.metrics == pytest.approx(ours) and list(result.metrics) == list(ours)
    assert result.vlmevalkit.metrics == {"Overall": 0.167, "duration_group: 15": 0.5, "duration_group: 60": 0.0,
                                         "duration_group: 600": 0.0, "question_category: S2E": 0.333,
                                         "question_category: T3O": 0.0}
    assert result.vlmevalkit.primary == "Overall"
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score)
            for d in result.vlmevalkit.differing] == [(1, "C", "B", 1.0, 0.0), (2, "A", None, 1.0, 0.0)]
    assert result.vlmevalkit.notes == [
        "VLMEvalKit prints LongVideoBench's figures rounded to 3 decimals; so does this figure",
        "VLMEvalKit's fallback for a reply its letter rule cannot read finds no options in the stored LongVideoBench "
        "question, so neither can_infer nor its judge can name one: those rows are misses in its figure"]
    assert result.table.to_dict("records") == [pytest.approx({"split": "none", **ours})]
    assert result.counts == {"total": 6, "scored": 6, "by_rule": 2, "by_judge": 2, "unread": 0, "judge_errors": 1,
                             "inference_errors": 1, "vlmevalkit_nan_replies": 1}
    assert (result.scorer, result.primary, result.table_suffix, result.scale.kind) == (
        "longvideobench", "Overall", "acc", "fraction")
    assert result.notes[0].startswith("LongVideoBench (Video-MME's) letter rule: VLMEvalKit's answer-prefix list")
    assert result.notes[1].startswith("a failed inference is a miss")
    assert result.notes[-1].endswith("vlmkit reads the reply itself: index 4")
    asked = {r.row: r for r in judge.asked}
    assert sorted(asked) == ["2", "4", "5"]
    assert "A. ann" in asked["2"].prompt and "B. bob" in asked["2"].prompt and "Question: Q2?" in asked["2"].prompt
    plain = score_longvideobench(df)
    assert plain.per_sample["method"].tolist() == ["rule", "rule", "unparsed", "inference_error", "unparsed",
                                                   "unparsed"]
    assert "rules only (no --judge): 3 answers no rule could read count as misses" in plain.notes
    with pytest.raises(ValueError, match=r"^LongVideoBench: row index 0, field `candidates`: not a list"):
        score_longvideobench(df.assign(candidates="a, b"))


# -- MVBench -------------------------------------------------------------------------------------------------------
MVBENCH = [
    # index, prediction, answer, candidates, task_type
    (0, "(B) stand", "stand", ["sit", "stand", "run"], "T2"),  # first word: right on both
    (1, " B", "stand", ["sit", "stand", "run"], "T2"),  # vlmkit: blank first word, can_infer reads B; VLMEvalKit
    # strips first: b, right
    (2, "C", "stand", ["sit", "stand", "run"], "T1"),  # can_infer: C, wrong on both
    (3, "", "stand", ["sit", "stand", "run"], "T1"),  # judge says B; VLMEvalKit: NaN, counted right
    (4, "nan", "run", ["sit", "stand", "run"], "T1"),  # judge says Z; VLMEvalKit: NaN (not noted), right
    (5, None, "sit", ["sit", "stand"], "T2"),  # failed: a miss on both
    (6, "(c)", "a", ["a", "b", "a"], "T1"),  # the last equal candidate: C
    (7, "b.", "y", ["x", "y"], "T3"),
    (8, "Cannot determine the answer", "y", ["x", "y"], "T3"),  # a refusal: can_infer says Z, a miss by rule
    (9, "hmm", "x", ["x", "y"], "T3"),  # the judge fails
]


def _mvbench_df() -> pd.DataFrame:
    return pd.DataFrame([{"index": i, "prediction": p, "answer": a, "candidates": str(c), "task_type": t,
                          "question": f"Q{i}"} for i, p, a, c, t in MVBENCH])


def test_mvbench_every_path_by_hand() -> None:
    judge = _letter_judge({"": "B", "nan": "Z"})
    result = score_mvbench(_mvbench_df(), judge=judge, name="MVBench_MP4")
    per = result.per_sample
    assert list(per.columns) == ["index", "extracted", "hit", "method", "judge", "vlmevalkit", "vlmevalkit_hit"]
    assert _cells(per["extracted"]) == ["B", "B", "C", "B", None, None, "C", "B", None, None]
    assert per["hit"].tolist() == [True, True, False, True, False, False, True, True, False, False]
    assert per["method"].tolist() == ["rule", "rule", "rule", "judge", "judge", "inference_error", "rule", "rule",
                                      "rule", "judge_error"]
    assert _cells(per["judge"]) == [None, None, None, "B", "Z", None, None, None, None, None]
    assert _cells(per["vlmevalkit"]) == ["B", "B", "C", None, None, None, "C", "B", None, None]
    assert per["vlmevalkit_hit"].tolist() == [True, True, False, True, True, False, True, True, False, False]
    # tasks in order of first appearance: T2 (rows 0 1 5), T1 (2 3 4 6), T3 (7 8 9)
    ours = {"Overall": 50.0, "T2": 200 / 3, "T1": 50.0, "T3": 100 / 3}
    assert result.metrics == pytest.approx(ours) and list(result.metrics) == list(ours)
    assert result.table.to_dict("records") == [pytest.approx({"split": "none", **ours})]
    assert result.vlmevalkit.metrics == {"Overall": 60.0, "T2": 66.67, "T1": 75.0, "T3": 33.33}
    assert result.vlmevalkit.primary == "Overall"
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score)
            for d in result.vlmevalkit.differing] == [(3, "B", None, 1.0, 1.0), (4, None, None, 0.0, 1.0)]
    assert result.vlmevalkit.notes[0] == "VLMEvalKit prints MVBench's figures with 2 decimals; so does this figure"
    assert result.vlmevalkit.notes[1].endswith(
        "vlmkit reads the reply itself: index 3; VLMEvalKit counts them as right")
    assert result.counts == {"total": 10, "scored": 10, "by_rule": 6, "by_judge": 2, "unread": 0, "judge_errors": 1,
                             "inference_errors": 1, "correct: T2": 2, "correct: T1": 2, "correct: T3": 1,
                             "vlmevalkit_nan_replies": 1}
    assert (result.scorer, result.primary, result.table_suffix, result.scale.kind) == (
        "mvbench", "Overall", "acc", "percent")
    assert result.notes[0].startswith("MVBench first-word rule: VLMEvalKit counts a reply whose first word is empty")
    assert result.notes[1].startswith("a failed inference is a miss")
    assert any(n.startswith("1 judge call(s) failed") for n in result.notes)
    assert result.notes[-1].endswith("vlmkit reads the reply itself: index 3")
    asked = {r.row: r for r in judge.asked}
    assert sorted(asked) == ["3", "4", "9"]
    assert "A. sit" in asked["4"].prompt and "C. run" in asked["4"].prompt and "Question: Q4?" in asked["4"].prompt


def test_mvbench_without_a_judge_and_its_errors() -> None:
    df = _mvbench_df()
    result = score_mvbench(df)
    assert result.per_sample["method"].tolist() == ["rule", "rule", "rule", "unparsed", "unparsed",
                                                    "inference_error", "rule", "rule", "rule", "unparsed"]
    assert _cells(result.per_sample["judge"]) == [None] * 10
    assert result.metrics["Overall"] == pytest.approx(40.0)
    assert "rules only (no --judge): 3 answers no rule could read count as misses" in result.notes
    clean = df[df["index"].isin([0, 2])]
    result = score_mvbench(clean)
    assert "vlmevalkit_nan_replies" not in result.counts and len(result.vlmevalkit.notes) == 1
    assert result.vlmevalkit.metrics == {"Overall": 50.0, "T2": 100.0, "T1": 0.0}
    with pytest.raises(ValueError) as err:
        score_mvbench(clean.assign(answer="fly"), name="MVTamper")
    assert str(err.value) == "MVTamper: row index 0, field `answer`: answer 'fly' is not one of the candidates"
    with pytest.raises(ValueError, match=r"^MVTamper: row index 0, field `candidates`: not a list"):
        score_mvbench(clean.assign(candidates="sit"), name="MVTamper")


def test_ask_unread_keys_repeated_indices_apart() -> None:
    records = [{"index": 7, "question": "Q", "prediction": "p0"}, {"index": 7, "question": "Q", "prediction": "p1"},
               {"index": 8, "question": "R", "prediction": "p2"}]
    options = [{"A": "x", "B": "y"}, {"A": "x", "B": "y"}, {"A": "u", "B": "v"}]
    judge = _letter_judge({"p0": "A", "p1": "B"})
    verdicts = ask_unread(judge, records, options, [0, 1])
    assert {i: (v.method, v.value) for i, v in verdicts.items()} == {0: ("judge", "A"), 1: ("judge", "B")}
    assert [r.row for r in judge.asked] == ["7", "7#1"]
    assert [r.temperature for r in judge.asked] == [0.0, 0.0]


# -- cases added after the first mutation run ----------------------------------------------------------------------
def test_videomme_two_unknown_durations_and_the_figures_nan_note() -> None:
    df = _videomme_df()
    df.loc[df["index"] == 8, "duration"] = "tiny"
    result = score_videomme(df, judge=_letter_judge(JUDGE_SAYS))
    assert "durations other than short/medium/long (epic, tiny) count in overall only" in result.notes
    nan_note = [n for n in result.notes if n.startswith("1 reply/replies (empty")]
    assert nan_note and result.vlmevalkit.notes[2] == nan_note[0]
    assert "vlmkit reads the reply itself: index 5" in nan_note[0]
    assert result.per_sample["hit"].dtype == bool and result.per_sample["vlmevalkit_hit"].dtype == bool
    assert result.vlmevalkit.metrics["Overall"] == 0.333  # rows 0, 2 and 7 of 9


def test_each_scorer_names_itself_in_table_errors() -> None:
    with pytest.raises(ValueError, match=r"^Video-MME: the predictions table has no `domain` column"):
        score_videomme(_videomme_df().drop(columns="domain"))
    lvb = pd.DataFrame({"index": [0], "prediction": ["A"], "answer": ["A"], "question": ["Q"], "candidates": ["['x']"],
                        "duration_group": [15]})
    with pytest.raises(ValueError, match=r"^LongVideoBench: the predictions table has no `question_category` column"):
        score_longvideobench(lvb)
    with pytest.raises(ValueError, match=r"^MVBench: the predictions table has no `task_type` column"):
        score_mvbench(_mvbench_df().drop(columns="task_type"))
    with pytest.raises(ValueError, match=r"^MVT: the predictions table has no `task_type` column"):
        score_mvbench(_mvbench_df().drop(columns="task_type"), name="MVT")
    with pytest.raises(ValueError) as err:
        score_mvbench(_mvbench_df().assign(answer="fly"))
    assert str(err.value) == "MVBench: row index 0, field `answer`: answer 'fly' is not one of the candidates"


def test_question_option_text_keeps_its_x() -> None:
    assert _question_options("Q\nA. Xylophone X") == {"A": "Xylophone X"}


def test_vlmevalkits_letter_reads_a_to_d_by_default() -> None:
    assert vlmevalkit_videomme_letter("Best answer: C") == "B"
    assert vlmevalkit_videomme_letter("X a b c d E") is None
    assert vlmevalkit_videomme_letter("X a b E", "ABCDE") == "E"
    records = [{"index": 0, "prediction": "X marks E", "answer": "E", "question": "Q"}]
    assert videomme_vlmevalkit_readings(records, [False])[0] == [None]
    assert videomme_vlmevalkit_readings(records, [False], "ABCDE")[:2] == (["E"], [True])


def test_longvideobench_a_letter_read_differently_and_missed_by_both() -> None:
    df = pd.DataFrame([
        {"index": 0, "prediction": "Best answer: D", "answer": "A", "candidates": "['p', 'q', 'r', 's']"},
        {"index": 1, "prediction": "E", "answer": "E", "candidates": "['a', 'b', 'c', 'd', 'e']"},
        {"index": 2, "prediction": "zzz", "answer": "A", "candidates": "['a', 'b']"},
    ]).assign(question="Q", duration_group=15, question_category="S2E")
    result = score_longvideobench(df, judge=_letter_judge({}))  # the judge fails for row 2
    per = result.per_sample
    assert per["hit"].tolist() == [False, True, False] and per["hit"].dtype == bool
    assert _cells(per["extracted"]) == ["D", "E", None] and _cells(per["vlmevalkit"]) == ["B", "E", None]
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score)
            for d in result.vlmevalkit.differing] == [(0, "D", "B", 0.0, 0.0)]
    assert any(n.startswith("1 judge call(s) failed") for n in result.notes)
    assert not any(n.startswith("rules only") for n in result.notes)


def test_mvbench_first_word_after_vlmevalkits_strip() -> None:
    df = pd.DataFrame([
        {"index": 0, "prediction": "\tb. extra", "answer": "stand"},  # vlmkit reads nothing; VLMEvalKit: b. -> right
        {"index": 1, "prediction": "I think B", "answer": "stand"},  # no first word on both: can_infer's B
        {"index": 2, "prediction": "I think C", "answer": "stand"},
    ]).assign(candidates="['sit', 'stand', 'run']", task_type="T", question="Q")
    result = score_mvbench(df)
    per = result.per_sample
    assert per["hit"].tolist() == [False, True, False] and per["hit"].dtype == bool
    assert per["vlmevalkit_hit"].tolist() == [True, True, False] and per["vlmevalkit_hit"].dtype == bool
    assert _cells(per["vlmevalkit"]) == ["B", "B", "C"]
    assert result.vlmevalkit.metrics == {"Overall": 66.67, "T": 66.67}
    # VLMEvalKit splits the target on spaces only, as it splits the reply
    assert mvbench_first_word("x", "(b)\tx") and not mvbench_first_word("y", "(b)\tx")


def test_a_failed_rows_marker_keeps_vlmevalkits_column_text() -> None:
    # VLMEvalKit writes its failure message where a call failed, so the column holds text and "2E1" stays "2E1" (E);
    # a column of number-like replies alone reads back as numbers: 2E1 -> 20.0, no letter
    rows = [{"index": 0, "prediction": "2E1", "answer": "E", "question": "Q"},
            {"index": 1, "prediction": None, "answer": "A", "question": "Q"}]
    assert videomme_vlmevalkit_readings(rows, [False, True], "ABCDE")[:2] == (["E", None], [True, False])
    assert videomme_vlmevalkit_readings(rows[:1], [False], "ABCDE")[:2] == ([None], [False])
