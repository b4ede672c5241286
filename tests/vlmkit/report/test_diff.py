"""Per-sample verdicts read from predictions.jsonl, and the diff of two runs of one dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.workdirs import FRACTION, record, scoring, write_run
from vlmkit.report.diff import diff_runs, diff_text
from vlmkit.report.runs import ReportInputError, resolve_run
from vlmkit.report.samples import read_samples, to_sample, verdict


@pytest.mark.parametrize(
    "rec, expected",
    [
        (record(0, "A", "A", hit=True, method="exact"), "hit"),
        (record(0, "B", "A", hit=False, method="cue"), "miss"),
        (record(0, "hmm", "A", hit=False, method="unparsed"), "unread"),
        (record(0, "maybe", "Yes", hit=False, extracted="Unknown", method="unparsed"), "unread"),
        (record(0, None, "A", error={"kind": "timeout", "message": "slow"}), "error"),
        (record(0, None, "A"), "error"),  # not run
        (record(0, "cat", "cat", score=1.0), "hit"),
        (record(0, "cats", "cat", score=0.6), "partial"),
        (record(0, "dog", "cat", score=0.0), "miss"),
        (record(0, "A", "Q", extracted="A", method="invalid_target"), "unscored"),
        (record(0, "text", None), "unscored"),  # inference only: nothing scored
    ],
)
def test_verdicts(rec: dict, expected: str) -> None:
    assert verdict(rec) == expected


def test_text_qa_rows_are_scored_by_the_primary_metric() -> None:
    rec = record(0, "Paris", "Paris", exact_match=1.0, contains=1.0)
    assert verdict(rec) == "unscored" and verdict(rec, "exact_match") == "hit"


def test_sample_fields_for_the_page() -> None:
    sample = to_sample(record(7, "<think>count the legs</think> B", "B", hit=True, extracted="B", method="judge",
                              judge={"analysis": "The reply names B.", "verdict": "correct"}, image_path="/x/a.jpg"))
    assert sample.reasoning == "count the legs" and sample.prediction == "B"
    assert sample.judge == "The reply names B." and sample.method == "judge"
    assert sample.media() == [("image", "/x/a.jpg")] and sample.prompt_text() == "What colour is the shape?"
    kept = to_sample(record(1, "B", "B", hit=True, extra={"reasoning_content": "thought"}))
    assert kept.reasoning == "thought" and kept.prediction == "B"
    failed = to_sample(record(2, None, "B", error={"kind": "http_5xx", "message": "bad gateway", "status": 502}))
    assert failed.verdict == "error" and failed.error == "http_5xx: bad gateway"


def test_a_broken_predictions_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"index": 0, "prediction": "A"}\n{"index": 1, "predic\n', encoding="utf-8")
    with pytest.raises(ReportInputError, match=r"predictions.jsonl: line 2 is not JSON"):
        read_samples(path)


def test_diff_lists_the_changed_verdicts_losses_first(work: Path) -> None:
    a = resolve_run(str(work / "model-a" / "MCQBench"))
    b = resolve_run(str(work / "model-b" / "MCQBench" / "results.json"))
    diff = diff_runs(a, b)
    assert diff.compared == 4
    assert [(c.key, c.transition) for c in diff.changes] == [
        ("3", "hit -> miss"), ("0", "hit -> error"), ("1", "miss -> hit"), ("2", "unread -> hit"),
    ]
    text = diff_text(diff)
    assert "4 of 4 sample(s) changed verdict" in text and "hit -> error 1" in text
    assert "timeout" in text  # what B "read": the error kind


def test_diff_of_a_run_with_itself_is_empty_and_absent_samples_show(tmp_path: Path) -> None:
    recs = [record(i, "A", "A", hit=True, method="exact") for i in range(3)]
    one = write_run(tmp_path / "w1", "m", "D", block=scoring("mcq", 1.0, scale=FRACTION), records=recs)
    two = write_run(tmp_path / "w2", "m", "D", block=scoring("mcq", 1.0, scale=FRACTION), records=recs[:2])
    assert diff_runs(resolve_run(str(one)), resolve_run(str(one))).changes == []
    diff = diff_runs(resolve_run(str(one)), resolve_run(str(two)))
    assert [c.transition for c in diff.changes] == ["hit -> absent"]
    assert any("1 sample(s) only in the first run" in n for n in diff.notes)


def test_diff_refuses_two_datasets_and_a_missing_run(work: Path) -> None:
    a = resolve_run(str(work / "model-a" / "MCQBench"))
    with pytest.raises(ReportInputError, match="one dataset"):
        diff_runs(a, resolve_run(str(work / "model-a" / "YNBench")))
    with pytest.raises(ReportInputError, match="no results.json"):
        resolve_run(str(work / "model-a" / "Nothing"))
