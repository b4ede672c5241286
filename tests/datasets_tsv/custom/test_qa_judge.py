"""Custom QA data judged against its reference (CustomDataset.evaluate(..., judge=...)), as a run would do it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.custom import build_custom_dataset
from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.fence import unfence

from tests.datasets_tsv.custom.conftest import FIXTURES


def _reply_of(request: JudgeRequest) -> str:
    return unfence(request.prompt)


def _judge(by_reply: dict[str, str]) -> FunctionJudge:
    def answer(request: JudgeRequest) -> str:
        reply = _reply_of(request)
        if reply == "timeout":
            raise TimeoutError("judge timed out")
        return by_reply[reply]

    return FunctionJudge(answer, "keyed")


@pytest.fixture()
def qa_file(tmp_path: Path) -> Path:
    rows = [
        {"question": "Capital of France?", "answer": "Paris"},
        {"question": "Largest planet?", "answer": "Jupiter"},
        {"question": "Colour of grass?", "answer": ["green", "verdant"]},
        {"question": "Say something."},
        {"question": "Boiling point of water at sea level in Celsius?", "answer": "100"},
    ]
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _with(ds, predictions: list) -> pd.DataFrame:
    table = ds.data.copy()
    table["prediction"] = predictions
    return table


def test_qa_file_scored_by_the_judge(qa_file: Path):
    ds = build_custom_dataset(qa_file)
    table = _with(ds, ["Paris", "Saturn, I think", "It is green.", "Hello", "timeout"])
    judge = _judge({
        "Paris": '{"analysis": "Correct.", "score": 10}',
        "Saturn, I think": '{"analysis": "Wrong planet.", "score": 1}',
        "It is green.": "```json\n{\"analysis\": \"Right colour.\", \"score\": 9}\n```",
    })
    result = ds.evaluate(table, judge=judge)
    assert result.scorer == "qa_judge" and result.primary == "judge_score"
    # rows with a reference: Paris 10, Saturn 1, green 9, timeout -> judge error (0); "Say something." not scored
    assert result.primary_value == pytest.approx((10 + 1 + 9 + 0) / 40 * 100)
    assert result.metrics["exact_match"] == pytest.approx(25.0) and result.metrics["contains"] == pytest.approx(50.0)
    per = result.per_sample.set_index("index")
    assert per["points"].tolist() == [10.0, 1.0, 9.0, None]
    assert per["method"].tolist() == ["judge", "judge", "judge", "judge_error"]
    assert per.loc[2, "analysis"] == "Right colour." and per.loc[4, "judge"] is None
    assert (result.counts["by_judge"], result.counts["judge_errors"], result.counts["no_target"]) == (3, 1, 1)
    prompts = {_reply_of(r): r.prompt for r in judge.asked}
    assert "Say something." not in "".join(prompts.values())  # a row without a reference is never judged
    assert "[Reference answers (any one of them is correct)]\n- green\n- verdant\n" in prompts["It is green."]
    assert "[Question]\nCapital of France?\n" in prompts["Paris"] and "[Reference answer]\nParis\n" in prompts["Paris"]
    assert "[Conversation before the question]" not in prompts["Paris"]


def test_without_a_judge_qa_is_scored_as_before(qa_file: Path):
    ds = build_custom_dataset(qa_file)
    result = ds.evaluate(_with(ds, ["Paris", "Saturn", "green", "Hello", "99"]))
    assert result.scorer == "text_qa" and result.primary == "exact_match"
    assert result.primary_value == pytest.approx(50.0) and "points" not in result.per_sample.columns


def test_ark_conversation_judged_with_its_earlier_turns():
    ds = build_custom_dataset(FIXTURES / "ark" / "multi_turn.jsonl")
    table = _with(ds, ["2", "3", "五"])
    judge = FunctionJudge(lambda r: '{"analysis": "一致。", "score": 10}' if _reply_of(r) != "五" else
                          '{"analysis": "答案正确，但用汉字书写。", "score": 8}', "zh")
    result = ds.evaluate(table, judge=judge)
    assert result.primary_value == pytest.approx((10 + 10 + 8) / 30 * 100)
    last = judge.asked[2].prompt
    assert ("[Conversation before the question]\nSystem: 请完成下面的计算题\nUser: 3+1\nAssistant: 999\n\n"
            "[Question]\n3+2\n\n[Reference answer]\n5\n\n[Model reply]\n<<<reply ") in last and unfence(last) == "五"
    assert "[Conversation before the question]\nSystem: 请完成下面的计算题\n\n[Question]\n2+1\n" in judge.asked[1].prompt
    assert "[Conversation before the question]" not in judge.asked[0].prompt  # a lone user turn has no context


def test_excel_session_rows_judged_with_the_session_so_far():
    ds = build_custom_dataset(FIXTURES / "ark" / "excel_multi_turn.csv")
    table = _with(ds, ["红烧鱼做法……", "哈哈"])
    judge = FunctionJudge(lambda r: '{"analysis": "ok", "score": 5}', "flat")
    result = ds.evaluate(table, judge=judge)
    assert result.primary_value == pytest.approx(50.0)
    first = judge.asked[0].prompt
    assert first.count("\nUser: ") == 2 and first.count("\nAssistant: ") == 2  # two earlier exchanges
    assert "[Question]\n还有一条鱼\n" in first and "[Reference answer]\n那还可以做一到红烧鱼。" in first
