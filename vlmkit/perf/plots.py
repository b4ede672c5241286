"""PNG plots of a perf run (matplotlib, Agg backend, imported only here and only when plotting):

- `latency_cdf_<level>.png`: CDFs of TTFT, TPOT, ITL and E2EL (every value of a short level; one point per histogram
  bucket past vlmkit.perf.digest's exact limit);
- `timeline_<level>.png`: completed requests/s, output tokens/s (each on its own axes, over a sliding window) and
  the most requests in flight, from the level's timeline bins (vlmkit.perf.timeline: bounded, whatever the run's
  length);
- `sweep.png` (two levels or more): throughput and TTFT/TPOT/E2EL median and p99 against the level;
- `server_<level>.png` (--metrics-url): the server's running and waiting requests and KV-cache use over the level;
- `slo_search.png` (--search-rate): each --slo target's figure against the probes' rates, the limit and the rate found.
- `accuracy.png` (--score): the headline score against the concurrency (or rate), beside TTFT and E2EL median/p99.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from vlmkit.outputs.layout import PERF_PLOTS
from vlmkit.perf.metrics import LevelTally
from vlmkit.perf.timeline import Timeline

NO_MATPLOTLIB = "matplotlib is not installed: no plots were drawn (pip install 'vlmkit[perf]')"


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def latency_cdf(path: Path, label: str, tally: LevelTally) -> None:
    """CDFs from the level's digests: every value while the level is short, else one point per histogram bucket."""
    plt = _pyplot()
    series = {"TTFT (ms)": "ttft_ms", "TPOT (ms)": "tpot_ms", "ITL (ms)": "itl_ms", "E2EL (ms)": "e2el_ms"}
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, (name, key) in zip(axes.flat, series.items()):
        digest = tally.digests[key]
        if digest.count():
            x, fraction = digest.cdf()
            ax.step(x, fraction, where="post")
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


def timeline(path: Path, label: str, course: Timeline | None) -> None:
    """Completed requests/s and output tokens/s over a sliding window, and the most requests in flight per bin."""
    plt = _pyplot()
    fig, (rate_ax, token_ax, flight_ax) = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    series = course.series() if course is not None else None
    if series is not None and series["starts_s"].size:
        width = series["width_s"]
        ends = series["starts_s"] + width  # a bin's events counted at its end
        span = max(float(ends[-1]), 1e-3)
        window = max(span / 20, min(1.0, span), width)
        grid = np.linspace(0, span, 400)
        rate_ax.plot(grid, rolling_rate(ends, grid, window, series["completed"]), color="tab:blue")
        token_ax.plot(grid, rolling_rate(ends, grid, window, series["tokens"]), color="tab:orange")
        flight_ax.step(series["starts_s"], series["flight_max"], where="post", color="tab:green")
        rate_ax.set_title(f"over a sliding window of {window:.3g} s (bins of {width:.3g} s)", fontsize=9)
    rate_ax.set_ylabel("completed requests/s")
    token_ax.set_ylabel("output tokens/s")
    flight_ax.set_ylabel("most requests in flight")
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
    levels = sorted(levels, key=lambda lv: lv["request_rate"] if open_loop else lv["concurrency"])  # a search's order
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


def server_gauges(path: Path, label: str, server: dict[str, Any]) -> None:
    """--metrics-url: the server's running and waiting requests and KV-cache use over the level, as sampled."""
    plt = _pyplot()
    columns, rows = server["series"]["columns"], server["series"]["rows"]
    fig, (count_ax, kv_ax) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    t = [r[0] for r in rows]
    for name, color in (("running", "tab:blue"), ("waiting", "tab:orange")):
        values = [r[columns.index(name)] for r in rows]
        if any(v is not None for v in values):
            count_ax.step(t, [v if v is not None else float("nan") for v in values], where="post", label=name, color=color)
    kv = [r[columns.index("kv_cache_usage")] for r in rows]
    if any(v is not None for v in kv):
        kv_ax.step(t, [v if v is not None else float("nan") for v in kv], where="post", color="tab:green")
    count_ax.set_ylabel("requests (server)")
    count_ax.legend()
    kv_ax.set_ylabel("KV-cache use (0..1)")
    kv_ax.set_xlabel("seconds since the first sample")
    for ax in (count_ax, kv_ax):
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    fig.suptitle(f"the server's own figures (/metrics) — {label}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def slo_search(path: Path, search: dict[str, Any]) -> None:
    """--search-rate: each target's figure against the probe's rate (passing probes filled, failing ones hollow), its
    limit as a dashed line, and the rate found as a vertical line."""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter

    targets = search["targets"]
    fig, axes = plt.subplots(len(targets), 1, figsize=(9, 3.5 * len(targets)), squeeze=False)
    probes = sorted(search["probes"], key=lambda p: p["rate"])
    for ax, target in zip(axes[:, 0], targets):
        name = target["name"]
        points = [(p["rate"], p[name], p["passed"]) for p in probes if p.get(name) is not None]
        if points:
            ax.plot([x for x, _, _ in points], [y for _, y, _ in points], color="tab:blue", alpha=0.4)
            for passed in (True, False):
                chosen = [(x, y) for x, y, ok in points if ok is passed]
                if chosen:
                    ax.scatter([x for x, _ in chosen], [y for _, y in chosen], label="passed" if passed else "missed",
                               facecolors="tab:green" if passed else "none", edgecolors="tab:green" if passed else "tab:red")
        ax.axhline(target["limit_ms"], color="tab:red", linestyle="--", label=f"target {target['limit_ms']:g} ms")
        if search["max_sustainable_rate"] is not None:
            ax.axvline(search["max_sustainable_rate"], color="tab:gray", linestyle=":",
                       label=f"found {search['max_sustainable_rate']:.4g}/s")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 20, not 2x10^1
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("request rate (req/s)")
        ax.set_ylabel(f"{name} (ms)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("latency against the request rate, with the SLO targets")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def accuracy(path: Path, levels: list[dict[str, Any]]) -> None:
    """--score: each level's headline score against its load (left), its latencies against the same load (right)."""
    plt = _pyplot()
    open_loop = levels[0]["mode"] == "open"
    key = "request_rate" if open_loop else "concurrency"
    levels = sorted(levels, key=lambda lv: lv[key])
    x = [lv[key] for lv in levels]
    blocks = [lv["accuracy"] for lv in levels]
    metric = next((b["metric"] for b in blocks if b["metric"] is not None), "score")
    fig, (score_ax, latency_ax) = plt.subplots(1, 2, figsize=(12, 4.5))
    score_ax.plot(x, [b["value"] if b["value"] is not None else float("nan") for b in blocks], marker="o",
                  color="tab:purple")
    scale = next(((b.get("scale") or {}).get("scale") for b in blocks if b.get("scale")), None)
    score_ax.set_ylabel(metric + (f" ({scale})" if scale else ""))
    score_ax.set_title("timeouts, errors and cut-off replies count as misses", fontsize=9)
    score_ax.set_ylim(bottom=0)
    for name, color in (("ttft_ms", "tab:blue"), ("e2el_ms", "tab:orange")):
        for stat, style in (("median", "-"), ("p99", "--")):
            latency_ax.plot(x, [lv[name][stat] if lv[name][stat] is not None else float("nan") for lv in levels],
                            style, marker="o", color=color, label=f"{name.replace('_ms', '').upper()} {stat}")
    latency_ax.set_ylabel("ms")
    latency_ax.legend(fontsize=8)
    for ax in (score_ax, latency_ax):
        ax.set_xlabel("request rate (req/s)" if open_loop else "concurrency")
        ax.grid(alpha=0.3)
    fig.suptitle("accuracy and latency against the " + ("request rate" if open_loop else "concurrency"))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_plots(out_dir: Path, runs: list[tuple[dict[str, Any], LevelTally, Timeline | None]],
                search: dict[str, Any] | None = None) -> tuple[list[str], str | None]:
    """(files written, note). `runs`: (level summary, its tally, its timeline) per level; `search`: the run's
    slo_search block (--search-rate), plotted as slo_search.png."""
    try:
        _pyplot()
    except ImportError:
        return [], NO_MATPLOTLIB
    folder = out_dir / PERF_PLOTS
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for level, tally, course in runs:
        name = _safe(level["label"])
        latency_cdf(folder / f"latency_cdf_{name}.png", level["label"], tally)
        timeline(folder / f"timeline_{name}.png", level["label"], course)
        files += [str(folder / f"latency_cdf_{name}.png"), str(folder / f"timeline_{name}.png")]
        server = level.get("server_metrics")
        if server and server["series"]["rows"]:
            server_gauges(folder / f"server_{name}.png", level["label"], server)
            files.append(str(folder / f"server_{name}.png"))
    if len(runs) >= 2:
        sweep(folder / "sweep.png", [level for level, _, _ in runs])
        files.append(str(folder / "sweep.png"))
    scored = [level for level, _, _ in runs if level.get("accuracy")]
    if scored:
        accuracy(folder / "accuracy.png", scored)
        files.append(str(folder / "accuracy.png"))
    if search is not None and search["probes"]:
        slo_search(folder / "slo_search.png", search)
        files.append(str(folder / "slo_search.png"))
    return files, None
