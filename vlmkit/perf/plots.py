"""PNG plots of a perf run (matplotlib, Agg backend, imported only here and only when plotting):

- `latency_cdf_<level>.png`: empirical CDFs of TTFT, TPOT, ITL and E2EL;
- `timeline_<level>.png`: completed requests/s, output tokens/s (each on its own axes, over a sliding window) and
  requests in flight;
- `sweep.png` (two levels or more): throughput and TTFT/TPOT/E2EL median and p99 against the level.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from vlmkit.outputs.layout import PERF_PLOTS
from vlmkit.perf.client import Record
from vlmkit.perf.metrics import output_tokens, per_request

NO_MATPLOTLIB = "matplotlib is not installed: no plots were drawn (pip install 'vlmkit[perf]')"


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def latency_cdf(path: Path, label: str, records: list[Record]) -> None:
    plt = _pyplot()
    figures = [per_request(r) for r in records if r.ok]
    series = {
        "TTFT (ms)": [f["ttft_ms"] for f in figures if f["ttft_ms"] is not None],
        "TPOT (ms)": [f["tpot_ms"] for f in figures if f["tpot_ms"] is not None],
        "ITL (ms)": [g for f in figures for g in f["itl_ms"]],
        "E2EL (ms)": [f["e2el_ms"] for f in figures],
    }
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, (name, values) in zip(axes.flat, series.items()):
        if values:
            x = np.sort(np.asarray(values))
            ax.step(x, np.arange(1, x.size + 1) / x.size, where="post")
        else:
            ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(name)
        ax.set_ylabel("fraction of requests" if name != "ITL (ms)" else "fraction of gaps")
        ax.grid(alpha=0.3)
    fig.suptitle(f"latency CDFs — {label}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def rolling_rate(times: Any, grid: Any, window: float, weights: Any = None) -> Any:
    """Events per second in the window (t - window, t] at each grid time t (weighted: weight per second).

    A sliding window instead of fixed bins: completions that land on either side of a bin edge make fixed bins
    zig-zag between neighbours; the window moves smoothly over the same events."""
    times = np.asarray(times, dtype=float)
    order = np.argsort(times, kind="stable")
    times = times[order]
    values = np.ones(times.size) if weights is None else np.asarray(weights, dtype=float)[order]
    cumulative = np.concatenate(([0.0], np.cumsum(values)))
    grid = np.asarray(grid, dtype=float)
    upto = cumulative[np.searchsorted(times, grid, side="right")]
    before = cumulative[np.searchsorted(times, grid - window, side="right")]
    return (upto - before) / window


def in_flight(starts: list[float], ends: list[float]) -> tuple[list[float], list[int]]:
    """(times, requests in flight just after each time) as a step function; at one instant ends count before
    starts, so a request that ends as another starts never counts both."""
    events = sorted([(t, 0, -1) for t in ends] + [(t, 1, 1) for t in starts])
    xs, levels, level = [0.0], [0], 0
    for t, _, step in events:
        level += step
        xs.append(t)
        levels.append(level)
    return xs, levels


def timeline(path: Path, label: str, records: list[Record], t0: int) -> None:
    plt = _pyplot()
    sent = [r for r in records if r.start and r.end]
    fig, (rate_ax, token_ax, flight_ax) = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    if sent:
        ok = [r for r in sent if r.ok]
        ends = [(r.end - t0) / 1e9 for r in ok]
        span = max(max((r.end - t0) / 1e9 for r in sent), 1e-3)
        window = max(span / 20, min(1.0, span))
        grid = np.linspace(0, span, 400)
        rate_ax.plot(grid, rolling_rate(ends, grid, window), color="tab:blue")
        token_ax.plot(grid, rolling_rate(ends, grid, window, [output_tokens(r)[0] for r in ok]), color="tab:orange")
        xs, levels = in_flight([(r.start - t0) / 1e9 for r in sent], [(r.end - t0) / 1e9 for r in sent])
        flight_ax.step(xs, levels, where="post", color="tab:green")
        rate_ax.set_title(f"over a sliding window of {window:.3g} s", fontsize=9)
    rate_ax.set_ylabel("completed requests/s")
    token_ax.set_ylabel("output tokens/s")
    flight_ax.set_ylabel("requests in flight")
    flight_ax.set_xlabel("seconds since the measured phase began")
    for ax in (rate_ax, token_ax, flight_ax):
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    fig.suptitle(f"throughput and concurrency over time — {label}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def sweep(path: Path, levels: list[dict[str, Any]]) -> None:
    plt = _pyplot()
    open_loop = levels[0]["mode"] == "open"
    x = [lv["request_rate"] if open_loop else lv["concurrency"] for lv in levels]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    ax = axes[0][0]
    ax.plot(x, [lv["request_throughput"] for lv in levels], marker="o", label="requests/s")
    ax.set_ylabel("requests/s")
    twin = ax.twinx()
    twin.plot(x, [lv["output_token_throughput"] for lv in levels], marker="s", color="tab:orange", label="output tokens/s")
    twin.set_ylabel("output tokens/s")
    ax.legend(loc="upper left")
    twin.legend(loc="lower right")
    for ax, name in zip((axes[0][1], axes[1][0], axes[1][1]), ("ttft_ms", "tpot_ms", "e2el_ms")):
        for stat in ("median", "p99"):
            ax.plot(x, [lv[name][stat] for lv in levels], marker="o", label=stat)
        ax.set_ylabel(name.replace("_ms", "").upper() + " (ms)")
        ax.legend()
    for ax in axes.flat:
        ax.set_xlabel("request rate (req/s)" if open_loop else "concurrency")
        ax.grid(alpha=0.3)
    fig.suptitle("figures against the " + ("request rate" if open_loop else "concurrency") + " sweep")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_plots(out_dir: Path, runs: list[tuple[dict[str, Any], list[Record], int]]) -> tuple[list[str], str | None]:
    """(files written, note). `runs`: (level summary, measured records, t0) per level."""
    try:
        _pyplot()
    except ImportError:
        return [], NO_MATPLOTLIB
    folder = out_dir / PERF_PLOTS
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for level, records, t0 in runs:
        name = _safe(level["label"])
        latency_cdf(folder / f"latency_cdf_{name}.png", level["label"], records)
        timeline(folder / f"timeline_{name}.png", level["label"], records, t0)
        files += [str(folder / f"latency_cdf_{name}.png"), str(folder / f"timeline_{name}.png")]
    if len(runs) >= 2:
        sweep(folder / "sweep.png", [level for level, _, _ in runs])
        files.append(str(folder / "sweep.png"))
    return files, None
