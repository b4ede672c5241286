"""LLaVABench review: VLMEvalKit's prompt, system prompt and temperature; the relative score computed by hand; and
unreadable or failed reviews left out of both means (VLMEvalKit averages them in as -1)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.benchmarks.llavabench import (
    RULE_KO,
    read_review,
    review_prompt,
    score_llavabench,
)

# The facts file's LLaVABench review prompt (section 6), JSON-escaped; slots <<CAPTION>>, <<QUESTION>>,
# <<GPT4_ANSWER>>, <<PREDICTION>>.
FACTS_REVIEW = "[Context]\n<<CAPTION>>\n\n[Question]\n<<QUESTION>>\n\n[Assistant 1]\n<<GPT4_ANSWER>>\n\n[End of Assistant 1]\n\n[Assistant 2]\n<<PREDICTION>>\n\n[End of Assistant 2]\n\n[System]\nWe would like to request your feedback on the performance of two AI assistants in response to the user question displayed above. The user asks the question on observing an image. For your reference, the visual content in the image is represented with a few sentences describing the image. \nPlease rate the helpfulness, relevance, accuracy, level of details of their responses. Each assistant receives an overall score on a scale of 1 to 10, where a higher score indicates better overall performance.\nPlease first output a single line containing only two values indicating the scores for Assistant 1 and 2, respectively. The two scores are separated by a space.\nIn the subsequent line, please provide a comprehensive explanation of your evaluation, avoiding any potential bias and ensuring that the order in which the responses were presented does not affect your judgment.\n\n"
FACTS_SYSTEM = "You are a helpful and precise assistant for checking the quality of the answer."
# sha256 of rule_dict_ko's text in VLMEvalKit's vlmeval/dataset/utils/llavabench.py (the facts name it, not quote it)
RULE_KO_SHA256 = "1ea23d7c73cdb2da89bb727ebf391fee40b9f3500e57fa0650b10d8a86d7235c"

CAPTION = "A red double-decker bus on a city street."
# (index, question, caption, gpt4_ans, category, prediction): LLaVABench's TSV columns (image left out)
ROWS = [
    (0, "What vehicle is this?", CAPTION, "A red double-decker bus.", "conv", "A red bus."),
    (1, "What colour is it?", CAPTION, "It is red.", "conv", "A bus."),
    (2, "Describe the image.", CAPTION, "A red bus drives down a street.", "detail", "Bus on a road."),
    (3, "Describe it in detail.", CAPTION, "A bus with two decks.", "detail", "???"),
    (4, "Why is the bus red?", CAPTION, "Tradition in London.", "complex", None),
    (5, "What might happen next?", CAPTION, "It may stop.", "complex", "Because it rains."),
    (6, "Who drives it?", CAPTION, "A bus driver.", "complex", "Boom"),
]
# The judge's reviews, keyed by the model's answer; first line "<reference> <model>"
REVIEWS = {
    "A red bus.": "8 9\nAssistant 2 is accurate and concise.",
    "A bus.": "9, 6\nAssistant 2 omits the colour.",
    "Bus on a road.": "10 5\nAssistant 2 is too short.",
    "???": "Assistant 1: 9\nAssistant 2: 3",  # not two numbers on the first line: unread
    "Because it rains.": "7 7\nBoth are speculative.",
}


def table(rows=ROWS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["index", "question", "caption", "gpt4_ans", "category", "prediction"])


def keyed(request: JudgeRequest) -> str:
    for question, caption, reference, prediction in ((r[1], r[2], r[3], r[5]) for r in ROWS):
        expected = (FACTS_REVIEW.replace("<<CAPTION>>", caption).replace("<<QUESTION>>", question)
                    .replace("<<GPT4_ANSWER>>", reference).replace("<<PREDICTION>>", str(prediction)))
        if request.prompt == expected:
            if prediction == "Boom":
                raise TimeoutError("judge timed out")
            return REVIEWS[prediction]
    raise KeyError("a prompt that is not the facts' text")


def test_prompt_is_the_facts_text():
    assert review_prompt("<<CAPTION>>", "<<QUESTION>>", "<<GPT4_ANSWER>>", "<<PREDICTION>>") == FACTS_REVIEW
    korean = review_prompt("C", "Q", "R", "P", language="ko")
    assert korean.startswith("[설명]\nC\n\n[질문]\nQ\n\n[어시스턴트 1]\nR\n\n[어시스턴트 1 끝]\n\n[어시스턴트 2]\nP\n\n"
                             "[어시스턴트 2 끝]\n\n[System]\n")
    assert korean.endswith(RULE_KO + "\n\n")
    assert hashlib.sha256(RULE_KO.encode()).hexdigest() == RULE_KO_SHA256


def test_relative_scores_match_hand_computation():
    judge = FunctionJudge(keyed)
    result = score_llavabench(table(), judge)
    # reviews read: rows 0 (8, 9), 1 (9, 6), 2 (10, 5), 5 (7, 7); row 3 unread, row 4 no prediction, row 6 failed
    # overall: model mean (9+6+5+7)/4 = 6.75, reference mean (8+9+10+7)/4 = 8.5 -> 6.75/8.5 x 100 = 79.41...
    # (VLMEvalKit would average row 3 in as (-1, -1): (26/5) / (33/5) x 100 = 78.79)
    assert result.primary == "Relative Score (main)"
    assert result.primary_value == pytest.approx(6.75 / 8.5 * 100)
    assert result.metrics["VLM Score"] == pytest.approx(67.5) and result.metrics["GPT4 Score"] == pytest.approx(85.0)
    # conv: rows 0,1 -> 7.5 / 8.5; detail: row 2 -> 5/10; complex: row 5 -> 7/7
    assert result.metrics["conv/Relative Score (main)"] == pytest.approx(7.5 / 8.5 * 100)
    assert result.metrics["detail/Relative Score (main)"] == pytest.approx(50.0)
    assert result.metrics["complex/Relative Score (main)"] == pytest.approx(100.0)
    assert result.metrics["detail/GPT4 Score"] == pytest.approx(100.0)
    # _score.csv: overall then categories, rounded to 1 decimal
    assert result.table.columns.tolist() == ["split", "Relative Score (main)", "VLM Score", "GPT4 Score"]
    assert result.table.values.tolist() == [
        ["overall", 79.4, 67.5, 85.0], ["complex", 100.0, 70.0, 70.0], ["conv", 88.2, 75.0, 85.0],
        ["detail", 50.0, 50.0, 100.0]]
    assert result.table_suffix == "score" and result.scale_of(result.primary).kind == "percent"
    samples = result.per_sample
    assert samples["method"].tolist() == [
        "judge", "judge", "judge", "judge_unread", "inference_error", "judge", "judge_error"]
    assert samples["points"].tolist() == [9.0, 6.0, 5.0, None, None, 7.0, None]
    assert samples["reference_points"].tolist() == [8.0, 9.0, 10.0, None, None, 7.0, None]
    assert samples["score"].tolist() == [0.9, 0.6, 0.5, None, None, 0.7, None]  # points / 10, for the report
    assert samples["judge"].tolist()[3:5] == [REVIEWS["???"], None]
    assert result.counts == {"total": 7, "scored": 4, "by_judge": 4, "unread": 1, "judge_errors": 1,
                             "inference_errors": 1}
    # one ask per row with a prediction, VLMEvalKit's system prompt and temperature 0.2
    assert len(judge.asked) == 6
    assert {(r.system, r.temperature, r.max_tokens, r.attempt) for r in judge.asked} == {(FACTS_SYSTEM, 0.2, 2048, 0)}
    assert any("judge_unread" in n and "-1" in n for n in result.notes)


def test_reading_reviews():
    assert read_review("8 9\nbecause") == (8.0, 9.0)
    assert read_review("8,9") == (8.0, 9.0) and read_review("7.5 , 8") == (7.5, 8.0)
    assert read_review("8  9") == (8.0, 9.0)  # VLMEvalKit's split(' ') makes three tokens of this: -1, -1
    assert read_review("\n8 9\n") == (8.0, 9.0)
    assert read_review("<think>weighing</think>\n6 7\nok") == (6.0, 7.0)
    for reply in ("8 9 10", "eight nine", "8 11", "nan 9", "Scores: 8 9", "", "8\n9"):
        assert read_review(reply) is None, reply


def test_every_review_failing_leaves_no_figure_and_scored_zero():
    result = score_llavabench(table(ROWS[:2]), FunctionJudge(lambda r: "I cannot rate this."))
    assert result.counts["scored"] == 0 and result.counts["unread"] == 2
    assert result.primary_value != result.primary_value  # NaN: nothing to compare


def test_missing_reference_is_a_one_line_error():
    rows = [list(r) for r in ROWS]
    rows[2][3] = None
    with pytest.raises(ValueError, match=r"row index 2, field `gpt4_ans`: missing"):
        score_llavabench(table(rows), FunctionJudge(keyed))


def test_through_a_real_http_judge(tmp_path: Path):
    pytest.importorskip("vlmkit.run.judge_journal")
    from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
    from vlm.api.openai_compat import OpenAICompatModel
    from vlmkit.run.judge_journal import JournalledJudge

    def serve(request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply(404, {"error": {"message": "no such route"}})
        messages = request.body["messages"]
        prompt = messages[-1]["content"]
        prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        try:
            return chat_reply(keyed(JudgeRequest(prompt)))
        except TimeoutError:
            return Reply(503, {"error": {"message": "overloaded"}})

    with FaultServer(serve) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, retries=0, timeout=10)
        result = score_llavabench(table(), JournalledJudge(model, tmp_path / "judge.jsonl", nproc=3))
        posts = [r for r in server.requests if r.method == "POST"]
    assert result.primary_value == pytest.approx(6.75 / 8.5 * 100)
    assert result.counts["judge_errors"] == 1 and len(posts) == 6
    assert {p.body["temperature"] for p in posts} == {0.2}
    assert all(p.body["messages"][0] == {"role": "system", "content": FACTS_SYSTEM} for p in posts)
