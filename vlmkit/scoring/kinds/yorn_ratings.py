"""The AMBER and VSR reports of Y/N predictions (VLMEvalKit's AMBER_rating and VSR_rating), and the precision /
recall / F1 with Yes as the positive class that POPE and VSR share.

Each rating takes the per-row table vlmkit.scoring.kinds.yorn builds (`target`, `extracted`, `hit`, plus the benchmark's
own columns) and returns (metrics, summary table, primary metric). Reading the answers, the judge and the counts are
vlmkit.scoring.kinds.yorn's; nothing here looks at a dataset's name.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from vlmkit.core.cells import index_key
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale

# AMBER's TSV categories as AMBER_rating groups them; any other category is reported under its own name.
AMBER_CATEGORIES: Mapping[str, str] = {
    "discriminative-attribute-state": "Attribute",
    "discriminative-attribute-number": "Attribute",
    "discriminative-attribute-action": "Attribute",
    "discriminative-hallucination": "Existence",
    "discriminative-relation": "Relation",
    "relation": "Relation",
}
AMBER_PRIMARY = "Avg ACC"
VSR_PRIMARY = "acc"  # VLMEvalKit's headline for VSR (report_primary_metric falls through to `acc`)
# VSR_rating reports precision, recall and acc x100 but F1 as a fraction; vlmkit keeps both scales.
VSR_SCALES: Mapping[str, Scale] = {
    "precision": Scale(PERCENT), "recall": Scale(PERCENT), "acc": Scale(PERCENT), "f1_score": Scale(FRACTION),
}  # fmt: skip
VSR_F1_NOTE = (
    "f1_score is a fraction (0..1) while precision, recall and acc are percent (0..100): VLMEvalKit's VSR_rating "
    "reports them so, and vlmkit keeps its scales so the figures compare with published ones"
)


def yes_positive(data: pd.DataFrame) -> tuple[float, float, float]:
    """(precision, recall, F1) as fractions, Yes the positive class: a target or answer that is not `Yes` (No,
    Unknown, an invalid target) is negative, as in VLMEvalKit; 0 where a ratio has no denominator."""
    y_true = (data["target"] == "Yes").to_numpy()
    y_pred = (data["extracted"] == "Yes").to_numpy()
    tp = int((y_true & y_pred).sum())
    fp = int((~y_true & y_pred).sum())
    fn = int((y_true & ~y_pred).sum())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def amber_rating(data: pd.DataFrame, notes: list[str]) -> tuple[dict[str, float], pd.DataFrame, str]:
    """AMBER: accuracy x100 per category after AMBER's grouping (Attribute, Existence, Relation; other categories
    under their own names), in order of first appearance, and `Avg ACC`, the mean of those accuracies (not of the
    rows). Needs `category` (VLMEvalKit also reads `image_path`, which does not change any figure)."""
    empty = data["category"].isna().to_numpy()
    if empty.any():
        row = int(empty.argmax())
        index = index_key(data["index"].iloc[row])
        raise ValueError(f"AMBER scoring: row {row} (index {index}), field `category` is empty")
    grouped = data["category"].map(lambda c: AMBER_CATEGORIES.get(str(c), str(c)))
    others = [str(c) for c in pd.unique(data["category"]) if str(c) not in AMBER_CATEGORIES]
    if others:
        notes.append(
            f"categories outside AMBER's discriminative ones, each reported alone and counted in Avg ACC as in "
            f"VLMEvalKit: {', '.join(others)}"
        )
    scores = {str(cat): float(data["hit"][grouped == cat].mean()) * 100 for cat in pd.unique(grouped)}
    average = sum(scores.values()) / len(scores)
    table = pd.DataFrame([{**scores, AMBER_PRIMARY: average}])
    return {AMBER_PRIMARY: average, **scores}, table, AMBER_PRIMARY


def vsr_rating(data: pd.DataFrame, notes: list[str]) -> tuple[dict[str, float], pd.DataFrame, str]:
    """VSR: precision and recall (Yes positive) and accuracy x100, F1 as a fraction (VSR_SCALES); no breakdown."""
    precision, recall, f1 = yes_positive(data)
    metrics = {
        "precision": precision * 100,
        "recall": recall * 100,
        "acc": float(data["hit"].mean()) * 100,
        "f1_score": f1,
    }
    notes.append(VSR_F1_NOTE)
    return metrics, pd.DataFrame([metrics]), VSR_PRIMARY
