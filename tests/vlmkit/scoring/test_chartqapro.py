"""ChartQAPro scored as VLMEvalKit scores it (utils/chartqapro.py evaluate_predictions_chartqapro at e8e78f05, with
the `anls` package's anls_score), and its prompt as VLMEvalKit's prompt_context writes it: values worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.chartqapro import anls_package, quote_bare_items, score_chartqapro

ROWS = [  # (question_type, answer, Year, reply)
    ("Factoid", "['42']", "['NO']", "42.5."),  # within 5% of 42: 1
    ("Factoid", "['1990']", "['YES']", "1991"),  # a year: exact only: 0
    ("Multi Choice", "['b']", "['NO']", "B"),  # ANLS of b and b: 1
    ("Fact Checking", "['True']", "['NO']", "Tru"),  # ANLS: 1 - 1/4 = 0.75
    ("Conversational", "['A1', '[apple, pear]']", "['NO', 'NO']", "['apple', 'peach']"),  # (1 + (1 - 2/5)) / 2
    ("Hypothetical", "['0']", "['NO']", None),  # a failed call: 0
]


def frame() -> pd.DataFrame:
    return pd.DataFrame([{"index": i, "question_type": t, "answer": a, "Year": y, "prediction": p}
                         for i, (t, a, y, p) in enumerate(ROWS)])  # fmt: skip


def test_anls_is_the_anls_packages():
    assert anls_package("Tru", "true") == pytest.approx(0.75)
    assert anls_package("ab", "ac") == 0.0  # distance 0.5 is not below the threshold
    assert anls_package("  New   York ", "new york") == 1.0  # spaces collapsed before measuring


def test_bare_list_items_are_quoted():
    assert quote_bare_items("[apple, pear]") == "['apple', 'pear']"
    assert quote_bare_items("12") == "12"


def test_types_and_overall():
    result = score_chartqapro(frame())
    assert result.per_sample["score"].tolist() == pytest.approx([1, 0, 1, 0.75, 0.8, 0])
    assert result.metrics == pytest.approx({"Factoid": 0.5, "Multi Choice": 1.0, "Fact Checking": 0.75,
                                            "Conversational": 0.8, "Hypothetical": 0.0, "Overall": 3.55 / 6})
    assert result.vlmevalkit.metrics["Overall"] == pytest.approx(3.55 / 6) and result.vlmevalkit.differing == []
    assert result.counts["inference_errors"] == 1


# VLMEvalKit's Direct/Factoid prompt, copied from vlmeval/dataset/utils/chartqapro.py (12 spaces of indentation)
FACTOID = """
            You are given a factoid question that you need to answer based on the provided image.
            Your answer should be a single word, number, or phrase. If the question is unanswerable based on
            the information in the provided image, your answer should be unanswerable. Do not generate units.
            But if numerical units such as million, m, billion, B, or K are required, use the exact notation
            shown in the chart.
            If there are multiple answers, put them in brackets using this format [’Answer1’, ’Answer2’].
            Remember to generate the final answer only without any additional text!
            Question: How many?
            """


def test_the_prompt_is_vlmevalkits(lmu_root: Path):
    shot = b64(image_bytes())
    write_tsv(lmu_root / "ChartQAPro_CoT.tsv", [
        {"index": 0, "image": shot, "question": "['How many?']", "answer": "['42']", "question_type": "Factoid",
         "Year": "['NO']", "paragraph": ""},
        {"index": 1, "image": shot, "question": "['Q1?', 'Q2?']", "answer": "['A1', 'A2']",
         "question_type": "Conversational", "Year": "['NO', 'NO']", "paragraph": "A note about the chart."},
    ])  # fmt: skip
    direct = build_dataset("ChartQAPro_CoT", root=lmu_root, progress=False, keep_local_tsv=True)
    assert direct.style == "CoT"
    direct.style = "Direct"
    first = direct.build_prompt(0)
    assert [p["type"] for p in first] == ["image", "text"] and first[1]["value"] == FACTOID
    direct.style = "CoT"
    second = direct.build_prompt(1)
    assert [p["type"] for p in second] == ["image", "text", "text"]
    assert second[1]["value"] == "A note about the chart."
    assert "You need to think step-by-step" in second[2]["value"]
    assert second[2]["value"].endswith("Conversation: ['Q1?', 'A1'] Question: Q2?\n            ")
    result = direct.evaluate(direct.data.assign(prediction=["42", "a2"]))
    assert result.metrics["Overall"] == 1.0 and any("CoT replies" in n for n in result.notes)
    assert json.dumps(direct.info()["scorer"]) == '{"scorer": "chartqapro", "style": "CoT"}'
