"""EvalResult: what every scorer returns, and what the runner writes into results.json and the summary files."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key
from vlmkit.scoring.common.intervals import Interval, mean_interval
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

    # Per-sample outcomes (repeats, truncation, a generic interval) ----------------------------------------------
    def sample_scores(self) -> dict[str, float]:
        """Each scored row's own outcome by index key: 1/0 for its `hit` where the scorer reads hits, else its numeric
        `score` (VQA score, ANLS, ...), else its column named as the headline (text QA's `exact_match`), as `vlmkit
        report` reads a row. Rows without a number are left out; {} for a scorer with no per-row outcome."""
        frame = self.per_sample
        if frame is None or "index" not in frame.columns:
            return {}
        column = next((c for c in ("hit", "score", self.primary) if c in frame.columns), None)
        if column is None:
            return {}
        values = pd.to_numeric(frame[column], errors="coerce")
        return {index_key(i): float(v) for i, v in zip(frame["index"], values) if pd.notna(v)}

    def unit_hits(self) -> dict[str, bool] | None:
        """A right/wrong outcome per unit, for pass@k: per circular group (`group` -> `group_hit`) where the scorer
        groups rows, else per row (its 0/1 `sample_scores`); None where the per-row outcome is graded (not 0/1)."""
        frame = self.per_sample
        if frame is not None and {"group", "group_hit"} <= set(frame.columns):
            return {index_key(g): bool(h) for g, h in zip(frame["group"], frame["group_hit"])}
        scores = self.sample_scores()
        if not scores or any(v not in (0.0, 1.0) for v in scores.values()):
            return None
        return {key: v == 1.0 for key, v in scores.items()}

    def with_generic_interval(self) -> "EvalResult":
        """Give a result without an interval one where its headline is the plain mean of its units' outcomes (on its
        scale: x1 or x100): circular groups (`group_hit`, one per group) where the scorer groups rows, else (or when
        that mean is not the headline) rows (`sample_scores`); Wilson for 0/1 hits, a bootstrap for graded scores (intervals.mean_interval). The mean is
        checked against the headline, so a headline built otherwise (a sum, a mean of categories, errors counted as
        misses that have no row) is left without one rather than given a wrong one."""
        value = self.metrics.get(self.primary)
        if self.interval is not None or isinstance(value, bool) or not isinstance(value, (int, float)):
            return self
        grouped = self.per_sample is not None and "group_hit" in self.per_sample.columns
        candidates = [(self.unit_hits(), "circular group")] if grouped else []
        candidates.append((self.sample_scores(), "row"))
        for by_unit, unit in candidates:
            scores = [float(v) for v in (by_unit or {}).values()]
            if not scores:
                continue
            mean = sum(scores) / len(scores)
            for factor in (1.0, 100.0):
                if math.isclose(mean * factor, value, rel_tol=1e-9, abs_tol=1e-9):
                    ci = mean_interval(scores, self.primary, factor=factor)
                    self.interval = ci if unit == "row" else replace(ci, unit=unit)
                    return self
        return self

    @staticmethod
    def scored(score: Callable[[pd.DataFrame, Any], "EvalResult"], table: pd.DataFrame,
               judge: Any = None) -> "EvalResult":
        """`score(table, judge)` (a dataset's evaluate) with a 95% interval about its headline: the scorer's own, else
        the generic one of a mean (with_generic_interval), else a bootstrap that re-runs `score` on resampled tables
        and never asks the judge again (vlmkit.scoring.common.resampled_interval); without one where none can be
        trusted, with a note saying why. The runner scores every pair through this."""
        from vlmkit.scoring.common.resampled_interval import scored_with_interval

        return scored_with_interval(score, table, judge)
