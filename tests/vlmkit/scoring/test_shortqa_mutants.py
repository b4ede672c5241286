"""ShortQA judging, from mutation testing (issue 31): the Chinese list-gold prompt as VLMEvalKit builds it (its
invisible U+2060 included), the verdict's closing tag, which rows are multiple choice, a choice read by the MCQ
judge, every kind of miss named in the notes, l2-category with MMBench's abbreviations, g_index groups whose rotated
rows are not their main rows, and one-line errors naming the table (expectations worked by hand from VLMEvalKit's
vlmeval/dataset/utils/shortqa.py and report_acc)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.kinds.shortqa import is_choice_row, read_correctness, score_shortqa, shortqa_prompt
from vlmkit.scoring.scales import FRACTION, Scale

YES = "[Begin Correctness]yes[End Correctness]\n[Begin Reason]Same.[End Reason]"
NO = "[Begin Correctness]no[End Correctness]\n[Begin Reason]Different.[End Reason]"
FIRST_NOTE = ("judged by function with VLMEvalKit's ShortQA prompt (up to 3 asks); choice rows read by vlmkit's MCQ "
              "rules, then the MCQ judge")


def tail(question: str, gold: str, prediction: str) -> str:
    return (f"[Begin Question]{question}[End Question]\n[Begin Ground-Truth]{gold}[End Ground-Truth]\n"
            f"[Begin Response]{prediction}[End Response]\n")


def by_question(replies: dict[str, str], choice_reply: str = "A") -> FunctionJudge:
    """A judge answering each ShortQA prompt by the question of its task (the last [Begin Question]); `!` raises
    (a failed call); MCQ judge prompts (their options block) get `choice_reply`."""

    def answer(request: JudgeRequest) -> str:
        if "There are several options:" in request.prompt:
            return choice_reply
        question = request.prompt.rsplit("[Begin Question]", 1)[1].split("[End Question]")[0]
        reply = replies[question]
        if reply == "!":
            raise ConnectionError("judge unreachable")
        return reply

    return FunctionJudge(answer)


def test_the_chinese_list_gold_prompt_is_vlmevalkits():
    prompt = shortqa_prompt("图中的景点是什么，位于哪个城市", "['少林寺', '河南登封市']", "少林寺")
    # the requirement line between the fields and the examples, then the six Chinese multi-answer examples
    assert ("- **原因（Reason）**：对你的判断进行简要解释。\n\n题目提供的标准答案是一个列表。如果模型回答包含且仅包含列表中的所有内容，"
            "则回答正确\n\n以下是一些示例：\nExample 1:\n[Begin Question]图中文物的具体名称是什么？[End Question]\n") in prompt
    # VLMEvalKit's second example holds an invisible WORD JOINER (U+2060) before "Ninjas", in the gold and the reply
    assert "[Begin Ground-Truth]['\u2060Ninjas in Pyjamas','Invictus Gaming'][End Ground-Truth]\n" in prompt
    assert "\n- TES Challenger\n- \u2060Ninjas in Pyjamas\n- Invictus Gaming[End Response]\n" in prompt
    assert "Example 6:\n[Begin Question]请直接告诉我图中右侧人物的名字[End Question]\n[Begin Ground-Truth]['姚明', '易建联']" in prompt
    assert "Example 7:" not in prompt
    # the gold shown as the Python list it was read as
    assert prompt.endswith("现在，请完成以下任务：\n" + tail("图中的景点是什么，位于哪个城市", "['少林寺', '河南登封市']", "少林寺"))
    single = shortqa_prompt("这是哪个城市？", "北京", "Beijing")
    assert "对你的判断进行简要解释。\n\n\n\n以下是一些示例：\nExample 1:\n[Begin Question]请直接告诉我图中右侧人物的名字" in single
    assert "列表" not in single


def test_a_verdict_needs_both_tags():
    assert read_correctness("[Begin Correctness]yes") is None
    assert read_correctness("yes[End Correctness]") is None
    assert read_correctness("[Begin Correctness]no[End Correctness]") is False


@pytest.mark.parametrize(
    ("row", "choice"),
    [({"A": "cat", "answer": "B"}, True), ({"A": "cat", "answer": "Franklin"}, False),
     ({"A": None, "answer": "7"}, False), ({"A": "  ", "answer": "B"}, False), ({"answer": "7"}, False),
     ({"A": 3.0, "answer": 1.0}, True)],
)
def test_which_rows_are_multiple_choice(row, choice):
    assert is_choice_row(row) is choice


def test_every_kind_of_miss_is_named():
    columns = ["index", "question", "answer", "A", "B", "prediction"]
    rows = [
        (0, "Who is this?", "Roosevelt", None, None, "Franklin"),  # the judge never says yes or no
        (1, "Which animal barks?", "B", "cat", "dog", ""),  # an empty answer: no rule reads it, nothing to ask
        (2, "Which year?", "1999", None, None, "1999"),  # the judge call fails
        (3, "What text?", "STOP", None, None, None),  # no prediction
        (4, "Which digit?", "7", None, None, "seven"),  # a one-character gold with no options: judged
        (5, "Which animal meows?", "A", "cat", "dog", "B"),  # read by rule: wrong
        (6, "Which is red?", "A", "apple", "sky", "Hard to say."),  # read by the MCQ judge: A
        (7, "What text?", "STOP", None, None, f"{VLMEVALKIT_FAIL_MARKER}: STOP"),  # a failed call's marker
        (8, "Which is blue?", "B", "apple", "sky", "B"),  # read by rule: right
    ]
    judge = by_question({"Who is this?": "I think so.", "Which year?": "!", "Which digit?": YES})
    result = score_shortqa(pd.DataFrame(rows, columns=columns), judge)
    samples = result.per_sample
    assert samples["index"].tolist() == list(range(9))
    assert samples["hit"].tolist() == [False, False, False, False, True, False, True, False, True]
    assert samples["method"].tolist() == ["judge_unread", "unparsed", "judge_error", "inference_error", "judge",
                                          "exact", "judge", "inference_error", "exact"]
    assert samples["extracted"].tolist() == [None, None, None, None, None, "B", "A", None, "B"]
    assert samples["judge"].tolist() == ["I think so.", None, None, None, YES, None, "A", None, None]
    assert result.counts == {"total": 9, "scored": 9, "hits": 3, "by_rule": 2, "by_judge": 2, "unread": 2,
                             "judge_errors": 1, "inference_errors": 2}
    assert result.notes[:5] == [
        FIRST_NOTE,
        "1 row(s) judge_unread: the judge's reply was never readable: a miss (VLMEvalKit: 'Fail to Judge' for a "
        "short answer, a random letter for a choice); index 0",
        "1 row(s) unparsed: a choice the MCQ rules could not read and no judge read: a miss; index 1",
        "1 row(s) judge_error: the judge call failed: a miss this run, asked again on the next run; index 2",
        "2 row(s) inference_error: no prediction: a miss, not sent to the judge (VLMEvalKit judges the text 'nan'); "
        "index 3, 7",
    ]
    assert all(note.startswith("choice rows: ") for note in result.notes[5:])
    # ShortQA prompts: rows 0 (3 times), 2 (once: failed) and 4; the MCQ judge reads row 6 (row 1's MCQ ask is the
    # reader's VLMEvalKit figure, which sees its empty reply as `nan`); never rows 3, 5, 7, 8
    shortqa_asks = [r.row for r in judge.asked if "[Begin Correctness]" in r.prompt]
    assert sorted(shortqa_asks) == ["0", "0", "0", "2", "4"]
    assert "6" in {r.row for r in judge.asked if "There are several options:" in r.prompt}
    assert not {"3", "5", "7", "8"} & {r.row for r in judge.asked}
    assert result.scorer == "shortqa" and result.scale == Scale(FRACTION) and result.table_suffix == "acc"


def test_open_rows_only():
    columns = ["index", "question", "answer", "prediction"]
    rows = [(0, "Who is this?", "Roosevelt", "Franklin Roosevelt"), (1, "Which year?", "1999", "2001")]
    result = score_shortqa(pd.DataFrame(rows, columns=columns), by_question({"Who is this?": YES, "Which year?": NO}))
    assert result.per_sample["hit"].tolist() == [True, False] and result.primary_value == pytest.approx(0.5)
    assert result.notes == [FIRST_NOTE]
    assert result.counts == {"total": 2, "scored": 2, "hits": 1, "by_rule": 0, "by_judge": 2, "unread": 0,
                             "judge_errors": 0, "inference_errors": 0}


def test_choice_rows_are_read_row_by_row_whatever_their_index():
    # LiveMMBench-like indices: a choice row numbered past 1e6 is its own row, not a rotation of row 5
    columns = ["index", "question", "answer", "A", "B", "prediction"]
    rows = [(5, "Who is this?", "Roosevelt", None, None, "Roosevelt"), (1000005, "Which?", "B", "cat", "dog", "B")]
    result = score_shortqa(pd.DataFrame(rows, columns=columns), by_question({"Who is this?": YES}))
    assert result.per_sample["hit"].tolist() == [True, True] and result.primary_value == pytest.approx(1.0)


def test_l2_categories_and_mmbench_abbreviations():
    columns = ["index", "question", "answer", "split", "l2-category", "category", "prediction"]
    rows = [
        (0, "q0", "x", "dev", "coarse_perception", "logic_reasoning", "x"),
        (1, "q1", "x", "dev", "coarse_perception", "attribute_reasoning", "y"),
        (2, "q2", "x", "dev", "relation_reasoning", "logic_reasoning", "x"),
    ]
    result = score_shortqa(pd.DataFrame(rows, columns=columns), by_question({"q0": YES, "q1": NO, "q2": YES}))
    # Overall 2/3; l2: coarse_perception (CP) 1/2, relation_reasoning (RR) 1/1; category: attribute_reasoning (AR)
    # 0/1, logic_reasoning (LR) 2/2 -- report_acc's columns: Overall, then each group's sorted values, abbreviated
    assert result.metrics == pytest.approx({"Overall": 2 / 3, "CP": 0.5, "RR": 1.0, "AR": 0.0, "LR": 1.0})
    assert result.table.columns.tolist() == ["split", "Overall", "CP", "RR", "AR", "LR"]
    np.testing.assert_allclose(result.table.iloc[0, 1:].to_numpy(dtype=float), [2 / 3, 0.5, 1.0, 0.0, 1.0])


def test_g_index_groups_report_their_main_rows():
    columns = ["index", "g_index", "question", "answer", "A", "B", "category", "prediction"]
    rows = [
        (10, 10, "Which animal barks?", "B", "cat", "dog", "animals", "B"),
        (1000010, 10, "Which animal barks?", "A", "dog", "cat", "animals", "B"),  # the rotation answered wrongly
        (11, 11, "Which is a fruit?", "A", "apple", "brick", "food", "A"),
        (12, 12, "Who is this?", "Roosevelt", None, None, "people", "Roosevelt"),
    ]
    result = score_shortqa(pd.DataFrame(rows, columns=columns), by_question({"Who is this?": YES}))
    # groups: 10 missed (its rotation is wrong), 11 and 12 right -> 2 of 3 main rows
    assert result.per_sample["group"].tolist() == [10, 10, 11, 12]
    assert result.per_sample["group_hit"].tolist() == [False, False, True, True]
    assert result.primary_value == pytest.approx(2 / 3)
    assert result.metrics == pytest.approx({"Overall": 2 / 3, "animals": 0.0, "food": 1.0, "people": 1.0})
    assert result.table.columns.tolist() == ["split", "Overall", "animals", "food", "people"]
    assert result.counts["groups"] == 3 and result.counts["scored"] == 3 and "orphan_rows" not in result.counts


def test_one_line_errors_name_the_table():
    columns = ["index", "g_index", "question", "answer", "prediction"]
    good = [(0, 0, "Who?", "Roosevelt", "Roosevelt"), (1, 0, "Who?", "Roosevelt", "Roosevelt")]
    judge = by_question({"Who?": YES})
    with pytest.raises(ValueError, match=r"^ShortQA: row index 1, field `g_index`: missing$"):
        score_shortqa(pd.DataFrame([good[0], (1, None, "Who?", "Roosevelt", "R")], columns=columns), judge)
    with pytest.raises(ValueError, match=r"^LiveMMBench: row index 1, field `g_index`: missing$"):
        score_shortqa(pd.DataFrame([good[0], (1, None, "Who?", "Roosevelt", "R")], columns=columns), judge,
                      what="LiveMMBench")
    with pytest.raises(ValueError, match=r"^ShortQA: no main rows \(index == g_index\) to report$"):
        score_shortqa(pd.DataFrame([(1, 0, "Who?", "Roosevelt", "R"), (2, 0, "Who?", "Roosevelt", "R")],
                                   columns=columns), judge)
    with pytest.raises(ValueError, match=r"^hle: no main rows \(index == g_index\) to report$"):
        score_shortqa(pd.DataFrame([(1, 0, "Who?", "Roosevelt", "R")], columns=columns), judge, what="hle")
    with pytest.raises(ValueError, match=r"^ShortQA: duplicate `index` value\(s\): 0$"):
        score_shortqa(pd.DataFrame([good[0], good[0]], columns=columns), judge)
    with pytest.raises(ValueError, match=r"^ShortQA: row index 1, field `question`: missing$"):
        score_shortqa(pd.DataFrame([good[0], (1, 0, None, "Roosevelt", "R")], columns=columns), judge)
    with pytest.raises(ValueError, match=r"^ShortQA: row index 1, field `answer`: missing$"):
        score_shortqa(pd.DataFrame([good[0], (1, 0, "Who?", None, "R")], columns=columns), judge)
