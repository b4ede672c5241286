"""DynaMath scored as VLMEvalKit scores it (vlmeval/dataset/dynamath.py at e8e78f05): the JSON short answer, the
rules per answer type, the judge for what no rule reads, the average and worst-case figures; worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks.dynamath import JUDGE_SYSTEM, parse_answer, rule_answer

ROWS = [  # qid, varid, subject, level, answer_type, answer, reply
    (1, 1, "ALG", 1, "float", "3.142", '{"solution": "...", "short answer": "3.1416"}'),  # within 0.001: right
    (1, 2, "ALG", 1, "float", "2.000", "The answer is 2π"),  # no rule reads it: the judge says 6.283: wrong
    (3, 1, "GEO", 2, "multiple choice", "B", '{"short answer": "b"}'),  # B: right
    (3, 2, "GEO", 2, "multiple choice", "C", "C) because..."),  # several letters; judge unread; "C" in "C) ": right
    (5, 1, "ALG", 1, "free form", "x=2", "x=2"),  # part of the answer: right
    (5, 2, "ALG", 1, "free form", "x=3", None),  # a failed call: wrong
]


def test_parse_answer_follows_vlmevalkit():
    assert parse_answer("2π", "float") == (True, pytest.approx(6.2831853))
    assert parse_answer("12 cm", "float") == (True, 12.0)
    assert parse_answer("The answer is A", "multiple choice") == (False, None)  # T, H, E, A: E and A
    assert parse_answer("option d", "multiple choice") == (True, "D")
    assert rule_answer('Here: {"short answer": "\\\\frac{1}{2}"}', "free form") == (True, "frac{1}{2}")


def write(lmu_root: Path, name: str) -> None:
    write_tsv(lmu_root / f"{name}.tsv", [
        {"index": i, "image": b64(image_bytes()), "question": f"Q{i}", "qid": q, "varid": v, "subject": s,
         "knowledge_level": lv, "answer_type": t, "answer": a}
        for i, (q, v, s, lv, t, a, _) in enumerate(ROWS)])  # fmt: skip


def judge_reply(request) -> str:
    assert request.system == JUDGE_SYSTEM
    return "6.283" if "three-digit floating-point number in a single line" in request.prompt else "I think"


def test_figures_with_a_judge(lmu_root: Path):
    write(lmu_root, "DynaMath")
    ds = build_dataset("DynaMath", root=lmu_root, progress=False, keep_local_tsv=True)
    judge = FunctionJudge(judge_reply)
    result = ds.evaluate(ds.data.assign(prediction=[r[-1] for r in ROWS]), judge=judge)
    assert [r.prompt for r in judge.asked] == [
        "Free-form answer: The answer is 2π\nInstruction: Output a three-digit floating-point number in a single line.",
        "Free-form answer: C) because...\nInstruction: Output the corresponing choice option, such as 'A', 'B', 'C', "
        "'D', in a single line."]  # fmt: skip
    assert result.per_sample["hit"].tolist() == [True, False, True, True, True, False]
    assert result.metrics == pytest.approx({
        "Overall": 4 / 6, "Subject-ALG": 0.5, "Subject-GEO": 1.0, "Level-1": 0.5, "Level-2": 1.0,
        "Worst Case: Overall": 1 / 3, "Worst Case: Subject-ALG": 0.0, "Worst Case: Subject-GEO": 1.0,
        "Worst Case: Level-1": 0.0, "Worst Case: Level-2": 1.0})  # fmt: skip
    assert result.counts["by_judge"] == 2 and result.counts["inference_errors"] == 1


GUIDE_FLOAT = (
    "## Question\n Q0\n## Answer Instruction Please provide an answer to the question outlined above. Your response "
    "should adhere to the following JSON format, which includes two keys: 'solution' and 'short answer'. The "
    "'solution' key can contain detailed steps needed to solve the question, and the 'short answer' key should "
    "provide a concise response. Format the answer as a three-digit floating-point number and provide it in the "
    "'short answer' key.\nExample of expected JSON response format:\n"
    '{\n    "solution": "[Detailed step-by-step explanation]",\n    "short answer": "[Concise Answer]"\n}'
)


def test_the_prompts_and_scoring_without_a_judge(lmu_root: Path):
    write(lmu_root, "DynaMath")
    write(lmu_root, "DynaMath_noprompt")
    assert build_dataset("DynaMath", root=lmu_root, progress=False, keep_local_tsv=True).build_prompt(0)[-1][
        "value"] == GUIDE_FLOAT
    bare = build_dataset("DynaMath_noprompt", root=lmu_root, progress=False, keep_local_tsv=True)
    assert bare.build_prompt(0)[-1]["value"] == "## Question\n Q0"
    result = bare.evaluate(bare.data.assign(prediction=[r[-1] for r in ROWS]))
    # row 2 unread (wrong either way); row 4 unread: "C" among the first three characters: right
    assert result.per_sample["hit"].tolist() == [True, False, True, True, True, False]
    assert result.counts["unread"] == 2 and any("not sent to a judge" in n for n in result.notes)
    assert json.loads(json.dumps(bare.info()["scorer"])) == {"scorer": "dynamath", "guide": False}
