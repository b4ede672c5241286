"""Finding the runs under work dirs and reading each results.json as a Run.

A run is one `results.json` (layout `<work>/<model>/<dataset>/results.json`, vlmkit.outputs.layout); a run set
aside when a later one used other settings is `results.staleN.json` beside it, with `predictions.staleN.jsonl`.
Any folder may be given: every such file below it is found. Each file is read through vlmkit.outputs.schema: a
field of the wrong type (a hand-edited `notes` string) is left out with a warning, a file that is no results
document is skipped with one. Model and dataset names come from results.json (the folder names are only a
fallback: a model folder holds a sanitised name).

The headline figure's scale comes from results.json (`scoring.primary_metric.scale`, written since scales were
recorded); for an older file it is inferred from the scorer's name (`scale_source: "inferred"`, said in the
report), and a scorer vlmkit does not know leaves it unknown.

`scoring.vlmevalkit` (written since issue 23; null or absent where the scorer does not compute it) is the figure
VLMEvalKit would print for the same replies: `vlmevalkit_value` is its headline, shown on the scale of the metric it
names (the figure uses vlmkit's metric names and scales).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from vlmkit.outputs import layout
from vlmkit.outputs.schema import Results, UnreadableFile, read_results
from vlmkit.scoring.scales import Scale, default_scale, infer_scale

# Statuses whose figure is a plain result; `partial` has a figure that counts failed samples as misses.
SCORED = ("success", "partial")


class ReportInputError(ValueError):
    """A file or argument the report cannot use; the text names it (printed as one line)."""


@dataclass
class Run:
    path: Path  # results.json or results.staleN.json
    model: str
    dataset: str
    status: str
    completed_at: str | None
    stale: bool
    scorer: str | None = None
    metric: str | None = None
    value: float | None = None  # None unless the run has a scored figure
    scale: Scale | None = None
    scale_source: str = "unknown"  # recorded | inferred | unknown
    counts: dict[str, Any] = field(default_factory=dict)  # results.json `counts`
    scoring: dict[str, Any] = field(default_factory=dict)  # results.json `scoring` (or {})
    results: Results = field(default_factory=Results)  # the whole document
    latest: bool = True  # the newest run of its (model, dataset) pair
    vlmevalkit: dict[str, Any] | None = None  # results.json `scoring.vlmevalkit`; None where absent or null
    vlmevalkit_value: float | None = None  # its headline; None unless the run has a scored figure

    @property
    def vlmevalkit_metric(self) -> str | None:
        """The name of VLMEvalKit's headline figure (one of vlmkit's metric names)."""
        primary = (self.vlmevalkit or {}).get("primary_metric")
        name = primary.get("name") if isinstance(primary, dict) else None
        return name if isinstance(name, str) else None

    @property
    def vlmevalkit_differing(self) -> int | None:
        """How many rows VLMEvalKit's reading takes differently (`differing_rows`); None where not recorded."""
        count = (self.vlmevalkit or {}).get("differing_rows")
        return count if isinstance(count, int) and not isinstance(count, bool) else None

    @property
    def vlmevalkit_source(self) -> str:
        """`open-compass/VLMEvalKit @ e8e78f05`: the code VLMEvalKit's figure follows, as results.json names it."""
        block = self.vlmevalkit or {}
        repo, commit = block.get("repo") or "VLMEvalKit", block.get("commit")
        return f"{repo} @ {commit}" if commit else f"{repo} (commit not recorded)"

    @property
    def vlmevalkit_scale(self) -> Scale | None:
        """The scale of VLMEvalKit's headline: that of the vlmkit metric it names, else the run's headline's."""
        name = self.vlmevalkit_metric
        if name is None or name == self.metric:
            return self.scale
        return self.figure_scale(name) or self.scale

    @property
    def run_dir(self) -> Path:
        return self.path.parent

    @property
    def predictions(self) -> Path:
        """predictions.jsonl beside results.json; predictions.staleN.jsonl beside results.staleN.json."""
        return layout.predictions_beside(self.path)

    @property
    def n(self) -> int | None:
        return self.counts.get("total")

    @property
    def label(self) -> str:
        return f"{self.model} x {self.dataset}" + (f" ({self.path.name})" if self.stale else "")

    def figure_scale(self, metric: str) -> Scale | None:
        """The scale of any figure of this run (a metric or a breakdown column)."""
        recorded = (self.scoring.get("metric_scales") or {}).get(metric)
        scale = Scale.from_dict(recorded) or Scale.from_dict(self.scoring.get("scale"))
        if scale is not None:
            return scale
        return infer_scale(self.scorer, metric) if self.scorer else None


def _completed(results: Results, path: Path) -> str | None:
    value = results.completed_at or results.started_at
    if value is not None:
        return value
    return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")


def _sort_time(run: Run) -> tuple[float, int]:
    try:
        stamp = datetime.fromisoformat(run.completed_at or "")
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=timezone.utc)
        when = stamp.timestamp()
    except ValueError:
        when = run.path.stat().st_mtime
    return when, 0 if run.stale else 1  # a tie goes to results.json


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _finite(value: Any) -> float | None:
    number = _number(value)
    return number if number is not None and math.isfinite(number) else None


def load_run(path: Path, warnings: list[str] | None = None) -> Run:
    """Read one results.json; ReportInputError (one line naming the file) when it is not a results document. Its
    fields of the wrong type are left out, said in one line appended to `warnings`."""
    try:
        results = read_results(path, warnings)
    except UnreadableFile as exc:
        raise ReportInputError(str(exc)) from None
    scoring = results.scoring or {}
    run = Run(
        path=path,
        model=results.model.get("name") or path.parent.parent.name,
        dataset=results.dataset.get("name") or path.parent.name,
        status=results.status,
        completed_at=_completed(results, path),
        stale=layout.stale_number(path.name) is not None,
        counts=results.counts,
        scoring=scoring,
        results=results,
    )
    primary = scoring.get("primary_metric") or {}
    run.scorer = scoring.get("scorer") or None
    run.metric = primary.get("name")
    if run.status in SCORED:
        run.value = _number(primary.get("value"))
    block = scoring.get("vlmevalkit")
    if isinstance(block, dict):
        run.vlmevalkit = block
        headline = block.get("primary_metric")
        if run.status in SCORED and isinstance(headline, dict):
            run.vlmevalkit_value = _finite(headline.get("value"))
    recorded = Scale.from_dict(primary)
    if recorded is not None:
        run.scale, run.scale_source = recorded, "recorded"
    elif run.scorer and run.metric:
        inferred = infer_scale(run.scorer, run.metric) or default_scale(run.scorer)
        if inferred is not None:
            run.scale, run.scale_source = inferred, "inferred"
    return run


def find_results(roots: list[Path]) -> list[Path]:
    """Every results.json / results.staleN.json below the given folders (or the files themselves), sorted."""
    try:
        return layout.find_results(roots)
    except FileNotFoundError as exc:
        raise ReportInputError(str(exc)) from None


def _matches(name: str, patterns: list[str] | None) -> bool:
    return not patterns or any(fnmatchcase(name, p) for p in patterns)


def mark_latest(runs: list[Run]) -> None:
    """Set `latest` on the newest run (by completed_at) of each (model, dataset) pair."""
    newest: dict[tuple[str, str], Run] = {}
    for run in runs:
        key = (run.model, run.dataset)
        if key not in newest or _sort_time(run) > _sort_time(newest[key]):
            newest[key] = run
    for run in runs:
        run.latest = newest[(run.model, run.dataset)] is run


def collect_runs(
    roots: list[Path],
    *,
    models: list[str] | None = None,
    datasets: list[str] | None = None,
    every_run: bool = False,
    warnings: list[str] | None = None,
) -> list[Run]:
    """The runs below roots, filtered by model and dataset names (shell patterns: `Qwen*`), the latest of each
    pair unless every_run; sorted by dataset, model, then time. A file that is not a results document is left out
    with a line in `warnings`, as is a field of the wrong type (left out)."""
    runs: list[Run] = []
    for path in find_results(roots):
        try:
            run = load_run(path, warnings)
        except ReportInputError as exc:
            if warnings is None:
                raise
            warnings.append(f"skipped {exc}")
            continue
        if _matches(run.model, models) and _matches(run.dataset, datasets):
            runs.append(run)
    mark_latest(runs)
    if not every_run:
        runs = [r for r in runs if r.latest]
    return sorted(runs, key=lambda r: (r.dataset, r.model, _sort_time(r)))


def resolve_run(spec: str, warnings: list[str] | None = None) -> Run:
    """A run named on the command line: a run folder (its results.json) or a results*.json file."""
    path = Path(spec)
    if path.is_dir():
        path = path / layout.RESULTS
    if not path.is_file():
        raise ReportInputError(f"{spec}: no results.json there (give a run folder or a results.json file)")
    return load_run(path, warnings)
