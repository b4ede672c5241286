"""vlmkit.scoring.kinds.yorn_ratings called directly on per-row tables written by hand: precision / recall / F1
with Yes as the positive class, AMBER's grouped accuracies and their unweighted mean, VSR's mixed scales."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.kinds.yorn_ratings import (
    AMBER_PRIMARY,
    VSR_F1_NOTE,
    VSR_SCALES,
    amber_rating,
    vsr_rating,
    yes_positive,
)


def _rows(pairs: list[tuple[str | None, str]], **columns: list) -> pd.DataFrame:
    """(target, extracted) pairs -> the per-row table yorn builds: hit when both are the same valid answer."""
    data = pd.DataFrame({
        "index": range(len(pairs)),
        "target": [t for t, _ in pairs],
        "extracted": [e for _, e in pairs],
        "hit": [t is not None and t == e for t, e in pairs],
    })
    for name, values in columns.items():
        data[name] = values
    return data


def test_yes_positive_by_hand() -> None:
    # TP 2 (rows 0, 1), FP 1 (row 2), FN 2 (rows 3: read No, 4: Unknown), TN 1 (row 5); an invalid target (row 6)
    # read Yes is a false positive too
    data = _rows([("Yes", "Yes"), ("Yes", "Yes"), ("No", "Yes"), ("Yes", "No"), ("Yes", "Unknown"), ("No", "No"),
                  (None, "Yes")])
    precision, recall, f1 = yes_positive(data)
    assert precision == pytest.approx(2 / 4)  # TP / (TP + FP) with FP 2
    assert recall == pytest.approx(2 / 4)  # TP / (TP + FN)
    assert f1 == pytest.approx(0.5)  # 2PR / (P + R)
    p, r, f = yes_positive(_rows([("Yes", "Yes"), ("Yes", "No"), ("Yes", "No"), ("No", "No")]))
    assert (p, r) == (1.0, pytest.approx(1 / 3)) and f == pytest.approx(2 * (1 / 3) / (4 / 3))


def test_yes_positive_without_denominators_is_zero() -> None:
    assert yes_positive(_rows([("No", "No"), ("No", "Unknown")])) == (0.0, 0.0, 0.0)  # nothing positive at all
    assert yes_positive(_rows([("Yes", "No")])) == (0.0, 0.0, 0.0)  # no Yes read: precision has no denominator
    assert yes_positive(_rows([("No", "Yes")])) == (0.0, 0.0, 0.0)  # no Yes target: recall has no denominator


def test_amber_groups_categories_and_averages_the_groups() -> None:
    categories = [
        "discriminative-attribute-state", "discriminative-attribute-number", "discriminative-attribute-action",
        "discriminative-attribute-state",  # Attribute: 4 rows, hits 1 1 0 0 -> 50
        "discriminative-hallucination", "discriminative-hallucination",  # Existence: 2 rows, hits 1 1 -> 100
        "relation", "discriminative-relation", "relation",  # Relation: 3 rows, hits 1 0 0 -> 33.3
    ]
    pairs = [("Yes", "Yes"), ("No", "No"), ("Yes", "No"), ("No", "Unknown"),
             ("Yes", "Yes"), ("No", "No"),
             ("Yes", "Yes"), ("No", "Yes"), ("Yes", "No")]
    notes: list[str] = []
    metrics, table, primary = amber_rating(_rows(pairs, category=categories), notes)
    assert primary == AMBER_PRIMARY == "Avg ACC"
    # the mean of the three group accuracies, not of the 9 rows (5 / 9 = 55.6)
    assert metrics == pytest.approx({"Avg ACC": (50 + 100 + 100 / 3) / 3, "Attribute": 50.0, "Existence": 100.0,
                                     "Relation": 100 / 3})
    assert list(metrics) == ["Avg ACC", "Attribute", "Existence", "Relation"]  # groups in order of appearance
    assert table.columns.tolist() == ["Attribute", "Existence", "Relation", "Avg ACC"]
    assert table.iloc[0].tolist() == pytest.approx([50.0, 100.0, 100 / 3, (50 + 100 + 100 / 3) / 3])
    assert notes == []


def test_amber_other_categories_are_reported_alone_with_a_note() -> None:
    notes: list[str] = []
    data = _rows([("Yes", "Yes"), ("No", "Yes"), ("No", "No")],
                 category=["generative", "discriminative-hallucination", "generative"])
    metrics, _, _ = amber_rating(data, notes)
    assert metrics == pytest.approx({"Avg ACC": (100 + 0) / 2, "generative": 100.0, "Existence": 0.0})
    assert notes == ["categories outside AMBER's discriminative ones, each reported alone and counted in Avg ACC "
                     "as in VLMEvalKit: generative"]


def test_amber_empty_category_names_the_row() -> None:
    data = _rows([("Yes", "Yes"), ("No", "No")], category=["relation", None])
    data["index"] = ["a1", "a2"]
    with pytest.raises(ValueError, match=r"^AMBER scoring: row 1 \(index a2\), field `category` is empty$"):
        amber_rating(data, [])


def test_vsr_scales_and_figures() -> None:
    # TP 1, FP 1, FN 1, TN 1: precision 50, recall 50, acc 2 of 4 = 50, F1 0.5 (a fraction)
    data = _rows([("Yes", "Yes"), ("No", "Yes"), ("Yes", "Unknown"), ("No", "No")])
    notes: list[str] = []
    metrics, table, primary = vsr_rating(data, notes)
    assert metrics == pytest.approx({"precision": 50.0, "recall": 50.0, "acc": 50.0, "f1_score": 0.5})
    assert primary == "acc" and notes == [VSR_F1_NOTE]
    assert table.to_dict("records") == [metrics]
    # acc counts hits; 3 of 4 right with no Yes read wrongly: precision 100, recall 2/3, F1 0.8
    metrics, _, _ = vsr_rating(_rows([("Yes", "Yes"), ("Yes", "Yes"), ("Yes", "No"), ("No", "No")]), [])
    assert metrics == pytest.approx({"precision": 100.0, "recall": 200 / 3, "acc": 75.0, "f1_score": 0.8})
    assert sorted(VSR_SCALES) == ["acc", "f1_score", "precision", "recall"]
    assert VSR_SCALES["f1_score"] != VSR_SCALES["acc"] == VSR_SCALES["precision"] == VSR_SCALES["recall"]
