"""HiPhO's points rule by rule (issue 31, mutation round 4): marking schemes, grader rounds, the forced scaling, the
answers' points, the sums and rates, the per-row table, counts and notes. Expectations worked by hand from
VLMEvalKit's hipho.py at e8e78f05 (its _evaluate_fine_grained / _evaluate_coarse_grained / _build_final_results) and
the module's documented differences. The judge is vlmkit's FunctionJudge answering from a key (the HTTP path of the
same scorer is tests/datasets_tsv/benchmarks/test_hipho.py)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeReply, JudgeRequest
from vlmkit.scoring.benchmarks.hipho import (
    FIGURES,
    JUDGE_MAX_TOKENS,
    MAX_RETRIES,
    _criteria,
    _split,
    marking_schemes,
    score_hipho,
)
from vlmkit.scoring.scales import PERCENT, POINTS, Scale


@pytest.mark.parametrize(("marking", "schemes"), [
    (None, []), ("", []), ("[]", []),
    ('["a", "b"]', [["a", "b"]]),
    ('[["a", "b"]]', [["a", "b"]]),  # one list inside a list: one scheme
    ('[["a"], ["b", "c"]]', [["a"], ["b", "c"]]),  # several lists: several schemes
    ('[["a"], "b"]', [["a", "b"]]),  # not all lists: one scheme, flattened
    ('[" a ", "", "  ", null, "b"]', [["a", "b"]]),
    ("just one", [["just one"]]),
    ('[0, 1]', [["1"]]),  # a 0 criterion is dropped as VLMEvalKit's `if c` drops it
])  # fmt: skip
def test_marking_schemes(marking, schemes):
    assert marking_schemes(marking) == schemes


def test_criteria_flatten_one_level_and_strip():
    assert _criteria([["x ", ["y"]], " z", ""]) == ["x", "['y']", "z"]


def test_split_takes_the_parts_after_the_last_equals():
    assert _split("a = b = 3", "4") == (" 3", "4")
    assert _split("3", "v = 4") == ("3", " 4")
    assert _split("3", "4") is None
    assert _split("x", "a = b = 6") == ("x", " 6")


def grading_key(prompt: str) -> tuple[str, int]:
    criterion = prompt.split("GRADING CRITERION:\n", 1)[1].split("\n", 1)[0]
    found = re.search(r"This is attempt #(\d+)", prompt)
    return criterion, int(found.group(1)) if found else 1


def keyed(grades: dict, xverify: dict) -> FunctionJudge:
    def reply(request: JudgeRequest) -> str:
        assert request.temperature == 0.0 and request.max_tokens == JUDGE_MAX_TOKENS == 4096
        assert request.row in {"1", "2", "3", "4", "5", "6", "7", "0"}
        if request.prompt.startswith("\nYou are a diligent"):
            item = xverify[request.prompt.split('Output sentence: """', 1)[1].split('"""', 1)[0]]
        else:
            item = grades[grading_key(request.prompt)]
        if isinstance(item, Exception):
            raise item
        return item

    return FunctionJudge(reply, name="key-judge")


def frame(rows: list[dict]) -> pd.DataFrame:
    base = {"question": "Q", "answer": "", "points": "[1.0]", "marking": ""}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_one_scheme_above_the_points_is_asked_again_until_within():
    grades = {("a", 1): "\\boxed{0.7}", ("b", 1): "\\boxed{0.6}",  # 1.3 > 1.0
              ("a", 2): "\\boxed{0.6}", ("b", 2): "\\boxed{0.5}",  # 1.1 > 1.0
              ("a", 3): "\\boxed{0.5}", ("b", 3): "\\boxed{0.45}"}  # 0.95
    judge = keyed(grades, {})
    result = score_hipho(frame([{"index": 1, "prediction": "sol", "marking": '["a", "b"]'}]), judge)
    assert result.per_sample["fine"].tolist() == [0.95]
    assert sorted(grading_key(r.prompt) for r in judge.asked) == sorted(grades)


def test_after_the_last_round_the_criteria_are_scaled_to_the_points():
    grades = {(c, n): "\\boxed{0.75}" for c in ("a", "b") for n in range(1, MAX_RETRIES + 2)}
    judge = keyed(grades, {})
    # 0.75 + 0.75 = 1.5 > 1.2 in every round (1 + 3): scaled by 1.2 / 1.5: 0.6 + 0.6
    result = score_hipho(frame([{"index": 1, "prediction": "sol", "marking": '["a", "b"]', "points": "[0.7, 0.5]"}]),
                         judge)  # fmt: skip
    assert result.per_sample["fine"].tolist() == [1.2]
    assert len(judge.asked) == 2 * (1 + MAX_RETRIES) and MAX_RETRIES == 3


def test_a_grade_within_the_points_on_the_last_round_is_kept():
    grades = {("a", n): "\\boxed{2}" for n in (1, 2, 3)} | {("a", 4): "\\boxed{0.5}"}
    result = score_hipho(frame([{"index": 1, "prediction": "sol", "marking": '["a"]'}]), keyed(grades, {}))
    assert result.per_sample["fine"].tolist() == [0.5]


def test_exactly_the_points_is_not_above():
    result = score_hipho(frame([{"index": 1, "prediction": "sol", "marking": '["a", "b"]'}]),
                         keyed({("a", 1): "\\boxed{0.5}", ("b", 1): "\\boxed{0.5}"}, {}))  # fmt: skip
    assert result.per_sample["fine"].tolist() == [1.0]


def test_no_points_no_limit():
    # points blank: [0.0]: the grades are kept as they are, the row has no points and no score
    result = score_hipho(frame([{"index": 1, "prediction": "sol", "marking": '["a"]', "points": ""}]),
                         keyed({("a", 1): "\\boxed{3.456}"}, {}))  # fmt: skip
    assert result.per_sample["fine"].tolist() == [3.46] and result.per_sample["score"].tolist() == [None]
    assert result.metrics["max_possible_score"] == 0.0 and result.metrics["score_rate"] == 0.0
    assert result.metrics["total_score"] == 3.46


def test_several_schemes_each_capped_and_the_best_kept():
    grades = {("s1a", 1): "\\boxed{0.4}", ("s1b", 1): "\\boxed{0.35}",  # 0.75
              ("s2a", 1): "\\boxed{1.5}",  # 1.5 > 1.0: capped at 1.0
              ("t1", 1): "\\boxed{0.2}", ("t2", 1): "\\boxed{0.3}"}  # fmt: skip
    df = frame([{"index": 1, "prediction": "sol", "marking": '[["s1a", "s1b"], ["s2a"]]'},
                {"index": 2, "prediction": "sol", "marking": '[["t1"], ["t2"]]', "points": "[2]"}])  # fmt: skip
    judge = keyed(grades, {})
    result = score_hipho(df, judge)
    assert result.per_sample["fine"].tolist() == [1.0, 0.3]
    assert len(judge.asked) == 5  # each scheme once


def test_an_unread_or_failed_grade_leaves_the_row_out():
    grades = {("u", 1): "  ", ("f", 1): "Failed to obtain answer via API, sorry", ("e", 1): TimeoutError("down"),
              ("ok", 1): "<think>hmm 0.9</think>\\boxed{0.25}", ("s2", 1): "\\boxed{0.5}",
              ("z", 1): "\\boxed{0.1}"}  # fmt: skip
    df = frame([{"index": 1, "prediction": "sol", "marking": '["ok", "u"]'},
                {"index": 2, "prediction": "sol", "marking": '["f"]'},
                {"index": 3, "prediction": "sol", "marking": '[["e"], ["s2"]]'},
                {"index": 4, "prediction": "sol", "marking": '["ok"]'},
                {"index": 5, "prediction": None, "marking": '["z"]'},
                {"index": 6, "prediction": "sol", "marking": '["z"]'}])  # fmt: skip
    result = score_hipho(df, keyed(grades, {}))
    per = result.per_sample
    assert per["method"].tolist() == ["judge_unread", "judge_unread", "judge_error", "judge", "inference_error",
                                      "judge"]  # fmt: skip
    assert per["fine"].tolist() == [0.0, 0.0, 0.0, 0.25, 0.0, 0.1]
    assert per["judge"].tolist() == ["grader: \\boxed{0.25}\ngrader: ",
                                     "grader: Failed to obtain answer via API, sorry",
                                     None, "grader: \\boxed{0.25}", None, "grader: \\boxed{0.1}"]  # fmt: skip
    # counted: rows 4, 5, 6: 0.25 + 0 + 0.1 of 3 points
    assert result.metrics["total_score"] == 0.35 and result.metrics["max_possible_score"] == 3.0
    assert result.metrics["score_rate"] == 11.67
    assert result.counts == {"total": 6, "scored": 3, "by_judge": 2, "unread": 2, "judge_errors": 1,
                             "inference_errors": 1}  # fmt: skip
    assert result.notes == [
        "marking graded and answers checked by key-judge with VLMEvalKit's HiPhO prompts; a row earns the larger of "
        "its marking and answer points; score_rate = total / max possible x 100",
        "1 row(s) judge_error: a judge call failed: left out of the figures this run (as VLMEvalKit leaves a failed "
        "row out) and asked again on the next run; index 3",
        "2 row(s) judge_unread: the grader replied nothing: left out of the figures, as VLMEvalKit leaves it out; "
        "index 1, 2",
        "1 row(s) inference_error: no prediction: not sent to the judge, 0 of the row's points (VLMEvalKit grades its "
        "failure text); index 5",
    ]


def test_answers_points_per_answer_or_the_last_answers_verdict():
    xverify = {"B": "[Correct]", "C": " Correct ", "D": "[Incorrect]", " 5": "[Correct]", "q = 5": "Incorrect",
               "E": "correct"}  # fmt: skip
    df = frame([
        # three answers, points per answer: A by rule (0.5), B by xverify (0.25), wrong D (0)
        {"index": 1, "prediction": "\\boxed{A} \\boxed{B} \\boxed{D}", "answer": '["A", "\\\\boxed{b}", "d"]',
         "points": "[0.5, 0.25, 1]"},
        # two answers, one point entry: the last answer's 0/1 (C right by xverify): 1
        {"index": 2, "prediction": "\\boxed{D} \\boxed{C}", "answer": '["x", "c"]', "points": "[3]"},
        # the whole answer wrong, the part after `=` right by xverify
        {"index": 3, "prediction": "\\boxed{q = 5}", "answer": '["p = 6"]', "points": "[2]"},
        # no boxed answer: none
        {"index": 4, "prediction": "no box", "answer": '["1", "2"]', "points": "[1, 1]"},
        # xverify must be the whole reply: `correct` is not accepted
        {"index": 5, "prediction": "\\boxed{E}", "answer": '["e"]', "points": "[1]"},
        # no points cell entries: blank points read [0.0], one entry for one answer
        {"index": 6, "prediction": "\\boxed{7}", "answer": '["7"]', "points": "[]"},
    ])
    judge = keyed({}, xverify)
    result = score_hipho(df, judge)
    per = result.per_sample
    assert per["answers"].tolist() == ["rule,xverify,wrong", "wrong,xverify", "xverify", "none,none", "wrong", "rule"]
    assert per["coarse"].tolist() == [0.75, 1.0, 2.0, 0.0, 0.0, 1.0]
    assert per["earned"].tolist() == [0.75, 1.0, 2.0, 0.0, 0.0, 1.0]
    asked = [r.prompt.split('Output sentence: """', 1)[1].split('"""', 1)[0] for r in judge.asked]
    assert sorted(asked) == sorted(["B", "D", "D", "C", "q = 5", " 5", "E"])
    assert per.loc[2, "judge"] == "xverify: Incorrect\nxverify: [Correct]"
    # points 1.75 + 3 + 2 + 2 + 1 + 0 = 9.75; earned 0.75 + 1 + 2 + 0 + 0 + 1 = 4.75
    assert result.metrics["max_possible_score"] == 9.75 and result.metrics["coarse_grained_total_score"] == 4.75
    assert result.metrics["coarse_grained_score_rate"] == 48.72 and result.metrics["fine_grained_score_rate"] == 0.0
    assert per["points"].tolist() == [1.75, 3.0, 2.0, 2.0, 1.0, 0.0]
    assert [None if s is None else round(s, 4) for s in per["score"]] == [0.4286, 0.3333, 1.0, 0.0, 0.0, None]


def test_a_failed_xverify_call_is_a_judge_error():
    df = frame([{"index": 1, "prediction": "\\boxed{B}", "answer": '["a"]'},
                {"index": 2, "prediction": "\\boxed{a = 1}", "answer": '["a = 2"]'}])  # fmt: skip
    result = score_hipho(df, keyed({}, {"B": TimeoutError("down"), "a = 1": "[Incorrect]", " 1": TimeoutError("x")}))
    assert result.per_sample["method"].tolist() == ["judge_error", "judge_error"]
    assert result.per_sample["answers"].tolist() == ["ask", "wrong"]
    assert result.counts["judge_errors"] == 2 and result.counts["scored"] == 0


def test_sums_round_at_every_step_and_subsets_in_order_of_appearance():
    df = frame([{"index": i, "prediction": f"\\boxed{{{v}}}", "answer": f'["{v}"]', "points": f"[{p}]",
                 "SUB_DATASET": s} for i, (v, p, s) in enumerate([(1, 0.333, "Z"), (2, 0.333, "A"), (3, 0.335, "Z")])])
    result = score_hipho(df, keyed({}, {}))
    # coarse per row: 0.33, 0.33, 0.34 (each rounded); Z: 0.33 + 0.34 = 0.67 of 0.668 -> 0.67
    assert result.per_sample["coarse"].tolist() == [0.33, 0.33, 0.34]
    assert result.metrics["Z/total_score"] == 0.67 and result.metrics["Z/max_possible_score"] == 0.67
    # A: 0.33 of 0.333, whose sum is rounded too: 0.33 of 0.33
    assert result.metrics["Z/score_rate"] == 100.0 and result.metrics["A/score_rate"] == 100.0
    assert result.metrics["A/max_possible_score"] == 0.33
    assert result.metrics["total_score"] == 1.0 and result.metrics["max_possible_score"] == 1.0
    assert result.table["subset"].tolist() == ["Z", "A", "Overall"]
    assert list(result.table.columns) == ["subset", *FIGURES]
    assert result.table.iloc[2]["total_score"] == 1.0
    assert result.primary == "score_rate" and result.scorer == "hipho" and result.table_suffix == "score"
    assert result.scale == Scale(PERCENT)
    assert result.metric_scales["Z/total_score"] == Scale(POINTS) and "Z/score_rate" not in result.metric_scales
    assert "fine_grained_score_rate" not in result.metric_scales
    assert result.metric_scales["total_score"] == Scale(POINTS)
    assert result.notes[1] == ("VLMEvalKit reports HiPhO_ALL per subset only; vlmkit's headline is the same figure "
                               "over all rows")


def test_the_larger_of_marking_and_answers():
    df = frame([{"index": 1, "prediction": "\\boxed{1}", "answer": '["1"]', "marking": '["m"]', "points": "[2]"}])
    result = score_hipho(df, keyed({("m", 1): "\\boxed{1.5}"}, {}))
    per = result.per_sample
    assert (per["fine"].tolist(), per["coarse"].tolist(), per["earned"].tolist()) == ([1.5], [2.0], [2.0])
    assert result.metrics["fine_grained_total_score"] == 1.5 and result.metrics["fine_grained_score_rate"] == 75.0
    assert result.metrics["score_rate"] == 100.0


def test_bad_points_name_the_row():
    df = frame([{"index": 7, "prediction": "x", "points": "many"}])
    with pytest.raises(ValueError, match=r"^HiPhO: row index 7, field `points`: 'many' is not a number"):
        score_hipho(df, keyed({}, {}))
    with pytest.raises(ValueError, match=r"^IPhO_2025: row index 7"):
        score_hipho(df, keyed({}, {}), what="IPhO_2025")


class SilentJudge:
    """A judge whose replies carry neither text nor an error record (a client that lost the body)."""

    name = "silent"

    def ask(self, requests: list[JudgeRequest]) -> list[JudgeReply]:
        return [JudgeReply(None) for _ in requests]


def test_a_reply_without_text_or_error_is_a_judge_error():
    df = frame([{"index": 1, "prediction": "sol", "marking": '["a"]'}])
    result = score_hipho(df, SilentJudge())
    assert result.per_sample["method"].tolist() == ["judge_error"] and result.counts["judge_errors"] == 1


def test_a_blank_question_is_an_empty_problem_in_the_prompt():
    judge = keyed({("a", 1): "\\boxed{0.5}"}, {})
    score_hipho(frame([{"index": 1, "prediction": "sol", "marking": '["a"]', "question": None}]), judge)
    assert "PHYSICS PROBLEM:\n\n\nSTUDENT'S SOLUTION:\nsol\n" in judge.asked[0].prompt


def test_a_missing_column_is_named():
    with pytest.raises(ValueError, match=r"^HiPhO: the predictions table has no `question` column"):
        score_hipho(frame([{"index": 1, "prediction": "x"}]).drop(columns=["question"]), keyed({}, {}))


def test_an_empty_grader_reply_is_unread_and_an_empty_xverify_reply_is_wrong():
    df = frame([{"index": 1, "prediction": "sol", "marking": '["a"]'},
                {"index": 2, "prediction": "\\boxed{B}", "answer": '["a"]'}])  # fmt: skip
    result = score_hipho(df, keyed({("a", 1): ""}, {"B": ""}))
    assert result.per_sample["method"].tolist() == ["judge_unread", "judge"]
    assert result.per_sample["judge"].tolist() == ["grader: ", "xverify: "]
    assert result.per_sample["answers"].tolist() == ["", "wrong"]


def test_three_answers_one_point_entry_scores_the_last_answer():
    df = frame([{"index": 1, "prediction": "\\boxed{1} \\boxed{9} \\boxed{3}", "answer": '["1", "2", "3"]',
                 "points": "[4]"},
                {"index": 2, "prediction": "\\boxed{1} \\boxed{2} \\boxed{9}", "answer": '["1", "2", "3"]',
                 "points": "[4]"}])  # fmt: skip
    result = score_hipho(df, keyed({}, {"9": "[Incorrect]"}))
    assert result.per_sample["coarse"].tolist() == [1.0, 0.0]


def test_the_xverify_prompt_carries_the_question_and_the_reference():
    judge = keyed({}, {"B": "[Incorrect]"})
    score_hipho(frame([{"index": 1, "prediction": "\\boxed{B}", "answer": '["\\\\boxed{a}"]', "question": "Why?"}]),
                judge)  # fmt: skip
    [request] = judge.asked
    assert 'Question: """Why?"""\nOutput sentence: """B"""\nCorrect answer: a\n' in request.prompt


def test_a_retry_round_reads_every_pending_row_and_exactly_the_points_is_kept():
    grades = {("a", 1): "\\boxed{2}", ("a", 2): "", ("b", 1): "\\boxed{2}", ("b", 2): "\\boxed{1}"}
    df = frame([{"index": 1, "prediction": "s", "marking": '["a"]'},
                {"index": 2, "prediction": "s", "marking": '["b"]'}])
    judge = keyed(grades, {})
    result = score_hipho(df, judge)
    assert result.per_sample["method"].tolist() == ["judge_unread", "judge"]
    assert result.per_sample["fine"].tolist() == [0.0, 1.0]
    assert len(judge.asked) == 4  # row 2's 1 of 1 point on the second round is not asked again


def test_capped_and_scaled_grades_are_rounded_to_2_decimals_of_the_points():
    grades = {("a", n): "\\boxed{1}" for n in range(1, 5)} | {("s1", 1): "\\boxed{1}", ("s2", 1): "\\boxed{0.1}"}
    df = frame([{"index": 1, "prediction": "s", "marking": '["a"]', "points": "[0.333]"},
                {"index": 2, "prediction": "s", "marking": '[["s1"], ["s2"]]', "points": "[0.333]"}])  # fmt: skip
    result = score_hipho(df, keyed(grades, {}))
    assert result.per_sample["fine"].tolist() == [0.33, 0.33]


def test_several_schemes_without_points_are_not_capped():
    df = frame([{"index": 1, "prediction": "s", "marking": '[["s1"], ["s2"]]', "points": ""}])
    result = score_hipho(df, keyed({("s1", 1): "\\boxed{0.4}", ("s2", 1): "\\boxed{0.6}"}, {}))
    assert result.per_sample["fine"].tolist() == [0.6]


def test_a_subset_named_with_a_slash_keeps_its_rates_in_percent():
    df = frame([{"index": 1, "prediction": "\\boxed{1}", "answer": '["1"]', "SUB_DATASET": "IPhO/2024"}])
    result = score_hipho(df, keyed({}, {}))
    assert "IPhO/2024/score_rate" not in result.metric_scales
    assert result.metric_scales["IPhO/2024/total_score"] == Scale(POINTS)


def test_an_empty_reply_to_the_split_ask_is_kept_empty():
    df = frame([{"index": 1, "prediction": "\\boxed{a = 1}", "answer": '["a = 2"]'}])
    result = score_hipho(df, keyed({}, {"a = 1": "[Incorrect]", " 1": ""}))
    assert result.per_sample["judge"].tolist() == ["xverify: [Incorrect]\nxverify: "]
    assert result.per_sample["answers"].tolist() == ["wrong"]
