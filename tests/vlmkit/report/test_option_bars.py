"""vlmkit.report.option_bars and the Sample that carries its bars (issue 28): a likelihood-scored record's options as
bars, shares worked by hand; a predictions.jsonl written here is read back through the report's own reader."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from vlmkit.report.option_bars import read_bars
from vlmkit.report.samples import read_samples


def _record(index: int, likelihood: dict | None, prediction: str | None, target: str, **more: object) -> dict:
    record = {"index": index, "prediction": prediction, "target": target, "error": None, **more}
    if likelihood is not None:
        record["extra"] = {"likelihood": likelihood}
    return record


def test_served_row_shares_renormalise_over_the_listed_options() -> None:
    # p(A) = 0.2, p(B) = 0.1, C not in the server's top list: shares 2/3 and 1/3, C has no bar
    found = {"mode": "logits", "source": "top_logprobs",
             "logprobs": {"A": math.log(0.2), "B": math.log(0.1), "C": None}, "missing": ["C"]}
    bars = read_bars(_record(1, found, "A", "B"))
    assert bars is not None and bars.mode == "logits" and bars.source == "top_logprobs"
    a, b, c = bars.bars
    assert (a.option, a.share, a.chosen, a.target) == ("A", pytest.approx(2 / 3), True, False)
    assert (b.option, b.share, b.chosen, b.target) == ("B", pytest.approx(1 / 3), False, True)
    assert c.logprob is None and c.share is None
    assert bars.entry()["b"][0] == ["A", -1.609, 0.6667, True, False, None]  # 4 significant places


def test_continuation_keeps_the_normalised_figures_and_yes_no_targets_match_any_case() -> None:
    found = {"mode": "continuation", "logprobs": {"Yes": -1.0, "No": -3.0}, "tokens": {"Yes": 1, "No": 1},
             "normalised": {"Yes": -1 / 3, "No": -1.5}, "choice_norm": "Yes"}
    bars = read_bars(_record(2, found, "Yes", "yes"))
    yes, no = bars.bars
    # shares: e^-1 / (e^-1 + e^-3) = 1 / (1 + e^-2)
    assert yes.share == pytest.approx(1 / (1 + math.exp(-2))) and yes.target and yes.chosen
    assert no.normalised == pytest.approx(-1.5) and not no.target


@pytest.mark.parametrize("record", [
    _record(3, None, "A", "A"),  # generated
    _record(4, {"mode": "ppl", "logprobs": {"1": -4.0}, "tokens": {"1": 2}, "nll": 2.0, "ppl": 7.389}, "7.389", "x"),
    _record(5, {"mode": "logits", "logprobs": "A"}, "A", "A"),  # not a mapping
])
def test_records_without_option_figures_have_no_bars(record: dict) -> None:
    assert read_bars(record) is None


def test_samples_read_from_predictions_carry_their_bars(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    rows = [_record(1, {"mode": "logits", "logprobs": {"A": -0.1, "B": -2.4}}, "A", "A"),
            _record(2, None, "B", "A")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = read_samples(path)
    assert [b.option for b in first.bars.bars] == ["A", "B"] and first.bars.bars[0].chosen
    assert second.bars is None
