"""vlmkit.scoring.kinds.mcq_reports against second implementations written here (issue 31's mutation round): MMVP's
pairs and MMSci's setting table recomputed with plain loops from VLMEvalKit's report_acc_MMVP / report_acc_MMSci (at
e8e78f05), on random tables and on VLMEvalKit's own hits (`vlmevalkit_hit`), with the intervals' units and the notes."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from vlmkit.scoring.kinds.mcq_reports import MMSCI_SETTINGS, paired_report, setting_report
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

Z = 1.959963984540054


def _result(hits: list[bool], theirs: list[bool] | None = None) -> EvalResult:
    per_sample = pd.DataFrame({"index": range(len(hits)), "hit": hits})
    figure = None
    if theirs is not None:
        per_sample["vlmevalkit_hit"] = theirs
        figure = VlmevalkitFigure(metrics={"Overall": -1.0}, primary="whatever")
    return EvalResult("mcq", {"Overall": -1.0}, "Overall", per_sample, counts={"total": len(hits)}, vlmevalkit=figure)


def _wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval written out from its textbook formula."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


# -- MMVP ------------------------------------------------------------------------------------------------------------
def _mmvp_by_loop(indices: list, questions: list[str], hits: list[bool]) -> tuple[float, float, int, int]:
    """(Overall, Average, pairs, pairs both right): rows sorted by index, then VLMEvalKit's loop over 2i, 2i+1."""
    rows = sorted(zip(indices, questions, hits), key=lambda r: r[0])
    pairs = [(rows[2 * i][2], rows[2 * i + 1][2]) for i in range(len(rows) // 2)]
    both = sum(1 for a, b in pairs if a and b)
    return both / len(pairs), sum(hits) / len(hits), len(pairs), both


@pytest.mark.parametrize("seed", range(6))
def test_mmvp_random_tables_match_a_loop(seed: int) -> None:
    rng = random.Random(seed)
    n_pairs = rng.randint(1, 9)
    indices = rng.sample(range(1000), 2 * n_pairs)
    ordered = sorted(indices)
    question_of = {idx: f"q{pos // 2}" for pos, idx in enumerate(ordered)}
    hits = [rng.random() < 0.6 for _ in indices]
    theirs = [rng.random() < 0.5 for _ in indices]
    df = pd.DataFrame({"index": indices, "question": [question_of[i] for i in indices]})
    res = paired_report(_result(hits, theirs), df)
    overall, average, pairs, both = _mmvp_by_loop(indices, df["question"].tolist(), hits)
    assert res.metrics == pytest.approx({"Overall": overall, "Average": average})
    assert list(res.metrics) == ["Overall", "Average"]
    assert (res.counts["pairs"], res.counts["pair_hits"]) == (pairs, both)
    assert isinstance(res.counts["pair_hits"], int)
    t_overall, t_average, _, _ = _mmvp_by_loop(indices, df["question"].tolist(), theirs)
    assert res.vlmevalkit.metrics == pytest.approx({"Overall": t_overall, "Average": t_average})
    assert res.vlmevalkit.primary == "Overall" and res.primary == "Overall" and res.scorer == "mmvp"
    assert list(res.table.columns) == ["Average", "Overall"]
    assert res.table.iloc[0].tolist() == pytest.approx([average, overall])
    ci = res.interval
    assert (ci.metric, ci.method, ci.n, ci.unit) == ("Overall", "wilson", pairs, "question pair")
    assert ci.estimate == pytest.approx(overall)
    assert (ci.low, ci.high) == pytest.approx(_wilson(both, pairs))
    assert res.notes[-1] == ("Overall is over question pairs (both rows right), Average over rows, as VLMEvalKit's "
                             "MMVP")


def test_mmvp_without_vlmevalkits_figure_reads_no_vlmevalkit_hits() -> None:
    df = pd.DataFrame({"index": [0, 1], "question": ["q", "q"]})
    res = paired_report(_result([True, False]), df)  # no vlmevalkit_hit column: must not be read
    assert res.vlmevalkit is None and res.metrics == {"Overall": 0.0, "Average": 0.5}


def test_mmvp_text_indices_sort_as_text() -> None:
    # not all numbers: sorted as text, "a10" < "a2" < "b1" < "b9"; pairs (a10, a2) and (b1, b9)
    df = pd.DataFrame({"index": ["b9", "a2", "b1", "a10"], "question": ["y", "x", "y", "x"]})
    res = paired_report(_result([False, True, True, True]), df)
    assert res.metrics == {"Overall": 0.5, "Average": 0.75}
    # numbers written as text sort by value: "9" before "10", pairs (2, 9) and (10, 11)
    df = pd.DataFrame({"index": ["10", "9", "11", "2"], "question": ["b", "a", "b", "a"]})
    res = paired_report(_result([True, False, True, True]), df)
    assert res.metrics == {"Overall": 0.5, "Average": 0.75}


def test_mmvp_index_order_is_stable_for_equal_keys() -> None:
    # two rows share index 5: a stable sort keeps their file order, so (5 "p", 5 "p") pair up, then (7, 8)
    df = pd.DataFrame({"index": [7, 5, 8, 5], "question": ["r", "p", "r", "p"]})
    res = paired_report(_result([True, True, True, False]), df)
    assert res.metrics == {"Overall": 0.5, "Average": 0.75}


def test_mmvp_errors_name_the_first_bad_pair_and_count_them() -> None:
    df = pd.DataFrame({"index": [4, 5, 0, 1, 2, 3], "question": ["c", "d", "a", "a", "b", "x"]})
    with pytest.raises(ValueError) as err:
        paired_report(_result([True] * 6), df)
    assert str(err.value) == ("MMVP pairs: rows 2 and 3 (consecutive in index order) ask different questions; "
                              "2 such pair(s)")
    with pytest.raises(ValueError) as err:
        paired_report(_result([True] * 5), pd.DataFrame({"index": range(5), "question": ["a"] * 5}))
    assert str(err.value) == "MMVP pairs: 5 rows, an odd number (rows 2i and 2i+1 in index order pair up)"
    with pytest.raises(ValueError, match="question"):
        paired_report(_result([True] * 2), pd.DataFrame({"index": [0, 1]}))


# -- MMSci -----------------------------------------------------------------------------------------------------------
def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _mmsci_by_loop(rows: list[tuple[str, str, str, bool]]) -> dict[str, dict[str, float]]:
    """report_acc_MMSci as dicts: {label: {setting: acc (0 where a subject has none but the setting exists), Avg}}."""
    kept = [r for r in rows if r[0] in MMSCI_SETTINGS]
    present = [s for s in MMSCI_SETTINGS if any(r[0] == s for r in kept)]
    out: dict[str, dict[str, float]] = {}

    def figures(label_of) -> None:
        labels = sorted({label_of(r) for r in kept})
        for label in labels:
            accs = {}
            for setting in present:
                hits = [r[3] for r in kept if label_of(r) == label and r[0] == setting]
                accs[setting] = _mean(hits) if hits else 0.0
            out[label] = {**accs, "Avg": _mean(list(accs.values()))}

    figures(lambda r: r[1])
    figures(lambda r: f"CATEGORY_{r[2]}")
    overall = {s: _mean([r[3] for r in kept if r[0] == s]) for s in present}
    out["Overall"] = {**overall, "Avg": _mean(list(overall.values()))}
    return out


def _mmsci_rows(rng: random.Random, n: int, settings: tuple[str, ...]) -> list[tuple[str, str, str, bool]]:
    return [(rng.choice(settings), rng.choice(["bio", "chem", "phys"]), rng.choice(["x", "y"]), rng.random() < 0.55)
            for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_mmsci_random_tables_match_a_loop(seed: int) -> None:
    rng = random.Random(100 + seed)
    settings = (*MMSCI_SETTINGS, "Other") if seed % 2 else MMSCI_SETTINGS
    if seed == 4:
        settings = ("Fig2Cap", "SubCap2Fig", "Other")
    rows = _mmsci_rows(rng, rng.randint(8, 30), settings)
    rows.append(("Fig2Cap", "bio", "x", True))  # at least one row in a setting
    theirs = [rng.random() < 0.4 for _ in rows]
    df = pd.DataFrame({"setting": [r[0] for r in rows], "subject": [r[1] for r in rows],
                       "category": [r[2] for r in rows]})
    res = setting_report(_result([r[3] for r in rows], theirs), df)
    mine = _mmsci_by_loop(rows)
    present = [s for s in MMSCI_SETTINGS if s in mine["Overall"]]
    expected = {"Overall": mine["Overall"]["Avg"], **{s: mine["Overall"][s] for s in present},
                **{label: v["Avg"] for label, v in mine.items() if label != "Overall"}}
    assert res.metrics == pytest.approx(expected)
    assert list(res.metrics)[: 1 + len(present)] == ["Overall", *present]
    assert res.table["split"].tolist() == [*present, "Avg"]
    for label, values in mine.items():
        assert res.table[label].tolist() == pytest.approx([values[c] for c in [*present, "Avg"]]), label
    assert list(res.table.columns) == ["split", *mine]
    their_rows = [(r[0], r[1], r[2], t) for r, t in zip(rows, theirs)]
    t = _mmsci_by_loop(their_rows)
    assert res.vlmevalkit.metrics == pytest.approx(
        {"Overall": t["Overall"]["Avg"], **{s: t["Overall"][s] for s in present},
         **{label: v["Avg"] for label, v in t.items() if label != "Overall"}})
    assert res.vlmevalkit.primary == "Overall" and res.primary == "Overall" and res.scorer == "mmsci"
    kept = sum(1 for r in rows if r[0] in MMSCI_SETTINGS)
    assert res.counts["setting_rows"] == kept
    dropped = len(rows) - kept
    note = f"{dropped} row(s) of another `setting` are not in the figures (VLMEvalKit leaves them out)"
    assert (note in res.notes) == bool(dropped)
    assert not any("row(s) of another" in n for n in res.notes) or dropped
    missing = [s for s in MMSCI_SETTINGS if s not in present]
    has_missing_note = any(n.startswith("no row of setting(s)") for n in res.notes)
    assert has_missing_note == bool(missing)
    ci = res.interval
    assert (ci.metric, ci.method, ci.n) == ("Overall", "bootstrap_percentile", kept)
    assert ci.estimate == pytest.approx(mine["Overall"]["Avg"])
    assert ci.low <= ci.estimate + 1e-12 and ci.estimate - 1e-12 <= ci.high


def test_mmsci_interval_resamples_within_settings_only() -> None:
    # every Fig2Cap row right, every SubFig2Cap and SubCap2Fig row wrong: resampling within a setting cannot move
    # the mean of setting means (1 + 0 + 0) / 3, so the interval is that point; "Other" rows never enter it
    rows = [("Fig2Cap", "a", "c", True)] * 4 + [("SubFig2Cap", "a", "c", False)] * 3 + \
        [("SubCap2Fig", "b", "c", False)] * 2 + [("Other", "a", "c", True)] * 5
    df = pd.DataFrame([{"setting": s, "subject": b, "category": c} for s, b, c, _ in rows])
    res = setting_report(_result([h for *_, h in rows]), df)
    assert res.interval.n == 9
    assert (res.interval.low, res.interval.estimate, res.interval.high) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert "5 row(s) of another `setting` are not in the figures (VLMEvalKit leaves them out)" in res.notes
    assert res.metrics["a"] == pytest.approx(1 / 3) and res.metrics["b"] == 0.0  # b: 0 in the settings it lacks


def test_mmsci_notes_name_the_missing_settings_and_vlmevalkits_keyerror() -> None:
    df = pd.DataFrame({"setting": ["SubFig2Cap"], "subject": ["a"], "category": ["c"]})
    res = setting_report(_result([True]), df)
    assert res.notes == ["no row of setting(s) Fig2Cap, SubCap2Fig: Avg is over the other settings (VLMEvalKit "
                         "stops with a KeyError)"]
    assert res.vlmevalkit is None
    assert res.metrics == {"Overall": 1.0, "SubFig2Cap": 1.0, "a": 1.0, "CATEGORY_c": 1.0}
    with pytest.raises(ValueError) as err:
        setting_report(_result([True]), pd.DataFrame({"setting": ["Fig3"], "subject": ["a"], "category": ["c"]}))
    assert str(err.value) == "MMSci settings: no row has a `setting` of Fig2Cap, SubFig2Cap, SubCap2Fig"
    for missing in ("setting", "category"):
        cols = {"setting": ["Fig2Cap"], "subject": ["a"], "category": ["c"]}
        del cols[missing]
        with pytest.raises(ValueError, match=f"no `{missing}` column"):
            setting_report(_result([True]), pd.DataFrame(cols))


def test_mmsci_hits_read_as_numbers() -> None:
    # hits stored as 0/1 integers (as a per-sample file read back holds them) give the same figures as booleans
    df = pd.DataFrame({"setting": ["Fig2Cap", "Fig2Cap", "SubCap2Fig"], "subject": ["a", "a", "a"],
                       "category": ["c", "c", "c"]})
    per_sample = pd.DataFrame({"index": [0, 1, 2], "hit": np.array([1, 0, 1], dtype=np.int64)})
    res = setting_report(EvalResult("mcq", {}, "Overall", per_sample), df)
    assert res.metrics["Overall"] == pytest.approx((0.5 + 1.0) / 2)


def test_missing_columns_name_the_report_and_the_column() -> None:
    with pytest.raises(ValueError) as err:
        paired_report(_result([True, True]), pd.DataFrame({"index": [0, 1], "q": ["a", "a"]}))
    assert str(err.value) == "MMVP pairs: the predictions table has no `question` column (columns: index, q)"
    with pytest.raises(ValueError) as err:
        setting_report(_result([True]), pd.DataFrame({"setting": ["Fig2Cap"], "subject": ["a"]}))
    assert str(err.value) == ("MMSci settings: the predictions table has no `category` column (columns: setting, "
                              "subject)")
