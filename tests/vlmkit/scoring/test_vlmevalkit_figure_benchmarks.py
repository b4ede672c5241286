"""VLMEvalKit's figure beside vlmkit's for the benchmark scorers (issue 23): CRPE's groups of 4, MMVet's double
count, LLaVABench's parse_score, VLMBlind, TableVQA-Bench and VCR. Each test builds a small TSV of the benchmark's
shape, scores replies in several formats through the dataset class, and checks both figures against values worked
out by hand from VLMEvalKit's code at e8e78f05 (the arithmetic is in the comments). The replies VLMEvalKit reads are
also checked against a real xlsx round trip (pandas + openpyxl), the way VLMEvalKit stores its predictions."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from datasets_tsv.benchmarks.crpe import CRPEDataset
from datasets_tsv.benchmarks.llavabench import LLaVABenchDataset
from datasets_tsv.benchmarks.mmvet import MMVetDataset
from datasets_tsv.benchmarks.tablevqa import TableVQADataset
from datasets_tsv.benchmarks.vcr import VCRDataset
from datasets_tsv.benchmarks.vlmblind import VLMBlindDataset
from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.benchmarks.crpe import vlmevalkit_groups
from vlmkit.scoring.benchmarks.mathverse import score_mathverse
from vlmkit.scoring.benchmarks.mmvet import vlmevalkit_grade
from vlmkit.scoring.common.vlmevalkit_replies import vlmevalkit_replies
from vlmkit.scoring.vlmevalkit_figure import VLMEVALKIT_COMMIT

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())


def xlsx_round_trip(replies: list[str | None]) -> list[str]:
    """str() of each reply after pandas writes it to xlsx and reads it back (VLMEvalKit's load of its .xlsx)."""
    buffer = io.BytesIO()
    pd.DataFrame({"prediction": replies}).to_excel(buffer, index=False, engine="openpyxl")
    buffer.seek(0)
    return [str(v) for v in pd.read_excel(buffer, engine="openpyxl")["prediction"]]


# -- CRPE: groups of 4 -------------------------------------------------------------------------------------------
# (category, answer, reply). VLMEvalKit's is_correct(answer, reply): a one-character reply or one starting with A-D
# is compared by its first letter; otherwise answer[4:].lower() in reply.lower().
CRPE = [
    ("exist", "A", "A"),                       # 0 right both
    ("exist", "B", "B. a dog"),                # 1 leading letter B: right both
    ("exist", "(C) a cat", "It is a cat."),    # 2 'a cat' in the reply: right both
    ("exist", "D", "D"),                       # 3 right both
    ("subject", "A", "A"),                     # 4 right both
    ("subject", "(B) an", ""),                 # 5 vlmkit: empty, a miss; VLMEvalKit: 'nan' -> 'an' in 'nan': right
    ("subject", "C", "C"),                     # 6
    ("subject", "D", "D"),                     # 7
    ("predicate", "A", "None"),                # 8 answer[4:] == '' is in any text: right both ('none' / 'nan')
    ("predicate", "(B) holding", None),        # 9 failed call: a miss both
    ("predicate", "C", "C"),                   # 10
    ("predicate", "D", "D"),                   # 11
    ("object", "(A) a", "N/A"),                # 12 'a' in 'n/a' (vlmkit) and in 'nan' (VLMEvalKit): right both
    ("object", "(B) null", "null"),            # 13 vlmkit: 'null' in 'null' right; VLMEvalKit: 'null' in 'nan' wrong
    ("object", "C", "C"),                      # 14
    ("object", "D", "D"),                      # 15
]


def crpe_dataset(lmu_root):
    write_tsv(lmu_root / "CRPE_RELATION.tsv", [
        {"index": i, "image": JPEG, "question": "Is there a cat?", "answer": a, "category": c}
        for i, (c, a, _) in enumerate(CRPE)
    ])  # fmt: skip
    return CRPEDataset("CRPE_RELATION", root=lmu_root, progress=False)


def test_crpe_headline_is_groups_of_4_and_vlmevalkits_figure_reads_nan(lmu_root):
    ds = crpe_dataset(lmu_root)
    replies = [r for *_, r in CRPE]
    result = ds.evaluate(ds.data.assign(prediction=replies))
    # vlmkit: rows right = all but 5 and 9 (14 of 16). Groups (rows 0-3, 4-7, 8-11, 12-15): right, wrong (5),
    # wrong (9), right -> exist 1, subject 0, predicate 0, object 1, total 2/4.
    assert result.primary == "total" and result.primary_value == pytest.approx(0.5)
    assert result.metrics == pytest.approx({
        "exist": 1.0, "subject": 0.0, "predicate": 0.0, "object": 1.0, "total": 0.5,
        "rows/exist": 1.0, "rows/subject": 0.75, "rows/predicate": 0.75, "rows/object": 1.0, "rows/total": 14 / 16,
    })  # fmt: skip
    assert result.counts["groups"] == 4 and result.counts["groups_right"] == 2
    # VLMEvalKit: rows right = all but 9 and 13 (14 of 16). Groups: right, right (5 reads 'nan'), wrong (stops at 9:
    # predicate), wrong (stops at 13: object) -> exist 1, subject 1, predicate 0, object 0, total 2/4.
    figure = result.vlmevalkit
    assert figure is not None and figure.commit == VLMEVALKIT_COMMIT and figure.primary == "total"
    assert figure.metrics == pytest.approx({
        "exist": 1.0, "subject": 1.0, "predicate": 0.0, "object": 0.0, "total": 0.5,
        "rows/exist": 1.0, "rows/subject": 1.0, "rows/predicate": 0.75, "rows/object": 0.75, "rows/total": 14 / 16,
    })  # fmt: skip
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (5, "", "nan", 0.0, 1.0), (13, "null", "nan", 1.0, 0.0)]
    assert any("index 5, 8, 12, 13" in n for n in figure.notes)  # the replies VLMEvalKit reads as another text
    block = result.to_dict()["vlmevalkit"]
    assert block["differing_rows"] == 2 and block["primary_metric"] == {"name": "total", "value": 0.5}


def test_crpe_replies_as_vlmevalkit_reads_them_match_a_real_xlsx_round_trip():
    replies = [r for *_, r in CRPE if r is not None] + ["3", " nan", "NA", "#N/A", "True"]
    assert vlmevalkit_replies(replies) == xlsx_round_trip(replies)


def test_a_failed_call_is_vlmevalkits_failure_message_in_the_column_it_reads():
    # VLMEvalKit's API wrappers store 'Failed to obtain answer via API.': a text, so `3` and `4` stay texts
    assert xlsx_round_trip(["3", "Failed to obtain answer via API.", "4"])[::2] == ["3", "4"]
    assert vlmevalkit_replies(["3", None, "4"]) == ["3", None, "4"]
    assert xlsx_round_trip(["3", "", "4"]) == vlmevalkit_replies(["3", "", "4"]) == ["3.0", "nan", "4.0"]


def test_crpe_vlmevalkit_files_a_group_under_the_last_row_it_looked_at():
    cats = ["a", "b", "c", "d"]
    assert vlmevalkit_groups([True, False, True, True], cats) == ([False], ["b"])  # stops at the first wrong row
    assert vlmevalkit_groups([True] * 4, cats) == ([True], ["d"])  # looked at all four


def test_crpe_a_row_count_that_is_not_a_multiple_of_4(lmu_root):
    ds = crpe_dataset(lmu_root)
    data = ds.data.iloc[:6]  # groups rows 0-3 (right) and 4-5 (row 5 wrong): 1 of 2
    result = ds.evaluate(data.assign(prediction=[r for *_, r in CRPE[:6]]))
    assert result.metrics["total"] == pytest.approx(0.5) and result.metrics["rows/total"] == pytest.approx(5 / 6)
    assert result.vlmevalkit is None  # VLMEvalKit asserts len % 4 == 0
    assert any("not a multiple of 4" in n for n in result.notes)


# -- MMVet: single-capability rows counted twice -----------------------------------------------------------------
MMVET = [  # (index, category, reply, judge grade)
    (0, "rec", "a cat", "1.0"),
    (1, "rec,ocr", "STOP", "0.5"),
    (2, "ocr", "x", "0.0"),
    (3, "rec", "a dog", " 0.4\n"),
    (4, "know,gen", "a pun", "0.6"),
    (5, "math", None, None),  # failed call: 0 on both sides, never sent
]


def mmvet_scored(lmu_root, grades=None):
    write_tsv(lmu_root / "MMVet.tsv", [
        {"index": i, "image": JPEG, "question": f"Question {i}?", "answer": "ref", "category": c}
        for i, c, _, _ in MMVET
    ])  # fmt: skip
    ds = MMVetDataset("MMVet", root=lmu_root, progress=False)
    by_reply = grades or {reply: grade for _, _, reply, grade in MMVET if reply is not None}

    def judge(request: JudgeRequest) -> str:
        reply = request.prompt.rsplit(" | ", 2)[-2]  # `question | truth | prediction | `
        answers = by_reply[reply]
        return answers[min(request.attempt, len(answers) - 1)] if isinstance(answers, list) else answers

    return ds.evaluate(ds.data.assign(prediction=[r for _, _, r, _ in MMVET]), judge=FunctionJudge(judge))


def test_mmvet_vlmevalkit_counts_a_single_capability_row_twice(lmu_root):
    result = mmvet_scored(lmu_root)
    # vlmkit (once): rec rows 0, 1, 3 -> (1.0 + 0.5 + 0.4) / 3 = 63.33; ocr rows 1, 2 -> 0.5 / 2 = 25; know, gen
    # row 4 -> 60; math row 5 -> 0; Overall (1.0 + 0.5 + 0 + 0.4 + 0.6 + 0) / 6 = 41.67. fine/rec rows 0, 3 -> 70.
    assert result.primary_value == pytest.approx(250 / 6)
    assert result.metrics["rec"] == pytest.approx(190 / 3) and result.metrics["ocr"] == pytest.approx(25.0)
    assert result.metrics["fine/rec"] == pytest.approx(70.0)
    assert any("2 row(s) have a single capability" not in n and "4 row(s) have a single capability" in n
               for n in result.notes)  # rows 0, 2, 3, 5
    # VLMEvalKit's MMVet_acc: a row adds to each capability in its category and to its exact category, the same
    # key for rows 0, 2, 3, 5. rec: tot 2 (row 0) + 1 (row 1) + 2 (row 3) = 5, score 2.0 + 0.5 + 0.8 = 3.3 -> 66.0;
    # ocr: tot 1 (row 1) + 2 (row 2) = 3, score 0.5 -> 16.67; know, gen 60; math tot 2 score 0 -> 0; spat: no row
    # (VLMEvalKit divides by zero; left out). Overall once per row: 2.5 / 6 -> 41.67. fine/rec is the same tally.
    figure = result.vlmevalkit
    assert figure is not None and figure.primary == "Overall" and figure.differing == []
    assert figure.metrics == pytest.approx({
        "rec": 66.0, "ocr": 50 / 3, "know": 60.0, "gen": 60.0, "math": 0.0, "Overall": 250 / 6,
        "fine/rec": 66.0, "fine/rec_ocr": 50.0, "fine/ocr": 50 / 3, "fine/know_gen": 60.0, "fine/math": 0.0,
    })  # fmt: skip


def test_mmvet_a_nan_grade_and_a_reply_vlmevalkit_would_send_as_nan(lmu_root):
    grades = {reply: grade for _, _, reply, grade in MMVET if reply is not None}
    grades["x"] = ["nan", "0.2"]  # vlmkit asks again and reads 0.2; VLMEvalKit's float() takes NaN at once
    result = mmvet_scored(lmu_root, grades)
    figure = result.vlmevalkit
    assert result.metrics["ocr"] == pytest.approx((0.5 + 0.2) / 2 * 100)
    assert math.isnan(figure.metrics["Overall"]) and math.isnan(figure.metrics["ocr"])
    assert figure.metrics["rec"] == pytest.approx(66.0)  # row 2 is not a rec row
    assert [d.index for d in figure.differing] == [2] and any("'nan' read as a grade" in n for n in figure.notes)
    assert vlmevalkit_grade(["<think>ok</think>0.8"]) == (None, False)  # it would ask again: unknown
    assert vlmevalkit_grade(["no"] * 5) == (0.0, True)  # five unread: 0.0


def test_mmvet_figure_needs_judge_replies_vlmkit_has(lmu_root):
    grades = {reply: grade for _, _, reply, grade in MMVET if reply is not None}
    grades["a dog"] = "<think>close</think>0.4"  # vlmkit reads it; VLMEvalKit's float() would ask again
    result = mmvet_scored(lmu_root, grades)
    assert result.vlmevalkit is None
    assert any("VLMEvalKit's figure not computed: 1 row(s)" in n and "index 3" in n for n in result.notes)


# -- LLaVABench: VLMEvalKit's parse_score ------------------------------------------------------------------------
LLAVA = [  # (index, category, reply, review)
    (0, "conv", "r0", "8 9\nBoth fine."),              # (8, 9) both
    (1, "detail", "r1", "8  7\nClose."),               # vlmkit (8, 7); VLMEvalKit splits on ' ': 3 pieces, (-1, -1)
    (2, "complex", "r2", "\n7 6\nOk."),               # VLMEvalKit's judge strips the reply: (7, 6) both
    (3, "conv", "r3", "The scores are 8 and 9"),       # vlmkit unread (left out); VLMEvalKit (-1, -1)
    (4, "detail", None, None),                         # failed call: left out of both
    (5, "conv", "r5", "9,10\n"),                       # commas read as spaces: (9, 10) both
]


def test_llavabench_vlmevalkit_keeps_unread_reviews_as_minus_one(lmu_root):
    write_tsv(lmu_root / "LLaVABench.tsv", [
        {"index": i, "image": JPEG, "question": "Describe it.", "caption": "A cat.", "gpt4_ans": "A cat.",
         "category": c} for i, c, _, _ in LLAVA
    ])  # fmt: skip
    ds = LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False)
    reviews = {reply: review for _, _, reply, review in LLAVA if reply is not None}

    def judge(request: JudgeRequest) -> str:
        return reviews[request.prompt.split("[Assistant 2]\n", 1)[1].split("\n", 1)[0]]

    result = ds.evaluate(ds.data.assign(prediction=[r for _, _, r, _ in LLAVA]), judge=FunctionJudge(judge))
    # vlmkit, rows 0, 1, 2, 5: model (9 + 7 + 6 + 10) / 4 = 8, reference (8 + 8 + 7 + 9) / 4 = 8 -> 100, 80, 80.
    assert result.metrics["Relative Score (main)"] == pytest.approx(100.0)
    assert result.metrics["conv/Relative Score (main)"] == pytest.approx(9.5 / 8.5 * 100)
    # VLMEvalKit, rows 0, 1, 2, 3, 5 with (8, 9), (-1, -1), (7, 6), (-1, -1), (9, 10): model 23 / 5 = 4.6,
    # reference 22 / 5 = 4.4 -> 104.545 -> 104.5; VLM 46.0; GPT4 44.0. conv (rows 0, 3, 5): model 18 / 3 = 6,
    # reference 16 / 3 -> 112.5, 60.0, 53.3; detail (row 1): -1 / -1 -> 100.0, -10.0, -10.0; complex: 6 / 7 -> 85.7.
    figure = result.vlmevalkit
    assert figure is not None and figure.primary == "Relative Score (main)"
    assert figure.metrics == pytest.approx({
        "Relative Score (main)": 104.5, "VLM Score": 46.0, "GPT4 Score": 44.0,
        "complex/Relative Score (main)": 85.7, "complex/VLM Score": 60.0, "complex/GPT4 Score": 70.0,
        "conv/Relative Score (main)": 112.5, "conv/VLM Score": 60.0, "conv/GPT4 Score": 53.3,
        "detail/Relative Score (main)": 100.0, "detail/VLM Score": -10.0, "detail/GPT4 Score": -10.0,
    })  # fmt: skip
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in figure.differing] == [
        (1, [8.0, 7.0], [-1.0, -1.0]), (3, None, [-1.0, -1.0])]


def test_llavabench_an_empty_reply_needs_a_review_vlmkit_never_asked(lmu_root):
    write_tsv(lmu_root / "LLaVABench.tsv", [
        {"index": i, "image": JPEG, "question": "Q", "caption": "C", "gpt4_ans": "A", "category": "conv"}
        for i in range(2)
    ])  # fmt: skip
    ds = LLaVABenchDataset("LLaVABench", root=lmu_root, progress=False)
    result = ds.evaluate(ds.data.assign(prediction=["fine", ""]), judge=FunctionJudge(lambda r: "8 6\n"))
    assert result.vlmevalkit is None  # VLMEvalKit's judge would review the text 'nan'
    assert any("VLMEvalKit's figure not computed" in n and "index 1" in n for n in result.notes)


# -- VLMBlind, TableVQA-Bench, VCR: VLMEvalKit's rules are vlmkit's, but it stops on a NaN reply -----------------
VLMBLIND_RULES = {"Subway Connections": "braces", "Touching Circles": "substring_nocase"}


def vlmblind(lmu_root):
    write_tsv(lmu_root / "VLMBlind.tsv", [
        {"index": 0, "image": JPEG, "question": "How many paths?", "answers": "2", "task": "Subway Connections"},
        {"index": 1, "image": JPEG, "question": "How many paths?", "answers": "3", "task": "Subway Connections"},
        {"index": 2, "image": JPEG, "question": "Do they touch?", "answers": "Yes", "task": "Touching Circles"},
    ])  # fmt: skip
    return VLMBlindDataset("VLMBlind", root=lmu_root, progress=False, task_rules=VLMBLIND_RULES)


def test_vlmblind_figure_and_where_vlmevalkit_stops(lmu_root):
    ds = vlmblind(lmu_root)
    # {2} right, {4} wrong: Subway 1/2; 'yes' in 'yes, they do': Touching 1/1; Overall 2/3.
    result = ds.evaluate(ds.data.assign(prediction=["It is {2}", "{4}", "Yes, they do"]))
    expected = {"Subway Connections": 0.5, "Touching Circles": 1.0, "Overall": 2 / 3}
    assert result.metrics == pytest.approx(expected)
    assert result.vlmevalkit is not None and result.vlmevalkit.metrics == pytest.approx(expected)
    # an empty reply comes back from the xlsx as NaN: VLMEvalKit's re.search(NaN) raises; so does a column of numbers
    for replies in (["It is {2}", "", "Yes"], ["2", "3", "4"]):
        stopped = ds.evaluate(ds.data.assign(prediction=replies))
        assert stopped.vlmevalkit is None and any("its VLMBlind.evaluate" in n for n in stopped.notes)


TABLEVQA = [  # (split, answer, reply, right)
    ("vtabfact", "1", "Answer: true", True),
    ("vtabfact", "0", "It is true and false", False),  # both words: VLMEvalKit's manual check, a miss
    ("vtabfact", "0", "true", False),
    ("vwtq", "2008|2010", "2010|2008", True),
    ("vwtq_syn", "Paris", "paris", True),
    ("fintabnetqa", "$1,200 million", "1200 million", True),
]


def test_tablevqa_figure_uses_vlmevalkits_rounding(lmu_root):
    write_tsv(lmu_root / "TableVQABench.tsv", [
        {"index": i, "image": JPEG, "question": "Q", "answer": a, "split": s} for i, (s, a, _, _) in enumerate(TABLEVQA)
    ])  # fmt: skip
    ds = TableVQADataset("TableVQABench", root=lmu_root, progress=False)
    result = ds.evaluate(ds.data.assign(prediction=[r for _, _, r, _ in TABLEVQA]))
    assert result.per_sample["hit"].tolist() == [hit for *_, hit in TABLEVQA]
    # vlmkit: vtabfact 1/3 x 100 = 33.333...; the others 100; Overall (33.33 + 300) / 4.
    assert result.metrics["vtabfact"] == pytest.approx(100 / 3, abs=1e-12)
    # VLMEvalKit: round((1 + 1e-9) / (3 + 1e-9), 8) x 100 = 0.33333333 x 100 = 33.333333
    figure = result.vlmevalkit
    assert figure.metrics["vtabfact"] == pytest.approx(33.333333, abs=1e-9)
    assert figure.metrics["Overall"] == pytest.approx((33.333333 + 300) / 4, abs=1e-9)
    assert figure.metrics["fintabnetqa (exact)"] == pytest.approx(100.0)
    # a split missing, or an empty reply: VLMEvalKit stops
    partial = ds.evaluate(ds.data.iloc[:3].assign(prediction=["true", "false", "true"]))
    assert partial.vlmevalkit is None and any("missing split" in n for n in partial.notes)
    empty = ds.evaluate(ds.data.assign(prediction=["", "true", "true", "2010", "Paris", "1"]))
    assert empty.vlmevalkit is None and any("index 0" in n for n in empty.notes)


def test_vcr_vlmevalkit_reads_the_reasoning_too(lmu_root):
    write_tsv(lmu_root / "VCR_EN_EASY_100.tsv", [
        {"index": 0, "image": JPEG, "question": "Restore.", "answer": "['the cat']"},
        {"index": 1, "image": JPEG, "question": "Restore.", "answer": "['a dog']"},
    ])  # fmt: skip
    ds = VCRDataset("VCR_EN_EASY_100", root=lmu_root, progress=False, language="en")
    replies = ["<think>sorry, hard to read</think>the cat sat", "a dog"]
    result = ds.evaluate(ds.data.assign(prediction=replies))
    # vlmkit reads `the cat sat`: the 2-gram `the cat` is the span: 1, 1; `a dog`: 1, 1 -> 1.0, 1.0.
    assert result.metrics == pytest.approx({"Exact_Match": 1.0, "Jaccard": 1.0})
    # VLMEvalKit reads the whole reply: `sorry` is a refusal, row 0 scores 0, 0 -> (0 + 1) / 2 for both.
    figure = result.vlmevalkit
    assert figure.metrics == pytest.approx({"Exact_Match": 0.5, "Jaccard": 0.5})
    assert [(d.index, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [(0, 1.0, 0.0)]
    stopped = ds.evaluate(ds.data.assign(prediction=["N/A", "a dog"]))
    assert stopped.vlmevalkit is None and any("index 0" in n for n in stopped.notes)


# -- MathVerse: the extraction read back between VLMEvalKit's two stages -----------------------------------------
def test_mathverse_figure_from_the_same_judge_replies():
    from tests.vlmkit.scoring.test_scoring_mathverse import keyed, table

    rows = table().drop(index=4)  # no failed judge call (row 5): every reply VLMEvalKit needs, vlmkit has
    result = score_mathverse(rows, FunctionJudge(keyed))
    # Both: row 1 prefetched (extract `C` == answer `C`); row 2 extract `40°` != `40`, verdict 1: right; row 3
    # verdict 0; row 4 five unread verdicts: a miss (VLMEvalKit: 'All 5 retries failed', score False); row 6 no
    # prediction: a miss. 2 of 5 -> 40.
    assert result.metrics["Overall"] == pytest.approx(40.0)
    figure = result.vlmevalkit
    assert figure is not None and figure.differing == [] and figure.metrics == pytest.approx(result.metrics)
    # an empty reply: VLMEvalKit would ask for the extraction of the text 'nan', a prompt vlmkit never sent
    empty = rows.assign(prediction=["", *rows["prediction"].tolist()[1:]])
    stopped = score_mathverse(empty, FunctionJudge(lambda request: "C"))
    assert stopped.vlmevalkit is None and any("index 1" in n for n in stopped.notes if "not computed" in n)
