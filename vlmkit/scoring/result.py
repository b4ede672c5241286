"""EvalResult: what every scorer returns, and what the runner writes into results.json and the summary files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass
class EvalResult:
    scorer: str  # e.g. "mcq_circular", "mcq", "yorn_mme", "vqa_anls"
    metrics: dict[str, float]  # flat name -> value, on the scale VLMEvalKit reports for this kind
    primary: str  # the key of metrics that is the headline figure
    per_sample: pd.DataFrame  # one row per scored sample: `index` + extracted/hit/score columns
    table: pd.DataFrame | None = None  # the VLMEvalKit-style summary (rows = split; Overall + categories)
    table_suffix: str = "acc"  # written as <model>_<dataset>_<suffix>.csv ("acc" or "score")
    counts: dict[str, int] = field(default_factory=dict)  # total, scored, unparsed, fuzzy, inference_errors, ...
    notes: list[str] = field(default_factory=list)  # where vlmkit deliberately differs from VLMEvalKit, etc.

    @property
    def primary_value(self) -> float:
        return self.metrics[self.primary]

    def to_dict(self) -> dict[str, Any]:
        """The `scoring` block of results.json."""
        breakdown = None
        if self.table is not None:
            breakdown = self.table.to_dict(orient="records")
        return {
            "scorer": self.scorer,
            "primary_metric": {"name": self.primary, "value": self.primary_value},
            "metrics": self.metrics,
            "breakdown": breakdown,
            "counts": self.counts,
            "notes": self.notes,
        }
