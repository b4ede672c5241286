"""VMCBench, CRPE and NaturalBench: VLMEvalKit's prompt and bespoke rule scorer for each, on small TSVs of each
benchmark's shape with replies whose scores are worked out by hand, built from the proposed catalog rows."""

from __future__ import annotations

import pandas as pd
import pytest

from datasets_tsv.benchmarks.crpe import CRPEDataset
from datasets_tsv.benchmarks.naturalbench import NaturalBenchDataset
from datasets_tsv.catalog.registry import scorer_id
from datasets_tsv.benchmarks.vmcbench import VMCBenchDataset
from vlmkit.scoring.benchmarks.crpe import crpe_hit
from vlmkit.scoring.benchmarks.naturalbench import read_binary
from vlmkit.scoring.benchmarks.vmcbench import VMCBENCH_MEANS, read_vmc_choice, score_vmcbench

from tests.datasets_tsv.kinds.bespoke_rows import build, proposed_rows
from tests.support.tsvs import b64, image_bytes

RED = b64(image_bytes("red"))


@pytest.fixture
def rows(monkeypatch):
    return proposed_rows(monkeypatch)
ANIMALS = {"A": "cat", "B": "dog", "C": "bird", "D": "fish"}


def score(ds, replies, reverse=False):
    df = ds.data.assign(prediction=replies)
    return ds.evaluate(df.iloc[::-1] if reverse else df)


# -- VMCBench ----------------------------------------------------------------------------------------------------
VMC = [  # category, answer, reply, how VLMEvalKit's parse reads it
    ("SEEDBench", "B", "(B) dog", "B"),  # `(B)`: bracket
    ("MMMU", "A", "The answer is A because it fits.", "A"),  # ` A `: spaced
    ("MMMU", "C", "I think the picture shows a small bird sitting on it", "C"),  # > 5 words, option text `bird`
    ("TextVQA", "D", "D", "D"),
    ("TextVQA", "A", "Maybe", None),  # nothing: VLMEvalKit picks a random letter, vlmkit a miss
    ("ChartQA", "B", None, None),  # failed call
    ("AI2D", "A", "(A) or rather (B)", "B"),  # two brackets: the last one
]


def test_vmcbench_prompt_and_scores(rows, lmu_root):
    ds = build(rows, "VMCBench_DEV", lmu_root, [
        {"index": i, "image": RED, "question": "What animal is it?", **ANIMALS, "answer": a, "category": c}
        for i, (c, a, _, _) in enumerate(VMC)
    ])  # fmt: skip
    assert type(ds) is VMCBenchDataset and scorer_id(ds) == "vmcbench" and ds.kind == "mcq"
    assert ds.category_means == VMCBENCH_MEANS
    # VLMEvalKit's VMCBenchDataset.build_prompt: no hint, its own closing line
    assert ds.build_prompt(0)[-1]["value"] == (
        "Question: What animal is it?\nOptions:\nA. cat\nB. dog\nC. bird\nD. fish\n"
        "Answer with the option's letter from the given choices directly. \n"
    )
    result = score(ds, [reply for _, _, reply, _ in VMC])
    assert result.per_sample["extracted"].tolist() == [read for *_, read in VMC]
    assert result.per_sample["method"].tolist() == [
        "bracket", "spaced", "option_text", "spaced", "unparsed", "inference_error", "bracket"
    ]
    # hits: rows 0-3 -> 4 of 7; SEEDBench 1/1, MMMU 2/2, TextVQA 1/2, ChartQA 0/1, AI2D 0/1
    assert result.metrics == pytest.approx({
        "Overall": 400 / 7, "General": 100.0, "Reasoning": 100.0, "OCR": 50.0, "Doc & Chart": 0.0,
        "AI2D": 0.0, "ChartQA": 0.0, "MMMU": 100.0, "SEEDBench": 100.0, "TextVQA": 50.0,
    })  # fmt: skip
    assert result.primary == "Overall" and result.scale.kind == "percent"
    assert result.counts["unparsed"] == 1 and result.counts["inference_errors"] == 1 and result.counts["hits"] == 4
    assert any("random letter" in n for n in result.notes)
    assert any("over the categories present only" in n for n in result.notes)


def test_vmcbench_reading_rule():
    # `A. ` counts as a bracket candidate, found at position -1 by rfind('(A)'): the `(B)` wins
    assert read_vmc_choice("A. cat and (B)", ANIMALS) == ("B", "bracket")
    # trailing punctuation stripped before padding: `C.` -> ` C `
    assert read_vmc_choice("C.", ANIMALS) == ("C", "spaced")
    # five words or fewer: option texts are not looked for
    assert read_vmc_choice("it is a dog", ANIMALS) == (None, "unparsed")
    # option texts: the one found last in the reply
    assert read_vmc_choice("not a cat, it is clearly a dog here", ANIMALS) == ("B", "option_text")
    # a row without option A is a miss whatever the reply
    ds_rows = [{"index": 0, "prediction": "A", "answer": "A", "category": "GQA", "A": None, "B": "x"}]
    result = score_vmcbench(pd.DataFrame(ds_rows))
    assert result.per_sample["hit"].tolist() == [False] and result.counts["no_options"] == 1
    assert result.metrics == {"Overall": 0.0, "GQA": 0.0}


# -- CRPE --------------------------------------------------------------------------------------------------------
CRPE = [  # category, answer, reply, hit
    ("exist", "A", "A", True),  # one character: compared with the answer's first
    ("exist", "B", "A. There is a cat", False),  # starts with A-D: its first letter
    ("subject", "(A) the man", "The man is riding.", True),  # answer[4:] in the reply, any case
    ("predicate", "(B) holding", "(B) holding", True),  # `(` is not A-D: the text rule
    ("object", "C", "The cup", True),  # answer[4:] is empty: VLMEvalKit's rule counts it right
    ("object", "D", None, False),  # failed call
]


def test_crpe_prompt_and_scores(rows, lmu_root):
    question = "What is the man doing with the cup?\nA. holding\nB. drinking\nAnswer with the option's letter."
    ds = build(rows, "CRPE_RELATION", lmu_root, [
        {"index": i, "image": RED, "question": question, "answer": a, "category": c}
        for i, (c, a, _, _) in enumerate(CRPE)
    ])  # fmt: skip
    assert type(ds) is CRPEDataset and scorer_id(ds) == "crpe" and ds.kind == "vqa"
    assert ds.build_prompt(0)[-1]["value"] == question  # ImageBaseDataset.build_prompt: the question alone
    assert [p["type"] for p in ds.build_prompt(0)] == ["image", "text"]
    result = score(ds, [reply for _, _, reply, _ in CRPE])
    assert result.per_sample["hit"].tolist() == [hit for *_, hit in CRPE]
    # groups of 4 (CRPE's CircularEval, VLMEvalKit since 2025-09): rows 0-3 and 4-5, each with a miss
    assert result.metrics == pytest.approx({"exist": 0.0, "object": 0.0, "total": 0.0, "rows/exist": 0.5,
                                            "rows/subject": 1.0, "rows/predicate": 1.0, "rows/object": 0.5,
                                            "rows/total": 4 / 6})
    assert list(result.metrics) == ["exist", "object", "total", "rows/exist", "rows/subject", "rows/predicate",
                                    "rows/object", "rows/total"]
    assert result.primary == "total" and result.scale.kind == "fraction"
    assert result.counts["empty_text_target"] == 1 and result.counts["inference_errors"] == 1
    assert any("index 4" in n and "answer[4:]" in n for n in result.notes)


def test_crpe_rule():
    assert crpe_hit("B", "(B) dog") == (False, "letter")  # `(` is the answer's first character
    assert crpe_hit("Yes", "B") == (True, "option_text")  # nothing left of the answer to look for
    assert crpe_hit("", "A") == (False, "empty")


# -- NaturalBench ------------------------------------------------------------------------------------------------
NB = [  # type, question, answer, reply, read
    ("yes_no", "Is the dog asleep?", "Yes", "Yes, it is.", 1),
    ("yes_no", "Is the dog asleep?", "No", "No.", 0),
    ("yes_no", "Is the dog awake?", "No", "no", 0),
    ("yes_no", "Is the dog awake?", "Yes", "Yes", 1),
    ("multiple_choice", "Which is it? A. a cat B. a dog", "A", "A", 1),
    ("multiple_choice", "Which is it? A. a cat B. a dog", "A", "A", 1),  # answer disagrees with the pattern (B)
    ("multiple_choice", "Which is it? A. a kitten B. a puppy", "B", "B", 0),
    ("multiple_choice", "Which is it? A. a kitten B. a puppy", "A", "I would say B, not A", 0),  # B comes first
]


def test_naturalbench_prompt_and_scores(rows, lmu_root):
    ds = build(rows, "NaturalBenchDataset", lmu_root, [
        {"index": 10 + i, "image": RED, "question": q, "answer": a, "type": t}
        for i, (t, q, a, _, _) in enumerate(NB)
    ])  # fmt: skip
    assert type(ds) is NaturalBenchDataset and scorer_id(ds) == "naturalbench" and ds.kind == "mcq"
    assert ds.build_prompt(0)[-1]["value"] == "Is the dog asleep? Please answer Yes or No."
    assert ds.build_prompt(4)[-1]["value"] == (
        "Which is it? A. a cat B. a dog Please output the letter corresponding to the correct option."
    )
    result = score(ds, [reply for *_, reply, _ in NB], reverse=True)  # rows are sorted by index first
    assert result.per_sample["extracted"].tolist() == [read for *_, read in NB]
    # group 0 all right: question 2, image 2, binary 4, group 1. group 1 reads 1, 1, 0, 0 against 1, 0, 0, 1:
    # question 0, image 1 (q0_i0 = 1 and q1_i0 = 0), binary 2, group 0.
    assert result.metrics == pytest.approx(
        {"question_score": 2 / 4, "image_score": 3 / 4, "binary_score": 6 / 8, "group_score": 1 / 2}
    )
    assert result.primary == "group_score" and result.scale.kind == "fraction"
    assert result.counts["answer_disagrees"] == 1 and result.counts["groups"] == 2
    assert any("index 15" in n for n in result.notes)


def test_naturalbench_refuses_a_partial_group(rows, lmu_root):
    ds = build(rows, "NaturalBenchDataset", lmu_root, [
        {"index": i, "image": RED, "question": "Is it?", "answer": "Yes", "type": "yes_no"} for i in range(3)
    ])  # fmt: skip
    with pytest.raises(ValueError, match=r"3 rows; NaturalBench is scored in groups of four rows"):
        score(ds, ["Yes", "No", "Yes"])


def test_naturalbench_reading():
    assert read_binary("Nothing here", "yes_no") == -1  # `Nothing` is not the word `no`
    assert read_binary("a dog", "multiple_choice") == 1  # the article `a` is read as A, as in VLMEvalKit
    assert read_binary("No, yes", "yes_no") == 0
