"""vlmkit.scoring.kinds.vqa_vlmevalkit: VLMEvalKit's per-row VQA rules (vqa_eval.py at e8e78f05), on values worked by
hand: the leave-one-out VQA score, ANLS over the unstripped length, relaxed accuracy with its float() quirks, exact
match, OCRBench's substring rule, and the answers read from a cell."""

from __future__ import annotations

import pytest

from vlmkit.scoring.kinds.vqa_vlmevalkit import (
    anls,
    exact,
    ocrbench,
    process_answer,
    relaxed,
    row_score,
    vlmevalkit_answers,
    vqa_score,
)


def test_vqa_score_is_the_leave_one_out_mean():
    # 3 of 10 answers match: those 3 see 2 others (2/3), the 7 others see 3 (1): (3 * 2/3 + 7) / 10 = 0.9
    answers = ["cat"] * 3 + ["dog"] * 7
    assert vqa_score("cat", answers) == pytest.approx(0.9)
    # 1 of 10: that one sees 0, the 9 others see 1 (1/3): 9 / 3 / 10 = 0.3
    assert vqa_score("cat", ["cat"] + ["dog"] * 9) == pytest.approx(0.3)
    assert vqa_score("cat", ["cat"]) == 0.0  # a single ground truth: no other to match
    assert vqa_score("cat", []) == 0.0
    assert vqa_score(" The Two\tcats. ", ["2 cats"] * 4) == pytest.approx(1.0)


def test_process_answer_normalises_like_vlmevalkit():
    assert process_answer("The Two\ndogs") == "2 dogs"
    assert process_answer("  a cat  ") == "cat"


def test_anls_uses_the_longer_raw_length_and_the_threshold():
    assert anls("helo", ["hello"]) == pytest.approx(1 - 1 / 5)
    assert anls("ax", ["ab"]) == pytest.approx(0.5)  # at the threshold: kept
    assert anls("ax", ["ab"], threshold=0.6) == 0.0
    assert anls("abc", ["xyz"]) == 0.0
    # the answer's surrounding spaces count in the length, not in the distance: 1 - 1/6
    assert anls("ax", ["  ab  "]) == pytest.approx(1 - 1 / 6)
    assert anls("AB", ["xx", " ab"]) == pytest.approx(1.0)  # the best answer, case and spaces aside
    assert anls("", [""]) == 1.0


def test_relaxed_accuracy_allows_five_percent_and_reads_floats_as_python_does():
    assert relaxed("10", ["10.4"]) == 1.0  # 0.4 / 10.4 = 3.8%
    assert relaxed("11", ["10.4"]) == 0.0  # 0.6 / 10.4 = 5.8%
    assert relaxed(" 50% ", ["0.5"]) == 1.0
    assert relaxed("0", ["0"]) == 1.0  # a zero target: compared as text
    assert relaxed("0.0", ["0"]) == 0.0
    assert relaxed("inf", ["inf"]) == 0.0  # inf - inf is NaN: a miss in VLMEvalKit
    assert relaxed("Yes", ["yes", "no"]) == 1.0
    assert relaxed("x", []) == 0.0


def test_exact_and_ocrbench():
    assert exact(" Cat ", ["dog", "CAT"]) == 1.0 and exact("cats", ["cat"]) == 0.0
    assert ocrbench("It says Hello\nWorld!", ["hello world"], space_insensitive=False)
    assert not ocrbench("Hello", ["hello world"], space_insensitive=False)
    assert ocrbench("x = a + b", ["a+b"], space_insensitive=True)
    assert not ocrbench("x = A + B", ["a+b"], space_insensitive=True)  # that mode keeps case


def test_answer_cells_and_row_scores():
    assert vlmevalkit_answers("['a', 1]") == ["a", "1"]
    assert vlmevalkit_answers(" [\"x\"] ") == ["x"]
    assert vlmevalkit_answers("[oops") == ["[oops"]
    assert vlmevalkit_answers("{'a': 1}") == ["{'a': 1}"]
    assert vlmevalkit_answers("plain") == ["plain"]
    assert row_score("exact", "A", "['a', 'b']") == 1.0
    assert row_score("anls", 123, "123") == 1.0
    with pytest.raises(KeyError):
        row_score("unknown", "a", "a")
