"""VLMEvalKit's figure beside vlmkit's for the open-answer kinds (issue 23): OCRBench, ChartQA, DocVQA (ANLS), TextVQA,
TallyQA, CountBenchQA, COCO captions, TDBench grounding. Each test builds a small TSV of the benchmark's shape through
the catalog row, asks with the catalog's prompt, and checks both figures against values worked out by hand from
VLMEvalKit's code at e8e78f05 (the arithmetic is in the comments)."""

from __future__ import annotations

import dataclasses
import io
import random

import pandas as pd
import pytest

from datasets_tsv.catalog.entries import catalog_rows
from datasets_tsv.catalog.registry import build_row
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_cells, vlmevalkit_texts
from vlmkit.scoring.kinds.rule_vqa import vlmevalkit_count

from tests.support.tsvs import b64, image_bytes, write_tsv

RED = b64(image_bytes("red"))


def build(name: str, lmu_root, tsv_rows):
    """The catalog's row for `name` over a local TSV of tsv_rows (its MD5 is not the catalog's: none checked)."""
    write_tsv(lmu_root / f"{name}.tsv", [{"image": RED, **row} for row in tsv_rows])
    return build_row(dataclasses.replace(catalog_rows()[name], md5=""), root=lmu_root, progress=False)


def evaluate(ds, replies):
    return ds.evaluate(ds.data.assign(prediction=replies))


def listed(figure):
    return [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing]


# --- the xlsx round trip ------------------------------------------------------------------------------------------

POOL = ["3", "", "None", "N/A", "NA", "null", "nan", "NaN", "-nan", "#N/A", "<NA>", "NULL", "n/a", "abc", "3.50",
        " 3 ", "1e3", "inf", "True", "false", "007", "1,000", "  ", "None.", "+5", "Yes"]  # fmt: skip


def test_the_round_trip_is_what_pandas_reads_back_from_a_real_xlsx() -> None:
    openpyxl = pytest.importorskip("openpyxl")
    assert openpyxl
    rng = random.Random(23)
    columns = [[v] for v in POOL] + [[rng.choice(POOL) for _ in range(rng.randint(1, 6))] for _ in range(60)]
    columns += [["3", "4"], ["3", ""], ["1", "2", "None"], ["True", "False"], ["3", "x"], ["x" * 40000, "3"]]
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:  # one sheet a column: pandas infers per column
        for n, column in enumerate(columns):
            frame = pd.DataFrame({"index": range(len(column)), "prediction": [v[:32767] for v in column]})
            frame.to_excel(writer, sheet_name=f"s{n}", index=False)  # xlsxwriter cuts the long one the same way
    buffer.seek(0)
    sheets = pd.read_excel(buffer, sheet_name=None)
    for n, column in enumerate(columns):
        real = [str(x) for x in sheets[f"s{n}"]["prediction"]]
        assert vlmevalkit_texts(column) == real, column


def test_round_trip_cases_worked_by_hand() -> None:
    # an empty reply and pandas' NA texts are NaN; whitespace is a text; a column of numbers becomes numbers, floats
    # as soon as one NaN is among them
    assert vlmevalkit_texts(["", "None", "N/A", "  ", "yes"]) == ["nan", "nan", "nan", "  ", "yes"]
    assert vlmevalkit_cells(["3", "4"]) == [3, 4]
    assert vlmevalkit_texts(["3", "", "10"]) == ["3.0", "nan", "10.0"]
    assert vlmevalkit_texts(["x" * 40000])[0] == "x" * 32767  # xlsxwriter cuts a string at 32,767 characters


# --- OCRBench: the `nan` quirk -------------------------------------------------------------------------------------

def test_ocrbench_an_empty_reply_is_nan_and_holds_an(lmu_root) -> None:
    ds = build("OCRBench", lmu_root, [
        {"index": 0, "question": "What word?", "answer": "['an']", "category": "Regular Text Recognition"},
        {"index": 1, "question": "What word?", "answer": "['none']", "category": "Scene Text-centric VQA"},
        {"index": 2, "question": "What word?", "answer": "['stop']", "category": "Doc-oriented VQA"},
        {"index": 3, "question": "Write it.", "answer": "['x^2']",
         "category": "Handwritten Mathematical Expression Recognition"},
        {"index": 4, "question": "What number?", "answer": "['42']", "category": "Key Information Extraction"},
    ])  # fmt: skip
    assert ds.build_prompt(0)[-1]["value"] == "What word?"  # OCRBench: the question alone
    res = evaluate(ds, ["", "None", "The sign says STOP.", "x ^ 2", None])
    # vlmkit: '' holds no 'an' (miss); 'none' in 'none' (hit); 'stop' in '...stop.' (hit); x^2 without spaces (hit);
    # a failed call (miss) -> 3
    assert res.metrics["Final Score"] == 3 and res.metrics["Text Recognition"] == 0
    assert res.metrics["Scene Text-centric VQA"] == 1
    # VLMEvalKit: '' and 'None' are the text 'nan': 'an' in 'nan' (hit), 'none' not in 'nan' (miss); rows 2, 3 hit;
    # the failed call misses on both sides -> 3, from other rows
    figure = res.vlmevalkit
    assert figure.primary == "Final Score" and figure.metrics["Final Score"] == 3
    assert figure.metrics["Text Recognition"] == 1 and figure.metrics["Scene Text-centric VQA"] == 0
    assert figure.metrics["Final Score Norm"] == pytest.approx(0.3)
    assert listed(figure) == [(0, "", "nan", 0.0, 1.0), (1, "None", "nan", 1.0, 0.0)]
    assert any("2 reply/replies" in n and "'nan'" in n for n in figure.notes)


# --- ChartQA: inf against inf, and the _acc.csv layout ----------------------------------------------------------------

def test_chartqa_inf_and_the_one_row_acc_table(lmu_root) -> None:
    ds = build("ChartQA_TEST", lmu_root, [
        {"index": 0, "question": "Q0", "answer": "inf", "split": "human"},
        {"index": 1, "question": "Q1", "answer": "12", "split": "human"},
        {"index": 2, "question": "Q2", "answer": "Yes", "split": "augmented"},
        {"index": 3, "question": "Q3", "answer": "5", "split": "augmented"},
    ])  # fmt: skip
    assert ds.build_prompt(0)[-1]["value"] == "Q0\nAnswer the question using a single word or phrase."
    res = evaluate(ds, ["inf", "12.5", "yes", "N/A"])
    # vlmkit: inf = inf as text (hit); |12.5 - 12| / 12 = 0.042 <= 0.05 (hit); yes = Yes (hit); N/A vs 5 (miss)
    # -> human 100, augmented 50, Overall 75
    assert res.metrics["Overall"] == pytest.approx(75.0)
    assert list(res.table.columns) == ["augmented", "human", "Overall"] and len(res.table) == 1
    assert res.table.iloc[0].tolist() == pytest.approx([50.0, 100.0, 75.0])
    # VLMEvalKit: float('inf'): |inf - inf| / inf is NaN, NaN <= 0.05 is False (miss); 12.5 hit; yes hit; 'N/A' is
    # the text 'nan', float('nan') against 5: NaN again (miss) -> human 50, augmented 50, Overall 50
    figure = res.vlmevalkit
    assert figure.metrics["Overall"] == pytest.approx(50.0)
    assert figure.metrics["human"] == pytest.approx(50.0) and figure.metrics["augmented"] == pytest.approx(50.0)
    # listed: the rows scored differently; 'N/A' -> 'nan' scores 0 on both sides, only counted in the note
    assert listed(figure) == [(0, "inf", "inf", 1.0, 0.0)]
    assert any("inf by inf" in n for n in figure.notes)
    assert any(n.startswith("1 reply/replies") and "index 3" in n for n in figure.notes)


# --- DocVQA: ANLS over the raw lengths ------------------------------------------------------------------------------

def test_docvqa_anls_raw_lengths_and_nan(lmu_root) -> None:
    ds = build("DocVQA_VAL", lmu_root, [
        {"index": 0, "question": "Q0", "answer": "['New York']"},
        {"index": 1, "question": "Q1", "answer": "['NA']"},
        {"index": 2, "question": "Q2", "answer": "['12/15/88']"},
    ])  # fmt: skip
    res = evaluate(ds, [" New Yrok   ", "", "12/15/89"])
    # row 0: 'new yrok' vs 'new york', 2 edits over the longer raw length 12 -> 1 - 2/12 (both kits)
    # row 1: vlmkit: '' vs 'na': 2 edits over 2 -> 0; VLMEvalKit: 'nan' vs 'na': 1 edit over max(2, 3) -> 2/3
    # row 2: 1 edit over 8 -> 7/8 (both)
    assert res.per_sample["score"].tolist() == pytest.approx([10 / 12, 0.0, 7 / 8])
    assert res.metrics["Overall"] == pytest.approx((10 / 12 + 7 / 8) / 3 * 100)  # 56.94
    assert res.vlmevalkit.metrics["Overall"] == pytest.approx((10 / 12 + 2 / 3 + 7 / 8) / 3 * 100)  # 79.17
    assert listed(res.vlmevalkit) == [(1, "", "nan", 0.0, pytest.approx(2 / 3))]


# --- TextVQA: VLMEvalKit's punctuation keeps `5.` --------------------------------------------------------------------

def test_textvqa_period_after_a_digit(lmu_root) -> None:
    ds = build("TextVQA_VAL", lmu_root, [
        {"index": 0, "question": "Q0", "answer": str(["5"] * 10)},
        {"index": 1, "question": "Q1", "answer": str(["yes"] * 3 + ["no"] * 7)},
    ])  # fmt: skip
    res = evaluate(ds, ["5.", "Yes"])
    # row 0: vlmkit's official rule drops the period: '5' equals all 10 answers, each has 9 equal others -> 1.
    #        VLMEvalKit's copy keeps it ('5.'): no answer equal -> 0.
    # row 1: 'yes' equals 3 answers: for those 2 others equal (2/3), for the 7 'no' ones 3 equal (1):
    #        (3 * 2/3 + 7 * 1) / 10 = 0.9 in both.
    assert res.metrics["Overall"] == pytest.approx(95.0)
    assert res.vlmevalkit.metrics["Overall"] == pytest.approx(45.0)
    assert listed(res.vlmevalkit) == [(0, "5.", "5.", 1.0, 0.0)]
    assert any("period after a digit" in n for n in res.vlmevalkit.notes)


# --- TallyQA and CountBenchQA -----------------------------------------------------------------------------------------

def test_tallyqa_reads_0_to_20_only_in_vlmevalkits_figure(lmu_root) -> None:
    ds = build("TallyQA", lmu_root, [
        {"index": i, "question": "How many?", "answer": a} for i, a in enumerate([3, 3, 2, 0])
    ])
    res = evaluate(ds, ["25 then 3", "3", "", "zero"])
    # vlmkit: first whole number 25 (miss), 3 (hit), none (miss), zero = 0 (hit) -> 2 of 4 = 0.5
    assert res.primary == "TallyQA" and res.metrics == {"TallyQA": pytest.approx(0.5)}
    # VLMEvalKit: 25 is not among 0..20, the next is 3 (hit); 3 (hit); NaN (miss); zero (hit) -> 3 of 4 = 0.75
    assert res.vlmevalkit.metrics == {"TallyQA": pytest.approx(0.75)}
    assert listed(res.vlmevalkit) == [(0, 25, 3, 0.0, 1.0)]
    # a numeric cell (an all-number column with a NaN makes 3 -> 3.0) is read as it is, within 0..20
    assert [vlmevalkit_count(v) for v in (3.0, 21, float("nan"), "21 or 4", "Twenty.")] == [3, None, None, 4, 20]


def test_countbenchqa_numbers_become_floats_next_to_a_nan(lmu_root) -> None:
    ds = build("CountBenchQA", lmu_root, [
        {"index": i, "question": "How many?", "answer": a} for i, a in enumerate([3, 1, 1])
    ])
    res = evaluate(ds, ["3", "", "10"])
    # vlmkit: first number 3 (hit), none (miss), 10 != 1 (miss) -> 33.33
    assert res.metrics == {"accuracy": pytest.approx(100 / 3)}
    # VLMEvalKit: the column reads back as 3.0, NaN, 10.0 -> '3' in '3.0' (hit), '1' in 'nan' (miss),
    # '1' in '10.0' (hit) -> 66.67
    assert res.vlmevalkit.metrics == {"accuracy": pytest.approx(200 / 3)}
    # listed: the row whose verdict differs ('3' -> '3.0' and '' -> 'nan' keep theirs)
    assert listed(res.vlmevalkit) == [(2, 10, "10.0", 0.0, 1.0)]
    assert any(n.startswith("1 reply/replies") and "index 1" in n for n in res.vlmevalkit.notes)


# --- COCO captions ---------------------------------------------------------------------------------------------------

def test_caption_figure_scores_the_nan_caption(lmu_root) -> None:
    pytest.importorskip("pycocoevalcap")
    refs = [["a red square on white", "a red block"], ["a small red square", "red square"], ["a red patch"]]
    ds = build("COCO_VAL", lmu_root, [{"index": i, "answer": str(r)} for i, r in enumerate(refs)])
    same = evaluate(ds, ["a red square", "a red square", "red"])
    # nothing changes in the round trip: the same figures, nothing listed
    assert same.vlmevalkit.metrics == same.metrics and same.vlmevalkit.differing == []
    res = evaluate(ds, ["a red square", "a red square", ""])
    # VLMEvalKit scores the caption 'nan' for the empty reply: the same as vlmkit scoring the reply 'nan'
    as_nan = evaluate(ds, ["a red square", "a red square", "nan"])
    assert res.vlmevalkit.metrics == pytest.approx(as_nan.metrics)
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in res.vlmevalkit.differing] == [(2, "", "nan")]


# --- TDBench grounding ------------------------------------------------------------------------------------------

def test_grounding_figure_agrees_on_boxes(lmu_root) -> None:
    ds = build("tdbench_grounding_rot0", lmu_root, [
        {"index": 0, "question": "car", "answer": "[0.1, 0.1, 0.5, 0.5]"},
        {"index": 1, "question": "tree", "answer": "[0.5, 0.5, 0.9, 0.9]"},
    ])  # fmt: skip
    res = evaluate(ds, ["[0.2, 0.2, 0.4, 0.4]", "None"])
    # centre (0.3, 0.3) is inside the first box (1); 'None' (VLMEvalKit: 'nan') holds no box (0) -> 0.5 both
    assert res.metrics == {"Average Centroid Containment": 0.5}
    assert res.vlmevalkit.metrics == {"Average Centroid Containment": 0.5} and res.vlmevalkit.differing == []


# --- MTVQA and ZEROBench ---------------------------------------------------------------------------------------------

def test_mtvqa_and_zerobench_figures(lmu_root) -> None:
    ds = build("MTVQA_TEST", lmu_root, [
        {"index": 0, "question": "Q0", "answer": "an", "category": "DE", "split": "test"},
        {"index": 1, "question": "Q1", "answer": "Berlin", "category": "DE", "split": "test"},
        {"index": 2, "question": "Q2", "answer": "東京", "category": "JA", "split": "test"},
    ])  # fmt: skip
    res = evaluate(ds, ["", "berlin.", "東京駅"])
    # vlmkit: 'an' not in '' (miss); 'berlin' in 'berlin' (hit); 東京 in 東京駅 (hit) -> DE 50, JA 100,
    # Average 66.67
    assert res.metrics == {"Average": pytest.approx(200 / 3), "DE": 50.0, "JA": 100.0}
    # VLMEvalKit: '' is 'nan', which holds 'an' (hit) -> DE 100, JA 100, Average 100
    assert res.vlmevalkit.metrics == {"Average": 100.0, "DE": 100.0, "JA": 100.0}
    assert listed(res.vlmevalkit) == [(0, "", "nan", 0.0, 1.0)]
    zero = build("ZEROBench", lmu_root, [
        {"index": 0, "question": "Q0", "answers": "7"}, {"index": 1, "question": "Q1", "answers": "blue"},
    ])  # fmt: skip
    res = evaluate(zero, ["so {7}", "N/A"])
    # both: the last braces hold '7' (hit); 'N/A' (VLMEvalKit: 'nan') has no braces (miss) -> 0.5, a fraction
    assert res.metrics == {"accuracy": 0.5} and res.vlmevalkit.metrics == {"accuracy": 0.5}
    assert listed(res.vlmevalkit) == [] and any("index 1" in n for n in res.vlmevalkit.notes)
