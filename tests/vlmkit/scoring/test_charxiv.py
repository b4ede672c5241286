"""CharXiv graded as VLMEvalKit grades it (vlmeval/dataset/charxiv.py at e8e78f05): the row's grading prompt with
the reply put in, JSON judge replies, the retry and failure rules, the categories; worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.catalog.registry import NotScorableError, build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.core.errors import DataError
from vlmkit.judging import FunctionJudge

GRADING = "Grade the answer. The reply: {PREDICTION}. Reply in JSON."


def rows(column: str, values: list[int]) -> list[dict]:
    return [{"index": i, "image": b64(image_bytes()), "question": f"Q{i}", "grading_query": GRADING, column: v}
            for i, v in enumerate(values)]  # fmt: skip


def judge_by_reply(request) -> str:
    """Grades by the reply put into the prompt: `right` 1, `wrong` 0, `fenced` a JSON block in a fence (never JSON),
    `list` a JSON list (not a grading)."""
    reply = request.prompt.split("The reply: ", 1)[1].split(". Reply in JSON.")[0]
    if reply == "fenced":
        return '```json\n{"extracted_answer": "x", "score": 1}\n```'
    if reply == "list":
        return "[1]"
    return json.dumps({"extracted_answer": reply, "score": 1 if reply == "right" else 0})


def test_descriptive_categories_and_overall(lmu_root: Path):
    # qid 1 Information Extraction, 8 Enumeration, 10 Counting, 12 Counting
    write_tsv(lmu_root / "CharXiv_descriptive_val.tsv", rows("qid", [1, 8, 10, 12, 12]))
    ds = build_dataset("CharXiv_descriptive_val", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    assert ds.build_prompt(0)[-1]["value"] == "Q0"
    judge = FunctionJudge(judge_by_reply)
    result = ds.evaluate(ds.data.assign(prediction=["right", "wrong", "right", "fenced", None]), judge=judge)
    # Counting: right (1), fenced (never JSON: 10 asks, then 0), a failed call (0) -> 1/3; Overall 2/5
    assert result.metrics == pytest.approx({"Information Extraction": 1.0, "Enumeration": 0.0, "Counting": 1 / 3,
                                            "Overall": 0.4})  # fmt: skip
    asked = [r.prompt for r in judge.asked]
    assert asked.count(GRADING.replace("{PREDICTION}", "fenced")) == 10 and len(asked) == 13
    assert all(r.temperature == 0.0 and r.max_tokens == 256 for r in judge.asked)
    assert result.counts["inference_errors"] == 1 and result.counts["unread"] == 1


def test_reasoning_categories_and_a_reply_that_is_not_a_grading(lmu_root: Path):
    write_tsv(lmu_root / "CharXiv_reasoning_val.tsv", rows("inst_category", [1, 3, 3]))
    ds = build_dataset("CharXiv_reasoning_val", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    judge = FunctionJudge(judge_by_reply)
    result = ds.evaluate(ds.data.assign(prediction=["right", "list", "right"]), judge=judge)
    assert result.metrics == pytest.approx({"Text-in-Chart": 1.0, "Number-in-Chart": 0.5, "Overall": 2 / 3})
    assert len(judge.asked) == 3  # a JSON reply that is not a grading is not asked again


def test_without_a_judge_it_is_refused_in_one_line(lmu_root: Path):
    write_tsv(lmu_root / "CharXiv_reasoning_val.tsv", rows("inst_category", [1]))
    with pytest.raises(NotScorableError, match="CharXiv_reasoning_val is scored by an LLM judge .*--judge MODEL"):
        build_dataset("CharXiv_reasoning_val", root=lmu_root, progress=False, keep_local_tsv=True)
    ds = build_dataset("CharXiv_reasoning_val", root=lmu_root, progress=False, keep_local_tsv=True,
                       inference_only=True)  # the prompt, for --mode infer
    with pytest.raises(DataError, match="--judge MODEL"):
        ds.evaluate(ds.data.assign(prediction=["x"]))
