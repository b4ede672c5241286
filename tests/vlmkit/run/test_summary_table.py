"""The table `vlmkit run` prints: values on their scale as `vlmkit report` shows them (a zero is 0.0000 or 0.00,
never a bare 0), the same word (`unparsed`) for answers no rule could read, and the metrics a user reads beside the
primary one (custom QA's `contains` beside exact match)."""

from __future__ import annotations

import pandas as pd

from vlmkit.run.runner import DatasetRun, summary_rows
from vlmkit.scoring.kinds.text_qa import score_text_qa
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale


def _run(evaluation: EvalResult | None, status: str = "success") -> DatasetRun:
    return DatasetRun("m", "D", status, 4, 4, 0, evaluation=evaluation)


def _result(value: float, scale: str) -> EvalResult:
    return EvalResult("mcq", {"Overall": value}, "Overall", pd.DataFrame({"index": []}), counts={"unparsed": 3},
                      scale=Scale(scale))


def test_values_are_written_on_their_scale_and_unparsed_is_named_as_the_report_names_it():
    lines = summary_rows([_run(_result(0.0, FRACTION)), _run(_result(0.0, PERCENT)), _run(_result(0.80556, FRACTION)),
                          _run(None, "failed")]).splitlines()
    assert lines[0].split() == ["model", "dataset", "metric", "value", "n", "done", "errors", "unparsed", "status"]
    assert [line.split()[3] for line in lines[2:5]] == ["0.0000", "0.00", "0.8056"]
    assert lines[2].split()[7] == "3" and lines[5].split() == ["m", "D", "-", "4", "4", "0", "failed"]


def test_custom_qa_shows_contains_beside_exact_match():
    df = pd.DataFrame({"index": [0, 1], "prediction": ["It is Paris.", "Rome"], "answer": ["Paris", "Rome"]})
    result = score_text_qa(df, metrics=("em", "contains"))
    table = summary_rows([_run(result)])
    assert table.splitlines()[2].split()[2:4] == ["exact_match", "50.00"]
    assert table.splitlines()[-1] == "m x D: also contains 100.00"


def test_the_interval_column_shows_when_a_headline_has_one():
    from vlmkit.scoring.kinds.mcq import score_mcq

    df = pd.DataFrame({"index": list(range(10)), "question": ["q"] * 10, "A": ["x"] * 10, "B": ["y"] * 10,
                       "answer": ["A"] * 10, "prediction": ["A"] * 6 + ["B"] * 4})
    result = score_mcq(df, circular=False)
    lines = summary_rows([_run(result)]).splitlines()
    header = lines[0].split()
    assert header[:6] == ["model", "dataset", "metric", "value", "ci95", "vlmevalkit"]
    # Wilson 95% for 6 of 10: centre (6 + 1.92) / 13.84 = 0.5723, half-width 1.96 * sqrt(2.4 + 0.9604) / 13.84
    # = 0.2596: the column shows the larger side, 0.5723 + 0.2596 - 0.6 = 0.2319 above, 0.6 - 0.3127 = 0.2873 below
    assert lines[2].split()[3:5] == ["0.6000", "±0.2873"]
