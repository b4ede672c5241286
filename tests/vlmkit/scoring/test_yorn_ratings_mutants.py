"""vlmkit.scoring.kinds.yorn_ratings: the AMBER note lists the categories outside AMBER's own, comma-separated, and
the precision / recall / F1 with Yes positive against a count written in this file (issue 31, mutation testing)."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from vlmkit.scoring.kinds.yorn_ratings import AMBER_PRIMARY, VSR_F1_NOTE, amber_rating, vsr_rating, yes_positive


def test_amber_note_lists_the_other_categories_comma_separated() -> None:
    data = pd.DataFrame({
        "index": [1, 2, 3, 4],
        "category": ["relation", "colour", "size", "colour"],
        "hit": [True, False, True, True],
        "target": ["Yes"] * 4,
        "extracted": ["Yes"] * 4,
    })
    notes: list[str] = []
    metrics, _table, primary = amber_rating(data, notes)
    assert notes == [
        "categories outside AMBER's discriminative ones, each reported alone and counted in Avg ACC as in "
        "VLMEvalKit: colour, size"
    ]
    assert primary == AMBER_PRIMARY
    # Relation 1/1, colour 1/2, size 1/1: the mean of the three accuracies
    assert metrics == {AMBER_PRIMARY: pytest.approx((100 + 50 + 100) / 3), "Relation": 100.0, "colour": 50.0,
                       "size": 100.0}


def _counted(targets: list[str], readings: list[str]) -> tuple[float, float, float]:
    tp = sum(t == "Yes" and r == "Yes" for t, r in zip(targets, readings))
    fp = sum(t != "Yes" and r == "Yes" for t, r in zip(targets, readings))
    fn = sum(t == "Yes" and r != "Yes" for t, r in zip(targets, readings))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def test_yes_positive_and_vsr_equal_a_plain_count_on_random_tables() -> None:
    rng = random.Random(11)
    values = ["Yes", "No", "Unknown", None]
    for _ in range(200):
        n = rng.randint(1, 8)
        targets = [rng.choice(values) for _ in range(n)]
        readings = [rng.choice(values) for _ in range(n)]
        hits = [t == r and t is not None for t, r in zip(targets, readings)]
        data = pd.DataFrame({"index": range(n), "target": targets, "extracted": readings, "hit": hits})
        expected = _counted(targets, readings)
        assert yes_positive(data) == pytest.approx(expected)
        notes: list[str] = []
        metrics, table, primary = vsr_rating(data, notes)
        assert metrics == pytest.approx({"precision": expected[0] * 100, "recall": expected[1] * 100,
                                         "acc": sum(hits) / n * 100, "f1_score": expected[2]})
        assert primary == "acc" and notes == [VSR_F1_NOTE] and table.iloc[0].to_dict() == pytest.approx(metrics)
