"""MMOral_OPG_OPEN graded as VLMEvalKit grades it (mmoral_opg_open.py, utils/mmoral_opg.py at e8e78f05): the judge
prompt's row, the 5 attempts at rising temperature, the 0-1 score and the percentages worked by hand; the prompt by
catalog name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.benchmarks.mmoral_opg_open import judge_prompt, read_score, score_mmoral_opg_open


def test_the_judge_prompt_ends_in_the_row():
    prompt = judge_prompt("Which teeth?", "#18<AND>#28", "#18 and #28")
    assert prompt.startswith("\nGiven the question, compare the ground truth and prediction from AI\nmodels, ")
    assert prompt.endswith("| 1.0\n\nWhich teeth? | #18 <AND> #28 | #18 and #28 | ")


@pytest.mark.parametrize(("text", "score"), [("0.7", 0.7), (" 1.0\n", 1.0), ("1.5", None), ("-0.1", None),
                                             ("0.7 because", None), ("nan", None)])  # fmt: skip
def test_the_score_is_the_whole_reply_as_a_number(text, score):
    assert read_score(text) == score


def test_grading():
    df = pd.DataFrame([
        {"index": 1, "question": "Q1", "answer": "A1", "category": "Teeth,Jaw", "prediction": "p1"},
        {"index": 2, "question": "Q2", "answer": "A2", "category": "Teeth", "prediction": "p2"},
        {"index": 3, "question": "Q3", "answer": "A3", "category": "Patho", "prediction": "p3"},
        {"index": 4, "question": "Q4", "answer": "A4", "category": "Patho", "prediction": None},
    ])  # fmt: skip
    replies = {"p1": ["0.8"], "p2": ["about half", "2", "0.5"], "p3": ["no"] * 5}

    def fn(request: JudgeRequest) -> str:
        reply = request.prompt.rsplit(" | ", 2)[-2]
        assert request.temperature == [0.0, 0.5, 1.0, 1.5, 2.0][request.attempt] and request.max_tokens == 16384
        return replies[reply][request.attempt]

    judge = FunctionJudge(fn)
    result = score_mmoral_opg_open(df, judge)
    assert result.per_sample["score"].tolist() == [0.8, 0.5, 0.0, 0.0]
    assert result.metrics == pytest.approx({"Overall": 32.5, "Teeth": 65.0, "Jaw": 80.0, "Patho": 0.0,
                                            "category: Teeth_Jaw": 80.0, "category: Teeth": 50.0,
                                            "category: Patho": 0.0})  # fmt: skip
    assert len(judge.asked) == 1 + 3 + 5 and result.counts["unread"] == 1 and result.counts["inference_errors"] == 1


def test_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "MMOral_OPG_OPEN.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "Any caries?",
                                                  "answer": "No caries.", "category": "Patho"}])  # fmt: skip
    ds = build_dataset("MMOral_OPG_OPEN", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    assert ds.build_prompt(0)[-1]["value"] == ("Question: Any caries?\nPlease provide a detailed and accurate answer "
                                               "to the question.")  # fmt: skip
    result = ds.evaluate(ds.data.assign(prediction=["None seen."]), judge=FunctionJudge(lambda r: "1.0"))
    assert result.metrics["Overall"] == 100.0
