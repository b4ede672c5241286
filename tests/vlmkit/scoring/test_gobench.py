"""GOBench as VLMEvalKit scores it (gobench.py at e8e78f05): the three ratings read from the reply and the answer,
max(0, (0.5 - |diff|) / 0.5) per rating, rows without all three left out, worked by hand; the prompt by catalog
name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.gobench import read_scores, read_truth, score_gobench

TRUTH = "Reality Assessment Score: 0.8\nAesthetics Rating: 4\nInstruction Consistency Rating: 3"


def test_the_ratings_are_read():
    assert read_truth(TRUTH) == {"reality": 0.8, "aesthetics": 4.0, "consistency": 3.0}
    reply = "Total Score: 0.8\n**Aesthetics Rating**: 4/5\nInstruction Consistency Rating: **3.2**"
    assert read_scores(reply) == {"reality": 0.8, "aesthetics": 4.0, "consistency": 3.2}
    assert read_scores("Total Score: 1\nAesthetics Rating: 4") is None  # consistency missing
    assert read_scores("Total Score: .\nAesthetics Rating: 4\nInstruction Consistency Rating: 3") is None


def test_scores():
    replies = [
        "Total Score: 0.8\nAesthetics Rating: 4/5\nInstruction Consistency Rating: **3.2**",  # 1, 1, 0.6
        "Total Score for Reality Assessment: *1\nAesthetics Rating: 5\nInstruction Consistency Rating: 3",  # .6, 0, 1
        "I like it",  # unscored
        None,  # failed call: unscored
    ]
    df = pd.DataFrame([{"index": i, "answer": TRUTH, "prediction": p} for i, p in enumerate(replies)])
    result = score_gobench(df)
    assert result.metrics == pytest.approx({"Overall": 70.0, "Reality_Score": 80.0, "Aesthetics_Score": 50.0,
                                            "Instruction_Consistency_Score": 80.0})  # fmt: skip
    assert result.counts["scored"] == 2 and result.counts["unread"] == 1 and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics == pytest.approx(result.metrics)


def test_the_prompt_by_catalog_name(lmu_root: Path):
    write_tsv(lmu_root / "GOBench.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "Prompt: a red cube",
                                          "answer": TRUTH}])  # fmt: skip
    ds = build_dataset("GOBench", root=lmu_root, progress=False, keep_local_tsv=True)
    image, text = ds.build_prompt(0)
    assert image["type"] == "image"
    assert text["value"].startswith("Please analyze the image based on the provided prompt and answer the following "
                                    "three questions.\n\n---\n**Question 1: Reality Assessment**\n")  # fmt: skip
    assert text["value"].endswith("Based on the image and the provided prompt,         please rate the instruction "
                                  "consistency of the generated image on a scale of 1-5.\n\nPrompt: a red cube")
