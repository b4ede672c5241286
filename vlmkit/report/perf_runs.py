"""Perf runs under the work dirs: each perf_summary.json (`vlmkit perf`, `vlmkit run --mode perf`) with its figures
per level and the PNG plots in its `plots/` folder (layout: vlmkit.perf.report and vlmkit.perf.plots)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from vlmkit.outputs.layout import PERF_PLOTS, PERF_SUMMARY

# (column, path into a level block); latencies in ms.
LEVEL_FIGURES = (
    ("req/s", ("request_throughput",)),
    ("out tok/s", ("output_token_throughput",)),
    ("TTFT mean", ("ttft_ms", "mean")),
    ("TTFT p99", ("ttft_ms", "p99")),
    ("TPOT mean", ("tpot_ms", "mean")),
    ("TPOT p99", ("tpot_ms", "p99")),
    ("ITL p99", ("itl_ms", "p99")),
    ("E2EL mean", ("e2el_ms", "mean")),
    ("E2EL p99", ("e2el_ms", "p99")),
    ("conc", ("achieved_concurrency", "mean")),
)


@dataclass
class PerfRun:
    path: Path
    model: str
    dataset: str
    status: str
    completed_at: str | None
    levels: list[dict[str, Any]]  # one row per level: level, ok/sent, status, then LEVEL_FIGURES
    notes: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)

    def plot_urls(self) -> list[tuple[str, str]]:
        """(file name, PNG data URL) of each plot."""
        out = []
        for plot in self.plots:
            try:
                data = plot.read_bytes()
            except OSError:
                continue
            out.append((plot.name, "data:image/png;base64," + base64.b64encode(data).decode("ascii")))
        return out


def _dig(block: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        block = block.get(key) if isinstance(block, dict) else None
    return block


def _level_row(level: dict[str, Any]) -> dict[str, Any]:
    requests = level.get("requests") if isinstance(level.get("requests"), dict) else {}
    row: dict[str, Any] = {
        "level": str(level.get("label", "")) + (" (cut short)" if level.get("interrupted") else ""),
        "ok/sent": f"{requests.get('successful', '?')}/{requests.get('measured', '?')}",
        "status": level.get("status", "complete"),
    }
    for name, path in LEVEL_FIGURES:
        value = _dig(level, path)
        row[name] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return row


def load_perf(path: Path) -> PerfRun | None:
    """A perf_summary.json as a PerfRun; None when the file is not one (unreadable, or another kind)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") != "vlmkit-perf":
        return None
    target = data.get("target") if isinstance(data.get("target"), dict) else {}
    dataset = data.get("dataset") if isinstance(data.get("dataset"), dict) else {}
    levels = [_level_row(lv) for lv in data.get("levels") or [] if isinstance(lv, dict)]
    plots = sorted((path.parent / PERF_PLOTS).glob("*.png")) if (path.parent / PERF_PLOTS).is_dir() else []
    return PerfRun(
        path=path,
        model=str(target.get("model") or "?"),
        dataset=str(dataset.get("name") or "?"),
        status=str(data.get("status", "?")),
        completed_at=data.get("completed_at"),
        levels=levels,
        notes=[str(n) for n in data.get("notes") or []] + [str(w) for w in data.get("warnings") or []],
        plots=plots,
    )


def collect_perf(roots: list[Path], *, models: list[str] | None = None, datasets: list[str] | None = None) -> list[PerfRun]:
    """Every perf run below roots (filtered like the leaderboard by model and dataset patterns), newest first."""
    found: list[PerfRun] = []
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob(PERF_SUMMARY)) if root.is_dir() else []
        for path in paths:
            run = load_perf(path)
            if run is None:
                continue
            if models and not any(fnmatchcase(run.model, p) for p in models):
                continue
            if datasets and not any(fnmatchcase(run.dataset, p) for p in datasets):
                continue
            found.append(run)
    return sorted(found, key=lambda r: r.completed_at or "", reverse=True)
