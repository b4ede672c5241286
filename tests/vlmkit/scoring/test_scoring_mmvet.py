"""MMVet grading: VLMEvalKit's prompt to the character, its 5 asks at rising temperature, its `_score.csv` layout,
and judge failures that are reported, never turned into grades."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.benchmarks.mmvet import mmvet_prompt, read_grade, score_mmvet

# The facts file's MMVet prompt (section 5), JSON-escaped: the slots are <<QUESTION>>, <<ANSWER>>, <<PREDICTION>>.
FACTS_MMVET = "\nCompare the ground truth and prediction from AI models, to give a correctness score for the prediction.\n<AND> in the ground truth means it is totally right\nonly when all elements in the ground truth are present in the prediction,\nand <OR> means it is totally right when any one element in the ground truth is present in the prediction.\nThe correctness score is 0.0 (totally wrong), 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, or 1.0 (totally right).\nJust complete the last space of the correctness score.\n\nQuestion | Ground truth | Prediction | Correctness\n--- | --- | --- | ---\nWhat is x in the equation? | -1 <AND> -5 | x = 3 | 0.0\nWhat is x in the equation? | -1 <AND> -5 | x = -1 | 0.5\nWhat is x in the equation? | -1 <AND> -5 | x = -5 | 0.5\nWhat is x in the equation? | -1 <AND> -5 | x = -5 or 5 | 0.5\nWhat is x in the equation? | -1 <AND> -5 | x = -1 or x = -5 | 1.0\nCan you explain this meme? | This meme is poking fun at the fact that the names of the countries\nIceland and Greenland are misleading. Despite its name, Iceland is known for its beautiful green landscapes,\nwhile Greenland is mostly covered in ice and snow. The meme is saying that the person has trust issues\nbecause the names of these countries do not accurately represent their landscapes. |\nThe meme talks about Iceland and Greenland. It's pointing out that despite their names,\nIceland is not very icy and Greenland isn't very green. | 0.4\nCan you explain this meme? | This meme is poking fun at the fact that the names of the countries\nIceland and Greenland are misleading. Despite its name, Iceland is known for its beautiful green landscapes,\nwhile Greenland is mostly covered in ice and snow. The meme is saying that the person has trust issues\nbecause the names of these countries do not accurately represent their landscapes. |\nThe meme is using humor to point out the misleading nature of Iceland's and Greenland's names.\nIceland, despite its name, has lush green landscapes while Greenland is mostly covered in ice and snow.\nThe text 'This is why I have trust issues' is a playful way to suggest\nthat these contradictions can lead to distrust or confusion.\nThe humor in this meme is derived from the unexpected contrast between the names of the countries\nand their actual physical characteristics. | 1.0\n\n<<QUESTION>> | <<ANSWER>> | <<PREDICTION>> | "


def facts_prompt(question: str, padded_answer: str, prediction: str) -> str:
    return (FACTS_MMVET.replace("<<QUESTION>>", question).replace("<<ANSWER>>", padded_answer)
            .replace("<<PREDICTION>>", prediction))


# (index, question, answer, category, prediction): MMVet's TSV columns (image left out: the judge never sees it)
ROWS = [
    (0, "What is x in the equation?", "-1<AND>-5", "rec,math", "x = -1"),
    (1, "What does the sign say?", "STOP", "ocr", "It says stop."),
    (2, "Who painted this?", "Van Gogh<OR>Vincent van Gogh", "rec,know", "Monet"),
    (3, "Explain the joke.", "A pun on bank.", "rec,gen", "No idea."),
    (4, "Where is the cup?", "left", "ocr,spat", None),
    (5, "What is the total?", "7", "ocr,math", "The total is 7."),
]
# Replies per prompt, one per ask (the last repeats): row 2 is read on the second ask, row 3 never (1.5 > 1).
REPLIES = {
    facts_prompt("What is x in the equation?", "-1 <AND> -5", "x = -1"): ["0.5"],
    facts_prompt("What does the sign say?", "STOP", "It says stop."): [" 1.0\n"],
    facts_prompt("Who painted this?", "Van Gogh <OR> Vincent van Gogh", "Monet"): ["zero", "0.0"],
    facts_prompt("Explain the joke.", "A pun on bank.", "No idea."): ["1.5"],
    facts_prompt("What is the total?", "7", "The total is 7."): ["<think>matches</think>0.8"],
}


def table(rows=ROWS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["index", "question", "answer", "category", "prediction"])


def keyed(request: JudgeRequest) -> str:
    replies = REPLIES[request.prompt]  # a prompt that is not the facts' text is a KeyError: a judge error
    return replies[min(request.attempt, len(replies) - 1)]


def test_prompt_is_the_facts_text():
    assert mmvet_prompt("<<QUESTION>>", "<<ANSWER>>", "<<PREDICTION>>") == FACTS_MMVET
    # <AND> / <OR> in the ground truth are padded with spaces, as VLMEvalKit does
    assert mmvet_prompt("Q", "a<AND>b<OR>c", "p").endswith("\nQ | a <AND> b <OR> c | p | ")


def test_scores_breakdown_and_asks_match_hand_computation():
    judge = FunctionJudge(keyed, name="keyed")
    result = score_mmvet(table(), judge)
    # grades: row0 0.5, row1 1.0, row2 0.0 (second ask), row3 0 (unread after 5 asks), row4 0 (no prediction),
    # row5 0.8  -> Overall = (0.5 + 1.0 + 0 + 0 + 0 + 0.8) / 6 x 100 = 38.333...
    assert result.per_sample["score"].tolist() == [0.5, 1.0, 0.0, 0.0, 0.0, 0.8]
    assert result.per_sample["method"].tolist() == [
        "judge", "judge", "judge", "judge_unread", "inference_error", "judge"]
    assert result.primary == "Overall" and result.primary_value == pytest.approx(230 / 6)
    # capabilities (substring of category): rec rows 0,2,3 -> (0.5+0+0)/3; ocr rows 1,4,5 -> (1+0+0.8)/3;
    # know row 2 -> 0; gen row 3 -> 0; spat row 4 -> 0; math rows 0,5 -> (0.5+0.8)/2
    expected = {"rec": 50 / 3, "ocr": 60.0, "know": 0.0, "gen": 0.0, "spat": 0.0, "math": 65.0, "Overall": 230 / 6}
    sheet = result.table
    assert sheet.columns.tolist() == ["Category", "tot", "acc"]
    assert sheet["Category"].tolist() == ["rec", "ocr", "know", "gen", "spat", "math", "Overall"]
    assert sheet["tot"].tolist() == [3, 3, 1, 1, 1, 2, 6]
    assert sheet["acc"].tolist() == pytest.approx([expected[c] for c in sheet["Category"]])
    assert result.table_suffix == "score" and result.scale_of("Overall").kind == "percent"
    for name, value in expected.items():
        assert result.metrics[name] == pytest.approx(value)
    # _score_fine.csv: exact category combinations, commas -> underscores
    assert result.metrics["fine/rec_math"] == pytest.approx(50.0) and result.metrics["fine/ocr_math"] == 80.0
    assert result.counts == {"total": 6, "scored": 6, "by_judge": 4, "unread": 1, "judge_errors": 0,
                             "inference_errors": 1}
    # asks: VLMEvalKit's schedule, 5 at most, temperature 0.5 x attempt, max_tokens 2048; no ask without prediction
    unread = [r for r in judge.asked if r.prompt.endswith("| No idea. | ")]
    assert [(r.attempt, r.temperature) for r in unread] == [(0, 0.0), (1, 0.5), (2, 1.0), (3, 1.5), (4, 2.0)]
    assert {r.max_tokens for r in judge.asked} == {2048} and {r.system for r in judge.asked} == {None}
    assert len(judge.asked) == 3 + 2 + 5  # rows 0,1,5 once, row 2 twice, row 3 five times
    assert result.per_sample["judge"].tolist()[2:5] == ["0.0", "1.5", None]  # the last raw reply
    assert any("judge_unread" in note for note in result.notes)


def test_a_failed_judge_call_is_a_reported_judge_error_never_a_grade():
    def flaky(request: JudgeRequest) -> str:
        if "Monet" in request.prompt:
            raise ConnectionError("judge down")
        return keyed(request)

    result = score_mmvet(table(), FunctionJudge(flaky))
    assert result.per_sample.loc[2, "method"] == "judge_error"
    assert result.per_sample.loc[2, "score"] == 0.0 and result.per_sample.loc[2, "judge"] is None
    assert result.counts["judge_errors"] == 1
    assert any("judge_error" in note and "asked again" in note for note in result.notes)


def test_reading_grades():
    assert read_grade("0.7") == 0.7 and read_grade(" 0.7\n") == 0.7 and read_grade("1") == 1.0
    assert read_grade("<think>close</think> 0.3") == 0.3
    for reply in ("nan", "inf", "1.01", "-0.1", "0.7 because", "Correctness: 0.7", ""):
        assert read_grade(reply) is None, reply


def test_missing_cells_are_one_line_errors():
    rows = [list(r) for r in ROWS]
    rows[1][3] = None
    with pytest.raises(ValueError, match=r"row index 1, field `category`: missing"):
        score_mmvet(table(rows), FunctionJudge(keyed))
    with pytest.raises(ValueError, match="duplicate `index`"):
        score_mmvet(table(ROWS + [ROWS[0]]), FunctionJudge(keyed))


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
        replies = REPLIES.get(prompt)
        if replies is None:
            return Reply(400, {"error": {"message": "unexpected prompt"}})
        attempt = round(request.body["temperature"] / 0.5)  # MMVet asks attempt n at temperature 0.5 n
        return chat_reply(replies[min(attempt, len(replies) - 1)])

    with FaultServer(serve) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, retries=0, timeout=10)
        judge = JournalledJudge(model, tmp_path / "judge.jsonl", nproc=4)
        result = score_mmvet(table(), judge)
        posts = [r for r in server.requests if r.method == "POST"]
        assert result.primary_value == pytest.approx(230 / 6)
        assert len(posts) == 10 and {p.body["max_tokens"] for p in posts} == {2048}
        temperatures = sorted(p.body["temperature"] for p in posts if "No idea." in p.body["messages"][-1]["content"])
        assert temperatures == [0.0, 0.5, 1.0, 1.5, 2.0]
        # a resumed scoring asks the judge nothing again
        again = score_mmvet(table(), JournalledJudge(model, tmp_path / "judge.jsonl", nproc=4))
        assert len([r for r in server.requests if r.method == "POST"]) == 10
        assert again.primary_value == pytest.approx(result.primary_value)
