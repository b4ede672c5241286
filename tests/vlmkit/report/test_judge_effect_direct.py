"""vlmkit.report.judge_effect: the headline without the judge (and, for a run without one, the most a judge could
add), worked out by hand from hand-made runs (results.json and predictions.jsonl as `vlmkit run` writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.workdirs import FRACTION, PERCENT, points, record, scoring, write_run
from vlmkit.report.judge_effect import judge_effect
from vlmkit.report.runs import load_run


def _judged_rows() -> list[dict]:
    """10 rows: 5 right by rule, 2 right by the judge, 1 wrong by the judge, 1 the judge never read, 1 wrong by
    rule: 7 of 10 right."""
    rows = [record(i, "A", "A", hit=True, method="exact") for i in range(5)]
    rows += [record(i, "surely A", "A", hit=True, method="judge") for i in (5, 6)]
    rows += [record(7, "surely B", "A", hit=False, method="judge"), record(8, "hmm", "A", method="judge_unread"),
             record(9, "C", "A", hit=False, method="exact")]
    return rows


def test_without_the_judge_its_right_rows_are_misses(tmp_path: Path):
    path = write_run(tmp_path, "m", "MCQ", block=scoring("mcq", 0.7, scale=FRACTION, counts={"by_rule": 6}),
                     records=_judged_rows())
    effect = judge_effect(load_run(path), judged_run=True)
    assert (effect.rows, effect.judged, effect.judged_credit, effect.unread) == (10, 3, 2.0, 1)
    assert effect.without == pytest.approx(0.5) and effect.at_most is None and effect.why == ""


def test_on_a_percent_scale_the_figure_is_in_percent(tmp_path: Path):
    path = write_run(tmp_path, "m", "MCQ", block=scoring("mcq", 70.0, scale=PERCENT), records=_judged_rows())
    assert judge_effect(load_run(path), judged_run=True).without == pytest.approx(50.0)


def test_a_run_without_a_judge_could_gain_at_most_its_unread_rows(tmp_path: Path):
    rows = [record(i, "A", "A", hit=True, method="exact") for i in range(6)]
    rows += [record(i, "hmm", "A", method="unparsed") for i in (6, 7)]
    rows += [record(i, "B", "A", hit=False, method="exact") for i in (8, 9)]
    path = write_run(tmp_path, "m", "MCQ", block=scoring("mcq", 0.6, scale=FRACTION), records=rows)
    effect = judge_effect(load_run(path), judged_run=False)
    assert effect.without == pytest.approx(0.6) and effect.at_most == pytest.approx(0.8) and effect.unread == 2


def test_partial_scores_count_their_value_and_failed_calls_nothing(tmp_path: Path):
    rows = [record(0, "cat", "cat", score=1.0), record(1, "a cat", "cat", score=0.5, method="judge"),
            record(2, "kitty", "cat", score=0.25), record(3, None, "cat", error={"kind": "timeout"})]
    # mean credit (1 + 0.5 + 0.25 + 0) / 4 = 0.4375; without the judge (1 + 0.25) / 4 = 0.3125
    path = write_run(tmp_path, "m", "VQA", block=scoring("vqa_score", 43.75, scale=PERCENT), records=rows)
    effect = judge_effect(load_run(path), judged_run=True)
    assert (effect.rows, effect.judged, effect.judged_credit) == (4, 1, 0.5)
    assert effect.without == pytest.approx(31.25)


def test_a_headline_that_is_not_the_rows_mean_is_never_guessed(tmp_path: Path):
    # a circular MCQ: 0.5 over groups, while the rows' mean is 0.7
    path = write_run(tmp_path, "m", "MCQ", block=scoring("mcq", 0.5, scale=FRACTION), records=_judged_rows())
    effect = judge_effect(load_run(path), judged_run=True)
    assert effect.without is None and "not the plain mean of the 10 rows" in effect.why
    # a points scale (MME's sums) is never a mean
    path = write_run(tmp_path, "m", "MME", block=scoring("yorn_mme", 0.7, scale=points(2800)), records=_judged_rows())
    assert judge_effect(load_run(path), judged_run=True).without is None


def test_a_benchmark_the_judge_scores_whole_has_no_figure_without_it(tmp_path: Path):
    rows = [record(i, "x", "x", hit=i < 3, method="judge") for i in range(4)]
    path = write_run(tmp_path, "m", "Judged", block=scoring("judged", 0.75, scale=FRACTION, counts={"by_rule": 0}),
                     records=rows)
    effect = judge_effect(load_run(path), judged_run=True)
    assert effect.without is None and "counts.by_rule 0" in effect.why
    # where the scorer does not say the judge scored every row, the rows say it: 0 without the judge
    path = write_run(tmp_path, "m", "Judged2", block=scoring("judged", 0.75, scale=FRACTION), records=rows)
    assert judge_effect(load_run(path), judged_run=True).without == pytest.approx(0.0)


def test_no_figure_or_no_predictions_file_says_why(tmp_path: Path):
    failed = write_run(tmp_path, "m", "A", status="failed", block=None, records=_judged_rows())
    assert "no scored figure (status failed)" in judge_effect(load_run(failed), judged_run=True).why
    path = write_run(tmp_path, "m", "B", block=scoring("mcq", 0.7, scale=FRACTION), records=_judged_rows())
    run = load_run(path)
    run.predictions.unlink()
    effect = judge_effect(run, judged_run=True)
    assert effect.without is None and run.predictions.name in effect.why
