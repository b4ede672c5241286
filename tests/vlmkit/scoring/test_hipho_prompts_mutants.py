"""HiPhO's grading prompt without its warnings (issue 31, mutation round 4): VLMEvalKit's _evaluate_single_criterion
(vlmeval/dataset/hipho.py at e8e78f05) adds the total-score warning only when the points sum above 0 and the retry
notice only from the second attempt. The expected texts are cut from the attempt-2 prompt VLMEvalKit sends, copied in
tests/datasets_tsv/benchmarks/test_hipho.py (not built by vlmkit's code)."""

from __future__ import annotations

from tests.datasets_tsv.benchmarks.test_hipho import GRADING_ROW3_ATTEMPT2
from vlmkit.scoring.benchmarks.hipho_prompts import grading_prompt, xverify_correct

WARNING_START = "\n⚠️  IMPORTANT TOTAL SCORE CONSTRAINT:"
RETRY_START = "\n🔄 RETRY NOTICE:"
INSTRUCTIONS_START = "\n\nINSTRUCTIONS:"


def test_no_points_no_warning_and_the_first_attempt_no_retry_notice():
    head, rest = GRADING_ROW3_ATTEMPT2.split(WARNING_START, 1)
    tail = INSTRUCTIONS_START + rest.split(INSTRUCTIONS_START, 1)[1]
    assert grading_prompt("Find the speed.", "\\boxed{u=4.0}", "crit A", 0.0, 0) == head + tail
    assert grading_prompt("Find the speed.", "\\boxed{u=4.0}", "crit A", -1.0, 0) == head + tail


def test_the_retry_notice_without_the_warning_and_the_warning_without_the_notice():
    head, rest = GRADING_ROW3_ATTEMPT2.split(WARNING_START, 1)
    warning_and_retry, _ = rest.split(INSTRUCTIONS_START, 1)
    warning, retry = warning_and_retry.split(RETRY_START, 1)
    tail = INSTRUCTIONS_START + rest.split(INSTRUCTIONS_START, 1)[1]
    assert grading_prompt("Find the speed.", "\\boxed{u=4.0}", "crit A", 0.0, 1) == head + RETRY_START + retry + tail
    first = WARNING_START + warning.replace("attempt #2", "attempt #1")
    assert grading_prompt("Find the speed.", "\\boxed{u=4.0}", "crit A", 1.0, 0) == head + first + tail


def test_xverify_accepts_only_the_whole_reply():
    assert xverify_correct(" [Correct]\n") and xverify_correct("Correct")
    assert not xverify_correct("[Incorrect]") and not xverify_correct("correct") and not xverify_correct("Correct.")
