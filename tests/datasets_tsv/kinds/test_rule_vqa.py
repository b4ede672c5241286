"""TallyQA, CountBenchQA, ZEROBench(_sub) and MTVQA_TEST: VLMEvalKit's prompt and rule scorer for each, on small
TSVs of each benchmark's shape with replies whose scores are worked out by hand, built from the proposed catalog
rows."""

from __future__ import annotations

import dataclasses

import pytest

from datasets_tsv.catalog.entries import parse_rows
from datasets_tsv.catalog.registry import build_row, scorer_id
from datasets_tsv.kinds.rule_vqa import RuleVQADataset
from vlmkit.scoring.kinds.rule_vqa import braces_answer, read_count

from tests.support.tsvs import b64, image_bytes, write_tsv

HEADER = "name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes"
CLS = "datasets_tsv.kinds.rule_vqa:RuleVQADataset"
VLM = "https://opencompass.openxlab.space/utils/VLMEval"
# The catalog rows proposed for these benchmarks (the integrator's catalog.tsv gets the same lines).
ROWS = "\n".join([
    (
        f'ZEROBench\tvqa\tok\tzerobench\tnone\t100\t{CLS}\t{{"metric": "zerobench", "answer_column": "answers"}}\t'
        f"{VLM}/zerobench.tsv\t600d5e89325f1dab5ad3fa2ea200cea6\tZeroBench: very hard visual reasoning\t"
    ),
    (
        f'ZEROBench_sub\tvqa\tok\tzerobench\tnone\t334\t{CLS}\t{{"metric": "zerobench", "answer_column": "answers"}}\t'
        f"{VLM}/zerobench_sub.tsv\t2d2131bffb7f09ca099fdd0f3ad0392b\tZeroBench: very hard visual reasoning\t"
    ),
    (
        f'CountBenchQA\tvqa\tok\tcountbench\tnone\t491\t{CLS}\t{{"metric": "countbench"}}\t'
        f"{VLM}/CountBenchQA.tsv\tfc73c8d4ffa665431448753f094d56ff\tCountBenchQA: counting\t"
    ),
    (
        f'TallyQA\tvqa\tok\ttallyqa\tnone\t\t{CLS}\t{{"metric": "tallyqa"}}\t'
        "https://huggingface.co/datasets/moondream/TallyQA-VLMEvalKit/resolve/main/tallyqa_data.tsv\t"
        "959df01cf1858e73a71efe5cd3b9bf19\tTallyQA: counting\tVLMEvalKit's TallyQA evaluate code was not available to "
        "vlmkit; the count is read as the first whole number in the reply (digits or a number word zero..twenty)"
    ),
    (
        f'MTVQA_TEST\tvqa\tok\tmtvqa\tnone\t\t{CLS}\t{{"metric": "mtvqa"}}\t{VLM}/MTVQA_TEST.tsv\t'
        "d87c17dbab934b7cd89c0a3c1c5657f4\tMTVQA: multilingual text-centric VQA\tscored by VLMEvalKit's substring rule "
        "alone; VLMEvalKit's newest MTVQA also asks an LLM judge about the rows that rule misses"
    ),
])
RED = b64(image_bytes("red"))


@pytest.fixture
def rows():
    return {row.name: row for row in parse_rows(f"{HEADER}\n{ROWS}\n", "proposed rows")}


def build(rows, name, lmu_root, tsv_rows) -> RuleVQADataset:
    """The proposed catalog row built over a local TSV of tsv_rows (its MD5 is not the catalog's: none checked)."""
    write_tsv(lmu_root / f"{name}.tsv", tsv_rows)
    ds = build_row(dataclasses.replace(rows[name], md5=""), root=lmu_root, progress=False)
    assert type(ds) is RuleVQADataset
    return ds


def score(ds, replies):
    return ds.evaluate(ds.data.assign(prediction=replies))


def test_tallyqa(rows, lmu_root):
    questions = ["How many dogs are there?", "How many cats?", "How many cars?", "How many people?", "How many?"]
    ds = build(rows, "TallyQA", lmu_root, [
        {"index": i, "image": RED, "question": q, "answer": a}
        for i, (q, a) in enumerate(zip(questions, [2, 0, 11, 3, 1], strict=True))
    ])  # fmt: skip
    # VLMEvalKit: question + '\nAnswer the question using a single number.'
    assert ds.build_prompt(0)[-1]["value"] == "How many dogs are there?\nAnswer the question using a single number."
    assert scorer_id(ds) == "tallyqa"
    # hits: "Two." -> 2 (yes); "zero" -> 0 (yes); "There are 1 or 11" -> first number 1 (no); "3" (yes); failed call
    result = score(ds, ["Two.", "zero", "There are 1 or 11", "3", None])
    assert result.per_sample["hit"].tolist() == [True, True, False, True, False]
    # VLMEvalKit's key and scale: `TallyQA`, a fraction; 3 of 5
    assert result.metrics == {"TallyQA": pytest.approx(0.6)} and result.scale.kind == "fraction"
    assert result.primary == "TallyQA"
    assert result.counts["inference_errors"] == 1 and result.counts["hits"] == 3
    # VLMEvalKit reads the same counts here (the failed call is NaN to it: no count): the same figure, no row apart
    assert result.vlmevalkit.metrics == {"TallyQA": pytest.approx(0.6)} and result.vlmevalkit.differing == []


def test_countbenchqa_reads_the_first_number_and_shows_vlmevalkits_substring_figure(rows, lmu_root):
    ds = build(rows, "CountBenchQA", lmu_root, [
        {"index": i, "image": RED, "question": f"How many apples are in the picture {i}?", "answer": a}
        for i, a in enumerate([1, 4, 7, 2])
    ])  # fmt: skip
    assert ds.build_prompt(0)[-1]["value"] == (
        "How many apples are in the picture 0? Note that: answer with a number directly e.g. 3. Do not include any "
        "additional text."
    )
    # vlmkit: first number = answer: 10 != 1, 4, seven = 7, "I count 2." = 2 -> 3 of 4
    result = score(ds, ["10", "4", "seven", "I count 2."])
    assert result.per_sample["hit"].tolist() == [False, True, True, True]
    assert result.metrics == {"accuracy": pytest.approx(75.0)} and result.primary == "accuracy"
    # VLMEvalKit: substring: "1" in "10" (hit), "4" (hit), "7" in "seven" (miss), "2" in "I count 2." -> 3 of 4,
    # not the same rows: rows 0 and 2 differ
    figure = result.vlmevalkit
    assert figure.metrics == {"accuracy": pytest.approx(75.0)}
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (0, 10, "10", 0.0, 1.0), (2, 7, "seven", 1.0, 0.0)]


@pytest.mark.parametrize("name", ["ZEROBench", "ZEROBench_sub"])
def test_zerobench(rows, lmu_root, name):
    ds = build(rows, name, lmu_root, [
        {"index": i, "image": RED, "question": f"Question {i}", "answers": a}
        for i, a in enumerate(["11.90", "Blue", "7", "3"])
    ])  # fmt: skip
    assert ds.build_prompt(0)[-1]["value"] == (
        "Question 0 \n\n\nLet's think step by step and give the final answer in curly braces,  like this: "
        "{final answer}"
    )
    assert ds.info()["scorer"]["answer_column"] == "answers"
    replies = [
        "first {10} then the total is {$11.90}",  # last braces `$11.90` contains `11.90`: hit
        "The colour is {BLUE}.",  # lower-cased: hit
        "{7\n}",  # braces across a line break are not read: miss
        "3",  # no braces: miss
    ]
    result = score(ds, replies)
    assert result.per_sample["hit"].tolist() == [True, True, False, False]
    assert result.metrics == {"accuracy": 0.5} and result.scale.kind == "fraction"


def test_mtvqa_reports_each_category_and_the_average(rows, lmu_root):
    shape = [("DE", "Bahnhof", "Der Bahnhof."), ("DE", "Berlin", "München"), ("JA", "東京", "東京駅"),
             ("JA", "St. Louis", "st louis"), ("JA", "3.5", "35")]  # fmt: skip
    ds = build(rows, "MTVQA_TEST", lmu_root, [
        {"index": i, "image": RED, "question": f"Frage {i}?", "answer": a, "category": c, "split": "test"}
        for i, (c, a, _) in enumerate(shape)
    ])  # fmt: skip
    assert ds.build_prompt(0)[-1]["value"] == (
        "Frage 0?\nAnswer the question using a word or phrase in the language of the question."
    )
    result = score(ds, [reply for _, _, reply in shape])
    # dots removed and lower-cased on both sides: bahnhof in der bahnhof (hit), berlin (miss), 東京 (hit),
    # st louis (hit), 35 in 35 (hit)
    assert result.per_sample["hit"].tolist() == [True, False, True, True, True]
    assert result.metrics == {"Average": pytest.approx(80.0), "DE": pytest.approx(50.0), "JA": pytest.approx(100.0)}
    assert result.primary == "Average"


def test_mtvqa_needs_its_category_column(rows, lmu_root):
    ds = build(rows, "MTVQA_TEST", lmu_root, [{"index": 0, "image": RED, "question": "q", "answer": "a"}])
    with pytest.raises(ValueError, match=r"missing column `category`, needed to evaluate MTVQA_TEST"):
        score(ds, ["a"])


def test_a_row_without_a_whole_number_answer_is_a_miss_named_in_a_note(rows, lmu_root):
    ds = build(rows, "TallyQA", lmu_root, [
        {"index": 0, "image": RED, "question": "How many?", "answer": "two"},
        {"index": 1, "image": RED, "question": "How many?", "answer": "2"},
    ])  # fmt: skip
    result = score(ds, ["2", "2"])
    assert result.per_sample["hit"].tolist() == [False, True] and result.counts["invalid_target"] == 1
    assert any("no whole-number answer" in n and "index 0" in n for n in result.notes)


def test_readers():
    assert [read_count(t) for t in ["Three.", "I see 4 dogs", "none", "14 or 15", "Twenty"]] == [3, 4, None, 14, 20]
    assert braces_answer("  So {A} and then {The Answer}  ") == "the answer" and braces_answer("no braces") == ""


def test_an_unknown_metric_is_refused(lmu_root):
    write_tsv(lmu_root / "X.tsv", [{"index": 0, "image": RED, "question": "q", "answer": "1"}])
    with pytest.raises(ValueError, match=r"X: unknown rule VQA metric 'count'"):
        RuleVQADataset("X", root=lmu_root, progress=False, metric="count")
