"""The leaderboard: one row per run, and the models x datasets grid of the same figures.

A figure is shown on its own scale (vlmkit.scoring.scales). A partial run's figure carries a `*` (its failed
samples count as misses); a run without a scored figure (failed, no target, inference only) shows no value, only
its status. The best figure of each dataset is marked among its finished (`success`) runs of the same metric and
scale, by the metric's direction.

Beside the value, `vlmevalkit` is the figure VLMEvalKit would print for the same replies (results.json
`scoring.vlmevalkit`), on the same scale and with the same partial mark; blank where the scorer did not compute it.

`ci95` is the headline's 95% interval as `+-half-width` on the value's scale (results.json `scoring.interval`,
vlmkit.scoring.common.intervals; the larger side where a Wilson or bootstrap interval is not symmetric); blank for a
run written before intervals were recorded, or whose interval is not about its headline.

`vs_best` is the p-value of the paired test (vlmkit.report.diff.paired_test) of a latest run against the best
finished run of its dataset, metric and scale, on the samples both scored; blank for the best run itself and where a
predictions file is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from vlmkit.report.paired import PairedTest
from vlmkit.report.runs import ReportInputError, Run
from vlmkit.report.samples import Sample, read_samples
from vlmkit.scoring.scales import Scale

PARTIAL_MARK = "*"
LEGEND = {
    "partial": f"{PARTIAL_MARK} partial run: some samples failed or were not run and count as misses (see done / n)",
    "inferred": "(inferred): results.json written before scales were recorded; scale read from the scorer's name",
    "empty": "no value: the run was not scored (failed, no target, or inference only); see status",
    "ci95": "ci95: +- the larger half of the headline's 95% interval (method in results.json scoring.interval; "
            "docs/error_bars.md); `vlmkit report --diff A B` tests two runs on the same samples",
    "vs_best": "vs_best: p-value of a paired test (McNemar on hits, paired bootstrap on graded scores) of the run "
               "against the best finished run of its dataset on the samples both scored; p >= 0.05: the gap is "
               "inside the noise",
    "vlmevalkit": "vlmevalkit: the figure VLMEvalKit ({where}) would print for the same replies, on the same scale; "
                  "blank where the scorer does not compute it. `vlmkit report --explain RUN` says where they differ",
}


@dataclass
class Row:
    run: Run
    display: str  # the value on its scale, with PARTIAL_MARK for a partial run; "" without a scored figure
    best: bool = False
    vlmevalkit: str = ""  # VLMEvalKit's figure on the same scale (with PARTIAL_MARK); "" where there is none
    ci95: str = ""  # `+-0.0552`: the headline's 95% interval (display_interval); "" where there is none
    vs_best: PairedTest | None = None  # the paired test against the dataset's best finished run (against_best)

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


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def run_interval(run: Run) -> dict[str, Any] | None:
    """results.json `scoring.interval` when it is about the run's headline (its metric and value), with `low`,
    `high` and `se` finite numbers; None otherwise (older files have none)."""
    block = run.scoring.get("interval")
    if not isinstance(block, dict) or run.value is None or block.get("metric") != run.metric:
        return None
    numbers = {k: _finite(block.get(k)) for k in ("estimate", "low", "high", "se")}
    if any(v is None for v in numbers.values()) or not math.isclose(numbers["estimate"], run.value, rel_tol=1e-9,
                                                                    abs_tol=1e-12):
        return None
    return {**block, **numbers}


def display_interval(run: Run, *, with_value: bool = False) -> str:
    """`+-0.0552` (the larger half of the interval on the value's scale); with_value: `0.6100 +-0.0552 (95% CI
    0.5500..0.6600, wilson, n=300)`. "" without an interval."""
    block = run_interval(run)
    if block is None:
        return ""
    fmt = run.scale.format if run.scale is not None else (lambda v: f"{v:.4g}")
    half = max(block["high"] - block["estimate"], block["estimate"] - block["low"])
    short = f"±{fmt(half)}"
    if not with_value:
        return short
    extra = ", ".join(str(x) for x in (block.get("method"), f"n={block.get('n')}" if block.get("n") else None) if x)
    return f"{display_value(run)} {short} (95% CI {fmt(block['low'])}..{fmt(block['high'])}, {extra})"


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


def against_best(runs: list[Run], best: set[int]) -> dict[int, PairedTest]:
    """id() of each latest scored run -> its paired test (vlmkit.report.diff.paired_test) against the best finished
    run of its dataset, metric and scale, on the samples both scored; runs without a readable predictions file, or
    sharing no scored sample with the best, are left out."""
    from vlmkit.report.diff import paired_test

    leaders = {_comparable(r): r for r in runs if id(r) in best}
    out: dict[int, PairedTest] = {}
    cache: dict[int, dict[str, Sample] | None] = {}

    def samples(run: Run) -> dict[str, Sample] | None:
        if id(run) not in cache:
            try:
                cache[id(run)] = {s.key: s for s in read_samples(run.predictions, run.metric, [])}
            except (OSError, ReportInputError):
                cache[id(run)] = None
        return cache[id(run)]

    for run in runs:
        leader = leaders.get(_comparable(run))
        if leader is None or leader is run or id(run) in best or run.value is None or not run.latest:
            continue
        if not run.predictions.is_file() or not leader.predictions.is_file():
            continue
        mine, theirs = samples(run), samples(leader)
        if mine is None or theirs is None:
            continue
        test = paired_test(theirs, mine)
        if test is not None:
            out[id(run)] = test
    return out


def display_vs_best(test: PairedTest | None) -> str:
    """`p=0.2188` (the paired test's p-value against the dataset's best run); "" without one."""
    return "" if test is None else f"p={test.p_value:.4g}"


def leaderboard(runs: list[Run]) -> list[Row]:
    best = best_runs(runs)
    tests = against_best(runs, best)
    return [Row(run, display_value(run), id(run) in best, display_vlmevalkit(run), display_interval(run),
                tests.get(id(run))) for run in runs]


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
    if any(r.ci95 for r in rows):
        lines.append(LEGEND["ci95"])
    if any(r.vs_best for r in rows):
        lines.append(LEGEND["vs_best"])
    commits = sorted({r.run.vlmevalkit_source for r in rows if r.vlmevalkit})
    if commits:
        lines.append(LEGEND["vlmevalkit"].format(where=", ".join(commits)))
    return lines


def has_interval(rows: list[Row]) -> bool:
    """Whether any row carries an interval (the console and markdown tables show the ci95 column only then)."""
    return any(r.ci95 for r in rows)


def has_vlmevalkit(rows: list[Row]) -> bool:
    """Whether any row carries VLMEvalKit's figure (the console and markdown tables show the column only then)."""
    return any(r.vlmevalkit for r in rows)
