"""VLMEvalKit's figure beside vlmkit's for Y/N benchmarks (issue 23): POPE with and without a judge, AMBER's and the
others' answer comparison. Small TSVs of each benchmark's shape through the catalog rows; both figures worked out by
hand from VLMEvalKit's code at e8e78f05 (vlmeval/dataset/image_yorn.py, utils/yorn.py)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_row
from vlmkit.judging.base import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.choice_judge import yorn_judge_prompt
from vlmkit.scoring.kinds.yorn import score_yorn, vlmevalkit_yes_no

from tests.support.tsvs import b64, image_bytes, write_tsv

RED = b64(image_bytes("red"))
POPE_ROWS = [
    {"index": 0, "question": "Is there a car in the image?", "answer": "Yes", "category": "adversarial"},
    {"index": 1, "question": "Is there a dog in the image?", "answer": "Yes", "category": "adversarial"},
    {"index": 2, "question": "Is there a cat in the image?", "answer": "No", "category": "adversarial"},
    {"index": 3, "question": "Is there a bus in the image?", "answer": "No", "category": "adversarial"},
]
POPE_REPLIES = ["Yes, there is.", "There is no doubt, yes.", "No", ""]


def build(name: str, lmu_root, tsv_rows):
    write_tsv(lmu_root / f"{name}.tsv", [{"image": RED, **row} for row in tsv_rows])
    return build_row(dataclasses.replace(catalog_rows()[name], md5=""), root=lmu_root, progress=False)


def listed(figure):
    return [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing]


def test_vlmevalkits_rule_and_punctuation() -> None:
    # yes and no both present: Unknown; VLMEvalKit's punctuation copy keeps a period after a digit, which does not
    # touch the words
    assert vlmevalkit_yes_no("There is no doubt, yes.") == "Unknown"
    assert vlmevalkit_yes_no("Yes, 2. yes") == "Yes" and vlmevalkit_yes_no("nan") == "Unknown"


def test_pope_without_a_judge(lmu_root) -> None:
    ds = build("POPE", lmu_root, POPE_ROWS)
    assert ds.build_prompt(0)[-1]["value"] == "Is there a car in the image?"
    res = ds.evaluate(ds.data.assign(prediction=POPE_REPLIES))
    # vlmkit reads Yes, Yes (`no doubt` is no answer), No, Unknown (empty):
    #   Yes positive: tp 2, fp 0, fn 0 -> precision 100, recall 100, F1 100; acc 3/4 = 75
    assert res.metrics["Overall"] == pytest.approx(100.0) and res.metrics["acc"] == pytest.approx(75.0)
    # VLMEvalKit reads Yes, Unknown (both words), No, Unknown ('' is 'nan'):
    #   tp 1, fp 0, fn 1 -> precision 100, recall 50, F1 2 * 1 * 0.5 / 1.5 = 66.67; acc 2/4 = 50
    figure = res.vlmevalkit
    assert figure.primary == "Overall"
    assert figure.metrics["Overall"] == pytest.approx(200 / 3) and figure.metrics["acc"] == pytest.approx(50.0)
    assert figure.metrics["recall"] == pytest.approx(50.0) and figure.metrics["precision"] == pytest.approx(100.0)
    assert figure.metrics["adversarial/F1"] == pytest.approx(200 / 3)
    assert listed(figure) == [(1, "Yes", "Unknown", 1.0, 0.0)]


def test_pope_with_a_judge_asks_what_vlmevalkits_rule_cannot_read(lmu_root) -> None:
    ds = build("POPE", lmu_root, POPE_ROWS)
    judge = FunctionJudge(lambda r: {"1": "Yes", "3": "No"}[r.row or ""], name="keyed")
    res = ds.evaluate(ds.data.assign(prediction=POPE_REPLIES), judge=judge)
    # vlmkit's rules read rows 0-2, and an empty reply is never sent: vlmkit asks nothing. VLMEvalKit sends every
    # reply its rule leaves Unknown: row 1 as written and row 3 as the text 'nan'
    asked: dict[str, JudgeRequest] = {r.row or "": r for r in judge.asked}
    assert sorted(asked) == ["1", "3"]
    assert asked["3"].prompt == yorn_judge_prompt("Is there a bus in the image?", "nan")
    assert asked["1"].prompt == yorn_judge_prompt("Is there a dog in the image?", "There is no doubt, yes.")
    # vlmkit: as without a judge (F1 100, acc 75); VLMEvalKit: Yes, Yes (judge), No, No (judge): all right -> 100, 100
    assert res.metrics["acc"] == pytest.approx(75.0)
    assert res.vlmevalkit.metrics["Overall"] == pytest.approx(100.0)
    assert res.vlmevalkit.metrics["acc"] == pytest.approx(100.0)
    assert listed(res.vlmevalkit) == [(3, "Unknown", "No", 0.0, 1.0)]
    assert any("'nan'" in n for n in res.vlmevalkit.notes)
    assert any("asked of the judge" in n for n in res.vlmevalkit.notes)


def test_answer_case_counts_for_vlmevalkit_except_on_amber() -> None:
    df = pd.DataFrame({"index": [1, 2], "prediction": ["Yes", "no"], "answer": ["yes", "No"],
                       "category": ["discriminative-hallucination", "discriminative-hallucination"]})
    # plain accuracy: VLMEvalKit compares `yes` with its reading `Yes` exactly (miss); vlmkit ignores case
    acc = score_yorn(df, "acc")
    assert acc.metrics["Overall"] == 100.0 and acc.vlmevalkit.metrics["Overall"] == pytest.approx(50.0)
    assert listed(acc.vlmevalkit) == [(1, "Yes", "Yes", 1.0, 0.0)]
    # AMBER: VLMEvalKit lower-cases both sides: no difference (Existence 100, Avg ACC 100)
    amber = score_yorn(df, "amber")
    assert amber.vlmevalkit.metrics == {"Avg ACC": 100.0, "Existence": 100.0} and amber.vlmevalkit.differing == []
