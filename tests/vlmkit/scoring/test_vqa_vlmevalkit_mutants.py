"""vlmkit.scoring.kinds.vqa_vlmevalkit against a second implementation written in this file from VLMEvalKit's own
text (vlmeval/dataset/utils/vqa_eval.py and OCRBench.evaluate in image_vqa.py at e8e78f05): process_line's VQA score,
anls_compute with its own Levenshtein, relaxed_correctness and OCRBench's substring rule, on hand-picked edge cases
and random ones (issue 31, mutation testing). The punctuation / digit-article steps inside process_answer are
vlmkit's text_norm, checked against their own transcription in test_text_norm_mutants.py."""

from __future__ import annotations

import random

import pytest

from vlmkit.scoring.common.text_norm import process_digit_article, vlmevalkit_punctuation
from vlmkit.scoring.kinds.vqa_vlmevalkit import (
    ROW_RULES,
    anls,
    exact,
    ocrbench,
    process_answer,
    relaxed,
    row_score,
    vqa_score,
)


def their_process_answer(answer: str) -> str:
    answer = answer.replace("\n", " ")
    answer = answer.replace("\t", " ")
    answer = answer.strip()
    return process_digit_article(vlmevalkit_punctuation(answer))


def their_vqa_score(prediction: str, answers: list[str]) -> float:
    gt = [their_process_answer(x) for x in answers]
    pred = their_process_answer(prediction)
    match = []
    for current, _ in enumerate(gt):
        others = [item for idx, item in enumerate(gt) if idx != current]
        match.append(min(1, float(len([item for item in others if item == pred])) / 3))
    return sum(match) / len(match) if match else 0.0


def their_levenshtein(s1: str, s2: str) -> int:
    if len(s1) > len(s2):
        s1, s2 = s2, s1
    distances = list(range(len(s1) + 1))
    for i2, c2 in enumerate(s2):
        row = [i2 + 1]
        for i1, c1 in enumerate(s1):
            row.append(distances[i1] if c1 == c2 else 1 + min(distances[i1], distances[i1 + 1], row[-1]))
        distances = row
    return distances[-1]


def their_anls(prediction: str, answers: list[str], threshold: float = 0.5) -> float:
    values = []
    for groundtruth in answers:
        gt_answer = " ".join(groundtruth.strip().lower().split())
        det_answer = " ".join(prediction.strip().lower().split())
        length = max(len(groundtruth.upper()), len(prediction.upper()))
        values.append(0.0 if length == 0 else their_levenshtein(gt_answer, det_answer) / length)
    best = 1 - min(values)
    return 0.0 if best < threshold else best


def their_relaxed(prediction: str, answers: list[str], max_relative_change: float = 0.05) -> float:
    def to_float(text: str) -> float | None:
        try:
            if text.endswith("%"):
                return float(text.rstrip("%")) / 100.0
            return float(text)
        except ValueError:
            return None

    pred = prediction.strip()
    hits = []
    for target in answers:
        p, t = to_float(pred), to_float(target)
        if p is not None and t:
            hits.append(abs(p - t) / abs(t) <= max_relative_change)
        else:
            hits.append(pred.lower() == target.lower())
    return float(max(hits)) if hits else 0.0


def their_ocrbench(predict: str, answers: list[str], math_category: bool) -> bool:
    for answer in answers:
        if math_category:
            answer = answer.strip().replace("\n", " ").replace(" ", "")
            predict = predict.strip().replace("\n", " ").replace(" ", "")
        else:
            answer = answer.lower().strip().replace("\n", " ")
            predict = predict.lower().strip().replace("\n", " ")
        if answer in predict:
            return True
    return False


def test_more_than_three_matching_others_still_count_one() -> None:
    assert vqa_score("cat", ["cat"] * 5) == 1.0  # each sees 4 others: min(1, 4/3)
    assert vqa_score("cat", ["cat"] * 5 + ["dog"] * 5) == pytest.approx((5 * 1 + 5 * 1) / 10)


def test_newlines_and_tabs_are_spaces_before_the_punctuation_rule() -> None:
    # `-` touches a space only once the newline (tab) is a space: then every `-` is deleted, not spaced
    assert process_answer("x\n-y-z") == "x yz" == their_process_answer("x\n-y-z")
    assert process_answer("x\t-y-z") == "x yz"
    assert vqa_score("x yz", ["x\n-y-z"] * 4) == 1.0


def test_relaxed_edges() -> None:
    assert relaxed("105", ["100"]) == 1.0  # exactly 5%: kept
    assert relaxed("105.1", ["100"]) == 0.0
    assert relaxed("50%", ["0.5"], tolerance=0.0) == 1.0  # a percentage is divided by 100 exactly
    assert relaxed("5X%", ["0.05"]) == 0.0  # only `%` comes off: `5X` is no number, and the texts differ
    assert relaxed("5x%", ["5X%"]) == 1.0
    assert relaxed("50", ["50%"]) == 0.0  # the target's percentage: 0.5
    assert relaxed(" 7 ", [" 7"]) == 1.0 and relaxed("a", [" A"]) == 0.0  # the target is not stripped


def test_ocrbench_newlines_inside_the_texts() -> None:
    assert ocrbench("a\nb", ["ab"], space_insensitive=True)
    assert ocrbench("ab", ["a\nb"], space_insensitive=True)
    assert ocrbench("ab", ["a b"], space_insensitive=True)
    assert not ocrbench("ab", ["a_b"], space_insensitive=True)
    assert ocrbench("say Hello World", ["hello\nworld"], space_insensitive=False)
    assert not ocrbench("helloworld", ["hello\nworld"], space_insensitive=False)


def test_row_rules_and_row_score() -> None:
    assert ROW_RULES == {"vqa_score": vqa_score, "anls": anls, "relaxed": relaxed, "exact": exact}
    assert row_score("vqa_score", "cat", "['cat', 'cat', 'cat', 'cat']") == 1.0
    assert row_score("relaxed", 10, "[10.4, 'x']") == 1.0
    assert row_score("exact", float("nan"), "nan") == 1.0  # the text VLMEvalKit reads


def test_every_rule_equals_vlmevalkits_text_on_random_rows() -> None:
    rng = random.Random(5)
    words = ["cat", "Cat.", "the cat", "two", "2", "x-y", "x -y", "1,000", "1000", "5.", "5", "50%", "0.5",
             " 0.5", "10.4", "10", "a\nb", "a b", "ab", "", " ", "inf", "nan", "AB", "a\tb"]  # fmt: skip
    for _ in range(1500):
        pred = rng.choice(words)
        answers = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        assert vqa_score(pred, answers) == pytest.approx(their_vqa_score(pred, answers)), (pred, answers)
        assert anls(pred, answers) == pytest.approx(their_anls(pred, answers)), (pred, answers)
        assert relaxed(pred, answers) == their_relaxed(pred, answers), (pred, answers)
        for math_category in (True, False):
            assert ocrbench(pred, answers, space_insensitive=math_category) == their_ocrbench(
                pred, answers, math_category
            ), (pred, answers)
