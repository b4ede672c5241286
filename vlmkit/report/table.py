"""The leaderboard: one row per run, and the models x datasets grid of the same figures.

A figure is shown on its own scale (vlmkit.scoring.scales). A partial run's figure carries a `*` (its failed
samples count as misses); a run without a scored figure (failed, no target, inference only) shows no value, only
its status. The best figure of each dataset is marked among its finished (`success`) runs of the same metric and
scale, by the metric's direction.

Beside the value, `vlmevalkit` is the figure VLMEvalKit would print for the same replies (results.json
`scoring.vlmevalkit`), on the same scale and with the same partial mark; blank where the scorer did not compute it.
"""

from __future__ import annotations

from dataclasses import dataclass

from vlmkit.report.runs import Run
from vlmkit.scoring.scales import Scale

PARTIAL_MARK = "*"
LEGEND = {
    "partial": f"{PARTIAL_MARK} partial run: some samples failed or were not run and count as misses (see done / n)",
    "inferred": "(inferred): results.json written before scales were recorded; scale read from the scorer's name",
    "empty": "no value: the run was not scored (failed, no target, or inference only); see status",
    "vlmevalkit": "vlmevalkit: the figure VLMEvalKit ({where}) would print for the same replies, on the same scale; "
                  "blank where the scorer does not compute it. `vlmkit report --explain RUN` says where they differ",
}


@dataclass
class Row:
    run: Run
    display: str  # the value on its scale, with PARTIAL_MARK for a partial run; "" without a scored figure
    best: bool = False
    vlmevalkit: str = ""  # VLMEvalKit's figure on the same scale (with PARTIAL_MARK); "" where there is none

    @property
    def scale_label(self) -> str:
        scale = self.run.scale
        if scale is None:
            return "unknown" if self.run.value is not None else ""
        return scale.label() + (" (inferred)" if self.run.scale_source == "inferred" else "")

    @property
    def column(self) -> str:
        """The grid column header: `dataset (metric, scale)`."""
        run = self.run
        return f"{run.dataset} ({run.metric or '-'}, {self.scale_label or 'no scale'})"


def _shown(value: float | None, scale: Scale | None, status: str) -> str:
    if value is None:
        return ""
    text = scale.format(value) if scale is not None else f"{value:g}"
    return text + (PARTIAL_MARK if status == "partial" else "")


def display_value(run: Run) -> str:
    return _shown(run.value, run.scale, run.status)


def display_vlmevalkit(run: Run) -> str:
    """VLMEvalKit's headline as the value column shows vlmkit's: on its scale, `*` for a partial run."""
    return _shown(run.vlmevalkit_value, run.vlmevalkit_scale, run.status)


def _comparable(run: Run) -> tuple[str, str | None, str | None]:
    return run.dataset, run.metric, run.scale.kind if run.scale else None


def best_runs(runs: list[Run]) -> set[int]:
    """id() of the best finished run of each (dataset, metric, scale): highest, or lowest where lower is better.
    Ties are all marked; a dataset with one finished run marks it too."""
    groups: dict[tuple[str, str | None, str | None], list[Run]] = {}
    for run in runs:
        if run.status == "success" and run.value is not None and run.latest:
            groups.setdefault(_comparable(run), []).append(run)
    best: set[int] = set()
    for members in groups.values():
        higher = members[0].scale.higher_is_better if members[0].scale else True
        target = max(r.value for r in members) if higher else min(r.value for r in members)  # type: ignore[type-var]
        best.update(id(r) for r in members if r.value == target)
    return best


def leaderboard(runs: list[Run]) -> list[Row]:
    best = best_runs(runs)
    return [Row(run, display_value(run), id(run) in best, display_vlmevalkit(run)) for run in runs]


@dataclass
class Grid:
    models: list[str]
    columns: list[str]  # one per dataset (with its metric and scale)
    cells: dict[tuple[str, str], Row]  # (model, column) -> the latest run's row


def grid(rows: list[Row]) -> Grid:
    """Models x datasets from the latest run of each pair (models and datasets in name order)."""
    latest = [row for row in rows if row.run.latest]
    column_of: dict[str, str] = {}
    for row in sorted(latest, key=lambda r: r.run.value is None):  # a scored run names its dataset's column
        column_of.setdefault(row.run.dataset, row.column)
    cells = {(row.run.model, row.run.dataset): row for row in latest}
    datasets = sorted(column_of)
    models = sorted({model for model, _ in cells})
    return Grid(
        models=models,
        columns=[column_of[d] for d in datasets],
        cells={(m, column_of[d]): cells[(m, d)] for m in models for d in datasets if (m, d) in cells},
    )


def legend(rows: list[Row]) -> list[str]:
    """The legend lines that apply to these rows."""
    lines = []
    if any(r.run.status == "partial" and r.run.value is not None for r in rows):
        lines.append(LEGEND["partial"])
    if any(r.run.scale_source == "inferred" for r in rows):
        lines.append(LEGEND["inferred"])
    if any(r.run.value is None for r in rows):
        lines.append(LEGEND["empty"])
    commits = sorted({r.run.vlmevalkit_source for r in rows if r.vlmevalkit})
    if commits:
        lines.append(LEGEND["vlmevalkit"].format(where=", ".join(commits)))
    return lines


def has_vlmevalkit(rows: list[Row]) -> bool:
    """Whether any row carries VLMEvalKit's figure (the console and markdown tables show the column only then)."""
    return any(r.vlmevalkit for r in rows)
