"""TableVQA-Bench and VLMs are Blind: VLMEvalKit's prompt and bespoke rule scorer for each, on small TSVs of each
benchmark's shape with replies whose scores are worked out by hand, built from the proposed catalog rows."""

from __future__ import annotations

import dataclasses

import pytest

from datasets_tsv.kinds.grounding import BoxGroundingDataset
from datasets_tsv.catalog.registry import scorer_id
from datasets_tsv.benchmarks.tablevqa import TableVQADataset
from datasets_tsv.benchmarks.vlmblind import VLMBlindDataset
from vlmkit.scoring.kinds.grounding import read_box
from vlmkit.scoring.benchmarks.tablevqa import fintabnet_forms, wtq_hit, wtq_normalise
from vlmkit.scoring.benchmarks.vlmblind import rows_columns_hit

from tests.datasets_tsv.kinds.bespoke_rows import VLMBLIND_RULES, build, proposed_rows
from tests.support.tsvs import b64, image_bytes

RED = b64(image_bytes("red"))


@pytest.fixture
def rows(monkeypatch):
    return proposed_rows(monkeypatch)

TABLE = [  # split, question, answer, reply, hit
    ("vtabfact", "the team won 6 games", "1", "Answer: True", True),  # `Answer: ` removed, `true` with answer 1
    ("vtabfact", "the team lost", "0", "True or False? I'd say false", False),  # both words: left for manual check
    ("vwtq", "which year?", "2004", "2004.0", True),  # numbers within 1e-6
    ("vwtq", "which fruits?", "Apple|Banana", "banana||apple", True),  # `||` separates; sets, any case
    ("vwtq_syn", "which township?", "Freeman", "Freeman township", False),
    ("fintabnetqa", "total originations?", "$3,852 million", "3852 million", True),  # 3852e6 both; exact too
    ("fintabnetqa", "percentage?", "34.2%", "34.2", True),  # 34.2 is the answer's unit-free form; not exact
    ("fintabnetqa", "period?", "October 31", None, False),  # failed call
]


def test_tablevqa_prompts_and_scores(rows, lmu_root):
    ds = build(rows, "TableVQABench", lmu_root, [
        {"index": i, "image": RED, "question": q, "answer": a, "split": s} for i, (s, q, a, _, _) in enumerate(TABLE)
    ])  # fmt: skip
    assert type(ds) is TableVQADataset and scorer_id(ds) == "tablevqa" and ds.kind == "vqa"
    # vlmeval/dataset/utils/tablevqabench.py: VTABFACT_PROMPT, VWTQ_PROMPT, FINTABNETQA_PROMPT
    assert ds.build_prompt(0)[-1]["value"] == (
        "You are asked to answer whether the statement is True or False based on given image\n"
        "You should only answer True or False.\nExample: \n"
        "Statement: the milwaukee buck win 6 game in the 2010 - 11 season\nAnswer: True\n"
        "Statement: only the top team score above the average of 8.8\nAnswer: False\n\n"
        "Statement: the team won 6 games\nAnswer:"
    )
    assert ds.build_prompt(2)[-1]["value"] == (
        "You are asked to answer questions asked on an image.\nYou should answer the question with a single word.\n"
        "Example: \nQuestion: what was the only year mr. wu competed in the olympic games?\nAnswer: 2004\n"
        "Question: which township in pope county, arkansas has the least amount of water area?\nAnswer: Freeman\n"
        "If you have multiple answers, please separate them with || marks. Example: Apple||Banana||Tomato\n\n"
        "Question: which year?\nAnswer:"
    )
    assert ds.build_prompt(4)[-1]["value"] == ds.build_prompt(2)[-1]["value"].replace("which year?", "which township?")
    assert ds.build_prompt(5)[-1]["value"] == (
        "You are asked to answer questions asked on a image.\n"
        "You should answer the question within a single word or few words.\n"
        "If units can be known, the answer should include units such as $, %, million and etc.\nExample: \n"
        "Question: What were the total financing originations for the fiscal year ended October 31, 2004?\n"
        "Answer: $3,852 million\nQuestion: What is the time period represented in the table?\nAnswer: October 31\n"
        "Question: What was the percentage of net sales for selling, general and administrative expenses in 2006?\n"
        "Answer: 34.2%\nQuestion: total originations?\nAnswer:"
    )
    result = ds.evaluate(ds.data.assign(prediction=[reply for *_, reply, _ in TABLE]))
    assert result.per_sample["hit"].tolist() == [hit for *_, hit in TABLE]
    assert result.per_sample["exact"].tolist()[5:] == [True, False, False]
    # fintabnetqa 2/3 (exact 1/3), vtabfact 1/2, vwtq 2/2, vwtq_syn 0/1; Overall the mean of the four splits
    assert result.metrics == pytest.approx({
        "Overall": (200 / 3 + 50 + 100 + 0) / 4, "fintabnetqa": 200 / 3, "fintabnetqa (exact)": 100 / 3,
        "vtabfact": 50.0, "vwtq": 100.0, "vwtq_syn": 0.0,
    })  # fmt: skip
    assert result.scale.kind == "percent" and result.counts["vtabfact_ambiguous"] == 1
    assert result.counts["inference_errors"] == 1
    assert result.table.to_dict("list") == {
        "split": ["fintabnetqa", "vtabfact", "vwtq", "vwtq_syn"],
        "average_scores": pytest.approx([200 / 3, 50.0, 100.0, 0.0]),
    }


def test_tablevqa_rules():
    assert wtq_normalise(' "Smith [1]" (born 1950)') == "smith"  # trailing parentheses, quotes, citation, in turns
    assert wtq_normalise("Freeman.") == "freeman" and wtq_normalise("Smith (born 1950).") == "smith (born 1950)"
    assert wtq_hit("3", "3|3") and not wtq_hit("3|4", "3")  # equal values are one; sizes must agree
    assert wtq_hit("2010-xx-xx", "2010")  # a date with only a year is the number
    assert fintabnet_forms("1.5 billion dollars") == (1.5e9, [1.5e9, 1.5])


def test_tablevqa_refuses_an_unknown_split(rows, lmu_root):
    ds = build(rows, "TableVQABench", lmu_root, [{"index": 0, "image": RED, "question": "q?", "answer": "1",
                                                  "split": "other"}])  # fmt: skip
    assert ds.build_prompt(0)[-1]["value"] == "q?"  # VLMEvalKit leaves other splits' questions bare
    with pytest.raises(ValueError, match=r"row index 0, field `split`: 'other' is not one of fintabnetqa"):
        ds.evaluate(ds.data.assign(prediction="1"))


BLIND = [  # task, answers, reply, hit
    ("Subway Connections", "2", "There are {2} paths", True),
    ("Nested Squares", "4", "{3} then {4}", False),  # the first braces only
    ("Touching Circles", "Yes", "yes, they touch", True),  # substring, any case
    ("Counting Grid - Word Grids", "5,6", "The grid has rows {5} and columns {6}.", True),
    ("Counting Grid - Blank Grids", "3,4", "It is (4, 3)", False),  # the pair in order
    ("Olympic Counting - Circles", "5", "15 circles", True),  # substring: `5` is in `15` (VLMEvalKit's rule)
    ("Mystery Task", "1", "{1}", False),  # no rule for the task: never right
    ("Circled Letter", "a", None, False),  # failed call
]


def test_vlmblind_prompt_and_scores(rows, lmu_root):
    question = "How many single-colored paths go from A to C? Answer with a number in curly brackets, e.g., {3}."
    ds = build(rows, "VLMBlind", lmu_root, [
        {"index": i, "image": RED, "question": question, "answers": a, "task": t}
        for i, (t, a, _, _) in enumerate(BLIND)
    ])  # fmt: skip
    assert type(ds) is VLMBlindDataset and scorer_id(ds) == "vlmblind" and ds.kind == "mcq"
    assert ds.task_rules == VLMBLIND_RULES
    assert ds.build_prompt(0)[-1]["value"] == f"Question: {question}\n"  # ImageMCQDataset's prompt, no options
    result = ds.evaluate(ds.data.assign(prediction=[reply for _, _, reply, _ in BLIND]))
    assert result.per_sample["hit"].tolist() == [hit for *_, hit in BLIND]
    assert result.metrics == {
        "Circled Letter": 0.0, "Counting Grid - Blank Grids": 0.0, "Counting Grid - Word Grids": 1.0,
        "Mystery Task": 0.0, "Nested Squares": 0.0, "Olympic Counting - Circles": 1.0, "Subway Connections": 1.0,
        "Touching Circles": 1.0, "Overall": 0.5,
    }  # fmt: skip
    assert result.primary == "Overall" and result.scale.kind == "fraction"
    assert result.counts["no_rule"] == 1 and result.counts["inference_errors"] == 1
    assert any("index 6" in n for n in result.notes)


def test_vlmblind_rules_and_options():
    assert rows_columns_hit("Rows: {3}, Columns: {4}", "3, 4") and not rows_columns_hit("{3} rows", "3,4")
    assert not rows_columns_hit("(3, 4)", "3,4,5")  # the answer must be a pair
    with pytest.raises(ValueError, match=r"task_rules: unknown rule\(s\) regex"):
        VLMBlindDataset("VLMBlind", task_rules={"x": "regex"})


GOLD = "[0.1, 0.1, 0.5, 0.5]"
BOXES = [  # reply, centroid, IoU
    ("[0.2, 0.2, 0.4, 0.4]", 1.0, 0.04 / 0.16),  # centre (0.3, 0.3) inside; inside box: 0.04 / 0.16
    ("[0.6, 0.6, 0.9, 0.9]", 0.0, 0.0),
    ("The box is [0.1, 0.1, 0.5, 0.5].", 1.0, 1.0),
    ("[0.1, 0.1, 0.5, 0.5] or [0.2, 0.2, 0.3, 0.3]", 0.0, 0.0),  # two boxes: none read
    (None, 0.0, 0.0),  # failed call
]


@pytest.mark.parametrize("method", ["centroid", "iou"])
def test_tdbench_grounding_prompt_and_scores(rows, lmu_root, method):
    name = "tdbench_grounding_rot90"
    row = dataclasses.replace(rows[name], kwargs={"method": method})
    ds = build({name: row}, name, lmu_root, [
        {"index": i, "image": RED, "question": "red car", "answer": GOLD} for i in range(len(BOXES))
    ])  # fmt: skip
    assert type(ds) is BoxGroundingDataset and scorer_id(ds) == "grounding" and ds.kind == "vqa"
    assert ds.build_prompt(0)[-1]["value"] == (
        "\nPlease output the coordinates of the red car in the image in the format [x1, y1, x2, y2]. Do not include "
        "any additional text. Respond with relative coordinates between 0 and 1, with top left corner (0, 0), top "
        "right (1, 0) and bottom right (1, 1)."
    )
    result = ds.evaluate(ds.data.assign(prediction=[reply for reply, _, _ in BOXES]))
    column = 1 if method == "centroid" else 2
    assert result.per_sample["score"].tolist() == pytest.approx([b[column] for b in BOXES])
    figure = "Average Centroid Containment" if method == "centroid" else "Average IoU"
    expected = 2 / 5 if method == "centroid" else (0.25 + 1.0) / 5
    assert result.metrics == {figure: pytest.approx(expected)} and result.primary == figure
    assert result.scale.kind == "fraction"
    assert result.counts["unread"] == 1 and result.counts["inference_errors"] == 1 and result.counts["boxes"] == 3


def test_box_reading():
    assert read_box("[0.2,0.3, 1, .5]") == (0.2, 0.3, 1.0, 0.5)
    assert read_box("[0.2,\n 0.3, 0.4, 0.5]") == (0.2, 0.3, 0.4, 0.5)  # line breaks removed first
    assert read_box("[,,,]") is None and read_box("no box") is None
