"""Finding the runs under work dirs and reading each results.json as a Run.

A run is one `results.json` (layout `<work>/<model>/<dataset>/results.json`, docs/outputs.md); a run set aside
when a later one used other settings is `results.staleN.json` beside it, with `predictions.staleN.jsonl`. Any
folder may be given: every such file below it is found. Model and dataset names come from results.json (the
folder names are only a fallback: a model folder holds a sanitised name).

The headline figure's scale comes from results.json (`scoring.primary_metric.scale`, written since scales were
recorded); for an older file it is inferred from the scorer's name (`scale_source: "inferred"`, said in the
report), and a scorer vlmkit does not know leaves it unknown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from vlmkit.scoring.scales import Scale, default_scale, infer_scale

RESULTS_RE = re.compile(r"results(?:\.stale(\d+))?\.json")
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
    data: dict[str, Any] = field(default_factory=dict)  # the whole document
    latest: bool = True  # the newest run of its (model, dataset) pair

    @property
    def run_dir(self) -> Path:
        return self.path.parent

    @property
    def predictions(self) -> Path:
        """predictions.jsonl beside results.json; predictions.staleN.jsonl beside results.staleN.json."""
        m = RESULTS_RE.fullmatch(self.path.name)
        stale = m.group(1) if m else None
        return self.run_dir / (f"predictions.stale{stale}.jsonl" if stale else "predictions.jsonl")

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


def _completed(data: dict[str, Any], path: Path) -> str | None:
    value = data.get("completed_at") or data.get("started_at")
    if isinstance(value, str):
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


def load_run(path: Path) -> Run:
    """Read one results.json; ReportInputError (one line naming the file) when it is not a results document."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ReportInputError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        raise ReportInputError(f"{path}: not a vlmkit results.json (no `status` field)")
    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    dataset = data.get("dataset") if isinstance(data.get("dataset"), dict) else {}
    scoring = data.get("scoring") if isinstance(data.get("scoring"), dict) else {}
    counts = data.get("counts") if isinstance(data.get("counts"), dict) else {}
    m = RESULTS_RE.fullmatch(path.name)
    run = Run(
        path=path,
        model=str(model.get("name") or path.parent.parent.name),
        dataset=str(dataset.get("name") or path.parent.name),
        status=data["status"],
        completed_at=_completed(data, path),
        stale=bool(m and m.group(1)),
        counts=counts,
        scoring=scoring,
        data=data,
    )
    primary = scoring.get("primary_metric") if isinstance(scoring.get("primary_metric"), dict) else {}
    run.scorer = str(scoring["scorer"]) if scoring.get("scorer") else None
    run.metric = str(primary["name"]) if primary.get("name") is not None else None
    if run.status in SCORED:
        run.value = _number(primary.get("value"))
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
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root)
            continue
        if not root.is_dir():
            raise ReportInputError(f"{root}: no such folder")
        found.update(p for p in root.rglob("results*.json") if RESULTS_RE.fullmatch(p.name) and p.is_file())
    return sorted(found)


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
    with a line in `warnings`."""
    runs: list[Run] = []
    for path in find_results(roots):
        try:
            run = load_run(path)
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


def resolve_run(spec: str) -> Run:
    """A run named on the command line: a run folder (its results.json) or a results*.json file."""
    path = Path(spec)
    if path.is_dir():
        path = path / "results.json"
    if not path.is_file():
        raise ReportInputError(f"{spec}: no results.json there (give a run folder or a results.json file)")
    return load_run(path)
