"""Score against frames: a video benchmark's figure per model at each frame budget, from results.json alone.

A run's budget (`run_budget`) is what its results.json records: `dataset.video` (`{nframe|fps, rule, benchmark,
label}`), written by a `vlmkit run --nframe 8,16,32` sweep (vlmkit.run.frame_sweep), whose runs are named
`<benchmark>_<N>frame`; else, for a video dataset (`dataset.kind == "video"`) run at one budget, the model's
settings (`model.settings.fps`, else `.nframe`; `model.kwargs` for a file without settings), the benchmark being the
dataset's name. A run where neither says a budget is left out.

A curve (`frame_curves`) is one benchmark swept over one unit (frames per clip, or frames per second) with at least
two budgets among its runs: rows are models, columns budgets, each cell the latest run of that model at that budget
(a later rerun of a budget wins). Figures of one curve share the metric and scale of its first run; a run of
another metric is left out with a note. The console, report.md and frame_curves.csv show the table; the HTML page
draws it as a line chart (page.js `drawFrameCurves`) beside the same table.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Any

from vlmkit.core.spreadsheet import csv_line_end, spreadsheet_text
from vlmkit.report.export import _md_escape, _md_table, fixed_width
from vlmkit.report.runs import Run
from vlmkit.report.table import display_value
from vlmkit.scoring.scales import Scale

NFRAME, FPS = "nframe", "fps"
UNITS = {NFRAME: "frames", FPS: "fps"}
CSV_NAME = "frame_curves.csv"


@dataclass(frozen=True)
class RunBudget:
    """A run's frame budget: `key` nframe or fps, `value` the number, `benchmark` the dataset swept, `rule` the
    frame sampler where recorded, `source` where it was read (`dataset.video` or `model.settings`)."""

    key: str
    value: float
    benchmark: str
    rule: str | None = None
    source: str = "dataset.video"

    @property
    def label(self) -> str:
        """`8 frames`, `0.5 fps`."""
        return f"{self.value:g} {UNITS[self.key]}"


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return None
    return float(value)


def run_budget(run: Run) -> RunBudget | None:
    """The run's frame budget as results.json records it (module docstring); None where it records none."""
    dataset = run.results.dataset or {}
    video = dataset.get("video")
    if isinstance(video, dict):
        benchmark = video.get("benchmark") if isinstance(video.get("benchmark"), str) else run.dataset
        rule = video.get("rule") if isinstance(video.get("rule"), str) else None
        for key in (FPS, NFRAME):
            value = _positive(video.get(key))
            if value is not None:
                return RunBudget(key, value, benchmark, rule)
        return None
    if dataset.get("kind") != "video":
        return None
    frames = dataset.get("frames")
    rule = frames.get("sampler") if isinstance(frames, dict) and isinstance(frames.get("sampler"), str) else None
    model = run.results.model or {}
    for where in ("settings", "kwargs"):
        block = model.get(where)
        if not isinstance(block, dict):
            continue
        for key in (FPS, NFRAME):  # a model given fps samples by it (its nframe is then None)
            value = _positive(block.get(key))
            if value is not None:
                return RunBudget(key, value, run.dataset, rule, f"model.{where}")
    return None


@dataclass
class Curve:
    """One benchmark over one unit: `cells[model][budget]` the run of that model at that budget."""

    benchmark: str
    key: str  # nframe | fps
    metric: str | None
    scale: Scale | None
    budgets: list[float]
    cells: dict[str, dict[float, Run]]
    rules: list[str] = field(default_factory=list)  # the frame samplers the runs recorded
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        scale = self.scale.label() if self.scale is not None else "no scale"
        return f"{self.benchmark}: {self.metric or '-'} ({scale}) by {UNITS[self.key]}"

    @property
    def models(self) -> list[str]:
        return sorted(self.cells)

    def column(self, budget: float) -> str:
        return f"{budget:g} {UNITS[self.key]}"

    def cell(self, model: str, budget: float) -> str:
        """The figure on its scale (`*` for a partial run), the status of a run without one, `-` where none ran."""
        run = self.cells.get(model, {}).get(budget)
        if run is None:
            return "-"
        return display_value(run) or run.status


def _when(run: Run) -> tuple[str, int]:
    return run.completed_at or "", 0 if run.stale else 1


def frame_curves(runs: list[Run]) -> list[Curve]:
    """Every benchmark with runs at two or more budgets of one unit, as curves (module docstring), sorted by
    benchmark then unit."""
    groups: dict[tuple[str, str], list[tuple[RunBudget, Run]]] = {}
    for run in runs:
        budget = run_budget(run)
        if budget is not None:
            groups.setdefault((budget.benchmark, budget.key), []).append((budget, run))
    curves = []
    for (benchmark, key), members in sorted(groups.items()):
        if len({b.value for b, _ in members}) < 2:
            continue
        latest: dict[tuple[str, float], tuple[RunBudget, Run]] = {}
        for budget, run in members:
            slot = (run.model, budget.value)
            if slot not in latest or _when(run) > _when(latest[slot][1]):
                latest[slot] = (budget, run)
        chosen = sorted(latest.values(), key=lambda item: (_when(item[1]), item[1].model))
        scored = [run for _, run in chosen if run.metric]
        first = scored[0] if scored else chosen[0][1]
        curve = Curve(benchmark, key, first.metric, first.scale, [], {})
        for budget, run in chosen:
            if run.metric and first.metric and run.metric != first.metric:
                curve.notes.append(f"{run.label} left out: its figure is {run.metric}, the curve's {first.metric}")
                continue
            curve.cells.setdefault(run.model, {})[budget.value] = run
            if budget.rule and budget.rule not in curve.rules:
                curve.rules.append(budget.rule)
        curve.budgets = sorted({b for row in curve.cells.values() for b in row})
        if len(curve.budgets) >= 2:
            curves.append(curve)
    return curves


def _table(curve: Curve) -> tuple[list[str], list[list[str]]]:
    header = ["model", *(curve.column(b) for b in curve.budgets)]
    return header, [[model, *(curve.cell(model, b) for b in curve.budgets)] for model in curve.models]


def curves_console(curves: list[Curve]) -> str:
    """The console text: each curve's title and its models x budgets table; empty without a curve."""
    parts = []
    for curve in curves:
        header, rows = _table(curve)
        lines = [f"score by frame budget - {curve.title}", fixed_width(header, rows, set(range(1, len(header))))]
        lines += [f"note: {n}" for n in curve.notes]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def curves_markdown(curves: list[Curve]) -> list[str]:
    """report.md's section (lines); none without a curve."""
    if not curves:
        return []
    out = ["## Score by frame budget", "",
           "Each video benchmark run at several frame budgets (`vlmkit run --nframe 8,16,32`): the latest run of "
           "each model at each budget.", ""]
    for curve in curves:
        header, rows = _table(curve)
        out += [f"### {_md_escape(curve.title)}", ""]
        out += _md_table(header, rows, set(range(1, len(header)))) + [""]
        if curve.rules:
            out += [f"Frames sampled by: {_md_escape('; '.join(curve.rules))}", ""]
        out += [f"- {_md_escape(n)}" for n in curve.notes] + ([""] if curve.notes else [])
    return out


CSV_COLUMNS = ("benchmark", "unit", "metric", "scale", "model")


def curves_csv(curves: list[Curve]) -> str:
    """frame_curves.csv: one row per (curve, model), a column per budget (the raw figure; empty where that model has
    none at that budget) named `<value> <unit>` across every curve."""
    columns = list(CSV_COLUMNS)
    for curve in curves:
        columns += [c for c in (curve.column(b) for b in curve.budgets) if c not in columns]
    table = []
    for curve in curves:
        for model in curve.models:
            row = {"benchmark": curve.benchmark, "unit": UNITS[curve.key], "metric": curve.metric or "",
                   "scale": curve.scale.kind if curve.scale is not None else "", "model": model}
            for budget, run in curve.cells[model].items():
                row[curve.column(budget)] = "" if run.value is None else repr(run.value)
            table.append({name: spreadsheet_text(row.get(name, "")) for name in columns})
    buffer = io.StringIO()
    line_end = csv_line_end(value for row in table for value in row.values())
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator=line_end)
    writer.writeheader()
    writer.writerows(table)
    return buffer.getvalue()


def curves_payload(curves: list[Curve], run_ids: dict[int, str]) -> list[dict[str, Any]]:
    """What page.js draws (`frame_curves`): per curve its title, unit, budgets, the scale's direction, and per model
    its points `[budget, value or null, shown text, run id]`."""
    out = []
    for curve in curves:
        series = []
        for model in curve.models:
            points = []
            for budget in curve.budgets:
                run = curve.cells[model].get(budget)
                if run is not None:
                    value = run.value if run.value is not None and math.isfinite(run.value) else None
                    points.append([budget, value, curve.cell(model, budget), run_ids.get(id(run))])
            series.append({"model": model, "points": points})
        out.append({
            "title": curve.title, "benchmark": curve.benchmark, "unit": UNITS[curve.key], "metric": curve.metric,
            "scale": curve.scale.label() if curve.scale is not None else None,
            "hib": curve.scale.higher_is_better if curve.scale is not None else True,
            "budgets": curve.budgets, "columns": [curve.column(b) for b in curve.budgets], "series": series,
            "rules": curve.rules, "notes": curve.notes,
        })
    return out
