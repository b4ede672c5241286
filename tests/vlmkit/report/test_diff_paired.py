"""`vlmkit report --diff A B`'s paired test (vlmkit.report.paired) and the leaderboard's interval column: p-values
worked by hand, runs written to disk as `vlmkit run` writes them."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from tests.support.workdirs import FRACTION, PERCENT, record, scoring, write_run
from vlmkit.report.diff import diff_runs, diff_text
from vlmkit.report.export import console, csv_text, markdown
from vlmkit.report.paired import MCNEMAR, PAIRED_BOOTSTRAP, binomial_tail, mcnemar, mcnemar_exact, paired_bootstrap
from vlmkit.report.runs import collect_runs, resolve_run
from vlmkit.report.table import leaderboard


def test_mcnemar_exact_by_hand() -> None:
    # b = 1, c = 5: n = 6, P(X <= 1) = (C(6,0) + C(6,1)) / 2^6 = 7/64; two-sided 14/64
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64)
    # b = 0, c = 6: 2 * 1/64
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    # b = c: the doubled tail passes 1, capped
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0
    # b = 2, c = 12: P(X <= 2) = (1 + 14 + 91) / 16384 = 106/16384
    assert mcnemar_exact(2, 12) == pytest.approx(2 * 106 / 16384)
    assert binomial_tail(10, 10) == 1.0


def test_mcnemar_against_scipy_where_installed() -> None:
    stats = pytest.importorskip("scipy.stats", reason="scipy is not in this venv")
    for b, c in ((1, 5), (7, 19), (30, 41)):
        assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(min(b, c), b + c, 0.5).pvalue)


def test_mcnemar_counts_only_the_discordant_samples() -> None:
    a = [True] * 50 + [True] * 1 + [False] * 5 + [False] * 44
    b = [True] * 50 + [False] * 1 + [True] * 5 + [False] * 44
    test = mcnemar(a, b)
    assert (test.method, test.n, test.discordant, test.a_only, test.b_only) == (MCNEMAR, 100, 6, 1, 5)
    assert test.p_value == pytest.approx(14 / 64) and test.mean_difference == pytest.approx(0.04)
    assert not test.differs and "inside the noise" in test.summary()


def test_paired_bootstrap_properties() -> None:
    same = paired_bootstrap([0.2, 0.5, 0.7], [0.2, 0.5, 0.7])
    assert same.p_value == 1.0 and same.discordant == 0
    better = paired_bootstrap(np.linspace(0, 0.5, 40), np.linspace(0, 0.5, 40) + 0.3)
    assert better.method == PAIRED_BOOTSTRAP and better.p_value == 0.0 and better.differs
    mixed = paired_bootstrap([0.5] * 20, [0.6, 0.4] * 10)  # differences +-0.1, mean 0: no evidence either way
    assert mixed.p_value > 0.5 and mixed.resamples == 2000 and mixed.seed == 0


def _mcq_records(hits: list[bool]) -> list[dict]:
    return [record(i, "A" if h else "B", "A", hit=h, extracted="A" if h else "B", method="exact")
            for i, h in enumerate(hits)]


def test_diff_reports_mcnemar_over_the_samples(tmp_path: Path) -> None:
    hits_a = [True] * 10 + [True] + [False] * 5 + [False] * 4
    hits_b = [True] * 10 + [False] + [True] * 5 + [False] * 4
    interval = {"metric": "Overall", "estimate": 0.55, "low": 0.3421, "high": 0.7418, "se": 0.1141,
                "method": "wilson", "n": 20}
    block_a = scoring("mcq", 0.55, scale=FRACTION) | {"interval": interval}
    one = write_run(tmp_path / "w1", "m", "D", block=block_a, records=_mcq_records(hits_a))
    two = write_run(tmp_path / "w2", "m", "D", block=scoring("mcq", 0.75, scale=FRACTION),
                    records=_mcq_records(hits_b))
    diff = diff_runs(resolve_run(str(one)), resolve_run(str(two)))
    assert diff.test is not None and diff.test.discordant == 6 and diff.test.p_value == pytest.approx(14 / 64)
    text = diff_text(diff)
    assert "McNemar exact" in text and "6 discordant" in text and "p = 0.2188" in text
    assert "A: Overall 0.5500 ±0.2079 (95% CI 0.3421..0.7418, wilson, n=20)" in text


def test_diff_of_circular_runs_compares_groups(tmp_path: Path) -> None:
    def recs(group_hits: list[bool]) -> list[dict]:
        out = []
        for g, h in enumerate(group_hits):
            for rot in range(2):
                out.append(record(g + rot * 1_000_000, "A", "A", hit=h, method="exact", group_hit=h))
        return out

    one = write_run(tmp_path / "w1", "m", "D", block=scoring("mcq_circular", 0.5, scale=FRACTION),
                    records=recs([True, True, False, False]))
    two = write_run(tmp_path / "w2", "m", "D", block=scoring("mcq_circular", 1.0, scale=FRACTION),
                    records=recs([True, True, True, True]))
    test = diff_runs(resolve_run(str(one)), resolve_run(str(two))).test
    assert test is not None and test.unit == "circular group" and test.n == 4 and test.b_only == 2
    assert test.p_value == pytest.approx(2 * 1 / 4)  # b = 0, c = 2: 2 * (1/2)^2


def test_diff_of_graded_scores_is_a_paired_bootstrap(tmp_path: Path) -> None:
    recs_a = [record(i, "x", "y", score=s) for i, s in enumerate([0.0, 0.5, 1.0, 0.3])]
    recs_b = [record(i, "x", "y", score=s) for i, s in enumerate([0.0, 0.6, 1.0, 0.3])]
    one = write_run(tmp_path / "w1", "m", "D", block=scoring("vqa_anls", 45.0, scale=PERCENT), records=recs_a)
    two = write_run(tmp_path / "w2", "m", "D", block=scoring("vqa_anls", 47.5, scale=PERCENT), records=recs_b)
    test = diff_runs(resolve_run(str(one)), resolve_run(str(two))).test
    assert test is not None and test.method == PAIRED_BOOTSTRAP and test.discordant == 1 and test.b_only == 1
    assert test.mean_difference == pytest.approx(0.025) and test.p_value > 0.05  # one moved sample in four


def test_leaderboard_shows_the_interval_and_csv_keeps_numbers(tmp_path: Path) -> None:
    interval = {"metric": "Overall", "estimate": 0.61, "low": 0.5120, "high": 0.6998, "se": 0.049,
                "method": "wilson", "n": 100}
    with_ci = write_run(tmp_path, "m1", "D", block=scoring("mcq", 0.61, scale=FRACTION) | {"interval": interval},
                        records=_mcq_records([True] * 3))
    stale = dict(interval, estimate=0.5)  # not about the headline: never shown
    without = write_run(tmp_path, "m2", "D", block=scoring("mcq", 0.64, scale=FRACTION) | {"interval": stale},
                        records=_mcq_records([True] * 3))
    rows = leaderboard([resolve_run(str(with_ci)), resolve_run(str(without))])
    assert [r.ci95 for r in rows] == ["±0.0980", ""]  # max(0.61 - 0.5120, 0.6998 - 0.61)
    text = console(rows)
    assert "ci95" in text.splitlines()[0] and "±0.0980" in text and "95% interval" in text
    assert "| m1 | 0.6100 ±0.0980 |" in markdown(rows)  # the grid cell: value and interval together
    table = list(csv.DictReader(io.StringIO(csv_text(rows))))
    assert (table[0]["ci95_low"], table[0]["ci95_high"], table[0]["interval_method"]) == ("0.512", "0.6998", "wilson")
    assert table[1]["ci95_low"] == "" and table[1]["se"] == ""


def test_tables_without_intervals_have_no_ci95_column(tmp_path: Path) -> None:
    run = write_run(tmp_path, "m1", "D", block=scoring("mcq", 0.61, scale=FRACTION), records=_mcq_records([True]))
    assert "ci95" not in console(leaderboard([resolve_run(str(run))])).splitlines()[0]


def test_leaderboard_tests_each_run_against_the_best_on_the_same_samples(tmp_path: Path) -> None:
    # m1 right on rows 0..15; m2 misses rows 0..5 that m1 got and gains none: b = 6, c = 0, p = 2 / 2^6 = 0.03125
    write_run(tmp_path, "m1", "D", block=scoring("mcq", 0.8, scale=FRACTION),
              records=_mcq_records([True] * 16 + [False] * 4))
    write_run(tmp_path, "m2", "D", block=scoring("mcq", 0.5, scale=FRACTION),
              records=_mcq_records([False] * 6 + [True] * 10 + [False] * 4))
    rows = {r.run.model: r for r in leaderboard(collect_runs([tmp_path], warnings=[]))}
    assert rows["m1"].vs_best is None and rows["m2"].vs_best is not None
    assert rows["m2"].vs_best.p_value == pytest.approx(2 / 64) and rows["m2"].vs_best.discordant == 6
    text = console(list(rows.values()))
    assert "p=0.03125" in text and "inside the noise" in text  # the legend says how to read it
    table = {r["model"]: r for r in csv.DictReader(io.StringIO(csv_text(list(rows.values()))))}
    assert (table["m2"]["vs_best_p"], table["m2"]["vs_best_discordant"], table["m2"]["vs_best_test"]) == (
        "0.03125", "6", "mcnemar_exact")
    assert table["m1"]["vs_best_p"] == ""
