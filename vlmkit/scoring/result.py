"""EvalResult: what every scorer returns, and what the runner writes into results.json and the summary files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vlmkit.scoring.common.intervals import Interval
from vlmkit.scoring.scales import Scale, default_scale, infer_scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure


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
    # The scale of every figure (vlmkit.scoring.scales): `scale` for all of them, `metric_scales` where one differs
    # (MME's per-category acc is percent, its sums points). None: read from the scorer's name.
    scale: Scale | None = None
    metric_scales: dict[str, Scale] = field(default_factory=dict)
    # Metrics a user reads beside the primary one (custom QA's `contains` beside exact match): the console shows
    # them under the table. Not a results.json field: every metric is in `metrics` there.
    also: tuple[str, ...] = ()
    # The figure VLMEvalKit would print for the same replies (vlmkit.scoring.vlmevalkit_figure); None where the
    # scorer does not compute it.
    vlmevalkit: VlmevalkitFigure | None = None
    # The 95% interval and standard error of the headline (vlmkit.scoring.common.intervals; docs/error_bars.md);
    # None where the scorer computes none. Written only while it is about the headline: a step that changes the
    # headline afterwards (a benchmark's own report) without a new interval leaves none rather than a stale one.
    interval: Interval | None = None

    @property
    def primary_interval(self) -> Interval | None:
        """`interval` if it is about the current headline figure, else None."""
        ci = self.interval
        if ci is None or ci.metric != self.primary or self.primary not in self.metrics:
            return None
        return ci if ci.matches(self.primary_value) else None

    @property
    def primary_value(self) -> float:
        return self.metrics[self.primary]

    def formatted_interval(self) -> str | None:
        """`±0.0552`: the larger half of the headline's 95% interval on its scale (the console's ci95 column, as
        `vlmkit report` shows it); None without one."""
        ci = self.primary_interval
        if ci is None:
            return None
        scale = self.scale_of(self.primary)
        half = ci.half_width
        return "±" + (scale.format(half) if scale is not None else f"{half:.4g}")

    def formatted(self, metric: str) -> str:
        """A metric's value as its scale shows it (0.8056 as a fraction, 80.56 as percent)."""
        scale = self.scale_of(metric)
        value = self.metrics[metric]
        return scale.format(value) if scale is not None else f"{value:.4g}"

    def scale_of(self, metric: str) -> Scale | None:
        """The scale `metric` is reported on (None only for a scorer vlmkit does not know that set none)."""
        if metric in self.metric_scales:
            return self.metric_scales[metric]
        if self.scale is not None:
            return self.scale
        return infer_scale(self.scorer, metric)

    def to_dict(self) -> dict[str, Any]:
        """The `scoring` block of results.json: `primary_metric {name, value, scale, higher_is_better[, out_of]}`,
        `scale` (the scale of every figure not named in `metric_scales`, the breakdown's cells included),
        `metric_scales` (one entry per metric) and `interval` (the headline's 95% interval: metric, estimate, low,
        high, se, confidence, method, n[, clusters, cluster_by, resamples, seed]; null where none was computed).
        Readers of older files find no `interval` key: treat it as null."""
        breakdown = None
        if self.table is not None:
            breakdown = self.table.to_dict(orient="records")
        overall = self.scale or default_scale(self.scorer)
        primary = self.scale_of(self.primary)
        return {
            "scorer": self.scorer,
            "primary_metric": {
                "name": self.primary, "value": self.primary_value, **(primary.to_dict() if primary else {})
            },
            "metrics": self.metrics,
            "scale": overall.to_dict() if overall else None,
            "metric_scales": {name: s.to_dict() for name in self.metrics if (s := self.scale_of(name)) is not None},
            "breakdown": breakdown,
            "counts": self.counts,
            "notes": self.notes,
            "vlmevalkit": self.vlmevalkit.to_dict() if self.vlmevalkit is not None else None,
            "interval": ci.to_dict() if (ci := self.primary_interval) is not None else None,
        }
