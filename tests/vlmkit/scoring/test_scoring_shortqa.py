"""ShortQA judging: VLMEvalKit's prompt to the character (English from the facts; list golds and Chinese questions),
its 3 asks, choice rows read by the MCQ reader, g_index groups, report_acc's table, and failures never guessed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.kinds.shortqa import (
    gold_answers,
    read_correctness,
    score_shortqa,
    shortqa_prompt,
)

# The facts file's English single-answer ShortQA prompt (section 7), JSON-escaped; slots <<QUESTION>>, <<ANSWER>>,
# <<PREDICTION>>.
FACTS_SHORTQA = "\nYou are an AI assistant tasked with evaluating whether a model's response correctly answers a given visual-language question.\n\nYou will be provided with:\n1. The question (text only)\n2. The model's response\n3. The ground truth answer\n\nYour task is to determine whether the model's response conveys the same meaning as the ground truth. The response is considered **correct** if:\n- It has the same meaning as the ground truth, even if phrased differently.\n- It provides additional relevant details without altering the original meaning.\n\nThe response is considered **wrong** if:\n- It contradicts the ground-truth\n- It misses essential information or include additional incorrect information.\n\nYour evaluation should include the following fields:\n- **Correctness**: Either `\"yes\"` (if correct) or `\"no\"` (if incorrect).\n- **Reason**: A brief explanation of your judgment.\n\n\n\nHere are some examples:\nExample 1:\n[Begin Question]Please tell me the name of the man in this image, in the format of \"[First Name] [Given Name]\".[End Question]\n[Begin Ground-Truth]Franklin D. Roosevelt[End Ground-Truth]\n[Begin Response]Franklin Roosevelt[End Response]\n[Begin Correctness]yes[End Correctness]\n[Begin Reason]The model response basically align with the ground-truth answer, just omitted the middle name. Thus the response is correct.[End Reason]\n\nExample 2:\n[Begin Question]Please tell me the name of the man in this image, in the format of \"[First Name] [Given Name]\".[End Question]\n[Begin Ground-Truth]Usain Bolt[End Ground-Truth]\n[Begin Response]Bolt[End Response]\n[Begin Correctness]no[End Correctness]\n[Begin Reason]The question asks the model to output the [End Reason]\n\nExample 3:\n[Begin Question]Where did the text in this image originate from[End Question]\n[Begin Ground-Truth]Ancient Egypt[End Ground-Truth]\n[Begin Response]egypt[End Response]\n[Begin Correctness]yes[End Correctness]\n[Begin Reason]The model response basically align with the ground-truth answer (egypt vs. Ancient Egypt). Thus the response is correct. [End Reason]\n\nExample 4:\n[Begin Question]Name this building[End Question]\n[Begin Ground-Truth]St. Peter's Basilica Church[End Ground-Truth]\n[Begin Response]st peters basilica[End Response]\n[Begin Correctness]yes[End Correctness]\n[Begin Reason]The model response basically align with the ground-truth answer. Thus the response is correct.[End Reason]\n\nExample 5:\n[Begin Question]Extract the text on the umbrella in the image[End Question]\n[Begin Ground-Truth]keter[End Ground-Truth]\n[Begin Response]ketter[End Response]\n[Begin Correctness]no[End Correctness]\n[Begin Reason]The question requires the model to exactly extract the text on the umbrella. The model response does not contain the exact text on the umbrella (keter). Thus the response is incorrect. [End Reason]\n\n\n\nNow please complete the following task:\n\n[Begin Question]<<QUESTION>>[End Question]\n[Begin Ground-Truth]<<ANSWER>>[End Ground-Truth]\n[Begin Response]<<PREDICTION>>[End Response]\n"
# The facts' multi-answer requirement line (shown when the gold is a list of several answers)
FACTS_MULTI = "The provided ground-truth is a list. The answer is correct if the model response contains and only contains all contents in the list (no other answer included)"

YES = "[Begin Correctness]yes[End Correctness]\n[Begin Reason]Same meaning.[End Reason]"
NO = "[Begin Correctness]no[End Correctness]\n[Begin Reason]Different.[End Reason]"

COLUMNS = ["index", "question", "answer", "answer_type", "A", "B", "category", "split", "prediction"]
# LiveMMBench / hle shape: open rows have no options; choice rows fill A, B and answer with a letter
ROWS = [
    (0, "Who is this?", "Franklin D. Roosevelt", None, None, None, "people", "dev", "Franklin Roosevelt"),
    (1, "Name the lake's countries", "['Jordan', 'Israel']", None, None, None, "geo", "dev", "Israel only"),
    (2, "这是哪个城市？", "北京", None, None, None, "geo", "dev", "Beijing"),
    (3, "Which animal barks?", "B", None, "cat", "dog", "choice", "dev", "The answer is B."),
    (4, "Which colour is the sky?", "A", None, "red", "blue", "choice", "dev", "B"),
    (5, "What text is shown?", "keter", None, None, None, "ocr", "test", None),
    (6, "Extract the text", "STOP", None, None, None, "ocr", "test", "stop sign"),
    (7, "Which year?", "1999", None, None, None, "ocr", "test", "1999"),
    (8, "Write the pair", "[1, 2]", "exactMatch", None, None, "math", "test", "[1, 2]"),
]
# judge replies per row, one per ask (the last repeats); row 7's call fails
REPLIES = {
    0: [YES], 1: [NO], 6: ["It looks right to me."], 8: [YES],
    2: ["[Begin Correctness]maybe[End Correctness]", "[Begin Correctness]Yes[End Correctness]"],
}


def table(rows=ROWS, columns=COLUMNS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def task_tail(question: str, gold: str, prediction: str) -> str:
    return (f"[Begin Question]{question}[End Question]\n[Begin Ground-Truth]{gold}[End Ground-Truth]\n"
            f"[Begin Response]{prediction}[End Response]\n")


def keyed(request: JudgeRequest) -> str:
    """Answers by the row whose task the prompt ends with; English single-answer prompts must be the facts' text
    (a mismatch raises, which the judge turns into a judge error and the scores show)."""
    for index, question, gold, answer_type, _, _, _, _, prediction in ROWS:
        if not request.prompt.endswith(task_tail(question, gold, str(prediction))):
            continue
        if index in (0, 6, 7, 8):
            expected = (FACTS_SHORTQA.replace("<<QUESTION>>", question).replace("<<ANSWER>>", gold)
                        .replace("<<PREDICTION>>", str(prediction)))
            assert request.prompt == expected
        if index == 7:
            raise ConnectionError("judge unreachable for this call")
        replies = REPLIES[index]
        return replies[min(request.attempt, len(replies) - 1)]
    raise KeyError("no row matches this prompt")


def test_english_prompt_is_the_facts_text():
    assert shortqa_prompt("<<QUESTION>>", "<<ANSWER>>", "<<PREDICTION>>") == FACTS_SHORTQA


def test_list_gold_and_chinese_question_prompts():
    multi = shortqa_prompt("Name the lake's countries", "['Jordan', 'Israel']", "Israel only")
    head = FACTS_SHORTQA.split("\n\n\n\nHere are some examples:")[0]
    assert multi.startswith(head + "\n\n" + FACTS_MULTI + "\n\nHere are some examples:\nExample 1:\n")
    assert "Example 6:\n[Begin Question]Who are the top three players" in multi  # the six multi-answer examples
    assert multi.endswith(task_tail("Name the lake's countries", "['Jordan', 'Israel']", "Israel only"))
    # a one-element list is its element, with the single-answer examples and no requirement
    assert shortqa_prompt("Q", "['Paris']", "P") == shortqa_prompt("Q", "Paris", "P")
    # exactMatch / multipleChoice golds are shown as written
    assert shortqa_prompt("Q", "[1, 2]", "P", "exactMatch").endswith(task_tail("Q", "[1, 2]", "P"))
    assert FACTS_MULTI not in shortqa_prompt("Q", "[1, 2]", "P", "exactMatch")
    chinese = shortqa_prompt("这是哪个城市？", "北京", "Beijing")
    assert chinese.startswith("\n你是一名 AI 助理，负责评估模型的回答是否正确回答了给定的视觉语言问题。\n")
    assert "Example 1:\n[Begin Question]请直接告诉我图中右侧人物的名字[End Question]\n[Begin Ground-Truth]姚明" in chinese
    assert "Example 5:" not in chinese  # four Chinese single-answer examples
    assert chinese.endswith("现在，请完成以下任务：\n" + task_tail("这是哪个城市？", "北京", "Beijing"))


def test_gold_lists_are_read_without_eval():
    assert gold_answers("['a', 'b']") == ["a", "b"] and gold_answers("[1, 2]") == [1, 2]
    assert gold_answers("[1, 2]", "multipleChoice") == ["[1, 2]"]
    for text in ("[oops", "[]", "[__import__('os').getcwd()]", " ['a', 'b']"):
        assert gold_answers(text) == [text]


def test_reading_verdicts():
    assert read_correctness(YES) is True and read_correctness(NO) is False
    assert read_correctness("[Begin Correctness] YES [End Correctness]") is True
    assert read_correctness("[Begin Correctness]yes, not entirely[End Correctness]") is None  # both words
    assert read_correctness("Correctness: yes") is None and read_correctness("") is None
    assert read_correctness("<think>[Begin Correctness]no[End Correctness]</think>" + YES) is True


def test_scores_table_and_asks_match_hand_computation():
    judge = FunctionJudge(keyed)
    result = score_shortqa(table(), judge)
    # hits: 0 yes, 1 no, 2 yes (second ask), 3 B by rule, 4 B != A, 5 no prediction, 6 unread, 7 judge error,
    # 8 yes -> 4 of 9
    samples = result.per_sample
    assert samples["hit"].tolist() == [True, False, True, True, False, False, False, False, True]
    assert samples["method"].tolist() == ["judge", "judge", "judge", "marker", "exact", "inference_error",
                                          "judge_unread", "judge_error", "judge"]
    assert samples["extracted"].tolist() == [None, None, None, "B", "B", None, None, None, None]
    assert samples["judge"].tolist()[5:8] == [None, "It looks right to me.", None]
    assert result.primary == "Overall" and result.primary_value == pytest.approx(4 / 9)
    assert result.scale_of("Overall").kind == "fraction" and result.table_suffix == "acc"
    # report_acc: dev rows 0-4 -> 3/5; test rows 5-8 -> 1/4; categories: people 1/1, geo 1/2, choice 1/2, ocr 0/3,
    # math 1/1
    sheet = result.table
    assert sheet.columns.tolist() == ["split", "Overall", "choice", "geo", "math", "ocr", "people"]
    assert sheet["split"].tolist() == ["dev", "test"]
    np.testing.assert_allclose(sheet.iloc[:, 1:].to_numpy(dtype=float),
                               [[0.6, 0.5, 0.5, np.nan, np.nan, 1.0], [0.25, np.nan, np.nan, 1.0, 0.0, np.nan]])
    assert result.metrics == pytest.approx({"Overall": 4 / 9, "choice": 0.5, "geo": 0.5, "math": 1.0, "ocr": 0.0,
                                            "people": 1.0})
    assert result.counts == {"total": 9, "scored": 9, "hits": 4, "by_rule": 2, "by_judge": 4, "unread": 1,
                             "judge_errors": 1, "inference_errors": 1}
    # asks: 3 at most, temperature 0, 0.5, 1.0; none for choice rows read by rule or a missing prediction
    asked_rows = [r.row for r in judge.asked]
    assert sorted(set(asked_rows)) == ["0", "1", "2", "6", "7", "8"]
    assert [(r.attempt, r.temperature) for r in judge.asked if r.row == "6"] == [(0, 0.0), (1, 0.5), (2, 1.0)]
    assert {r.max_tokens for r in judge.asked} == {2048}
    assert any("judge_error" in n and "asked again" in n for n in result.notes)


def test_a_choice_nothing_can_read_is_a_miss_never_a_random_letter():
    rows = [(3, "Which animal barks?", "B", None, "cat", "dog", "choice", "dev", "I cannot tell from the image.")]
    judge = FunctionJudge(lambda request: "I do not know.")
    result = score_shortqa(table(rows), judge)
    assert result.per_sample["hit"].tolist() == [False]
    assert result.per_sample["extracted"].tolist() == [None]
    assert result.per_sample["method"].iloc[0] in ("unparsed", "judge_unread")
    assert result.counts["unread"] == 1 and result.counts["by_rule"] == 0


def test_g_index_groups_are_circular_over_main_rows():
    columns = ["index", "g_index", "question", "answer", "A", "B", "category", "prediction"]
    rows = [
        (10, 10, "Which animal barks?", "B", "cat", "dog", "animals", "B"),
        (1000010, 10, "Which animal barks?", "A", "dog", "cat", "animals", "A"),  # the rotation, right too
        (11, 11, "Which is a fruit?", "A", "apple", "brick", "food", "A"),
        (1000011, 11, "Which is a fruit?", "B", "brick", "apple", "food", "A"),  # the rotation answered wrongly
        (12, 12, "Who is this?", "Franklin D. Roosevelt", None, None, "people", "Franklin Roosevelt"),
        (13, 99, "Orphan?", "A", "x", "y", "animals", "A"),  # its group has no main row
    ]
    result = score_shortqa(pd.DataFrame(rows, columns=columns), FunctionJudge(lambda request: YES))
    # groups: 10 hit (both rows right), 11 miss (rotation wrong), 12 hit (judged yes) -> 2 of 3
    assert result.primary_value == pytest.approx(2 / 3)
    assert result.per_sample["group_hit"].tolist() == [True, True, False, False, True, True]
    assert result.metrics["animals"] == 1.0 and result.metrics["food"] == 0.0
    assert result.counts["groups"] == 3 and result.counts["scored"] == 3 and result.counts["orphan_rows"] == 1
    assert any("no main row" in n and "13" in n for n in result.notes)


def test_missing_cells_are_one_line_errors():
    rows = [list(r) for r in ROWS]
    rows[2][2] = None
    with pytest.raises(ValueError, match=r"row index 2, field `answer`: missing"):
        score_shortqa(table(rows), FunctionJudge(keyed))


def test_through_a_real_http_judge(tmp_path: Path):
    pytest.importorskip("vlmkit.run.judge_journal")
    from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
    from vlm.api.openai_compat import OpenAICompatModel
    from vlmkit.run.judge_journal import JournalledJudge

    def serve(request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply(404, {"error": {"message": "no such route"}})
        prompt = request.body["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        attempt = round(request.body["temperature"] / 0.5)  # ShortQA asks attempt n at temperature 0.5 n
        try:
            return chat_reply(keyed(JudgeRequest(prompt, attempt=attempt)))
        except ConnectionError:
            return Reply(500, {"error": {"message": "boom"}})

    with FaultServer(serve) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, retries=0, timeout=10)
        result = score_shortqa(table(), JournalledJudge(model, tmp_path / "judge.jsonl", nproc=4))
        first = len([r for r in server.requests if r.method == "POST"])
        again = score_shortqa(table(), JournalledJudge(model, tmp_path / "judge.jsonl", nproc=4))
        second = len([r for r in server.requests if r.method == "POST"])
    assert result.primary_value == pytest.approx(4 / 9) and again.primary_value == pytest.approx(4 / 9)
    # rows 0, 1, 8 once, 2 twice, 6 three times, 7 once (failed) = 9 calls; the rerun asks only the failed row again
    assert first == 9 and second == first + 1
    assert result.counts["judge_errors"] == 1 and again.counts["judge_errors"] == 1
