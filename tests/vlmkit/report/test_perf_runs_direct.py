"""vlmkit.report.perf_runs: perf_summary.json files under the work dirs read as rows per level, filtered by model
and dataset patterns, newest first; on hand-written summaries."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from vlmkit.outputs.layout import PERF_PLOTS, PERF_SUMMARY
from vlmkit.report.perf_runs import collect_perf, load_perf

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _summary(folder: Path, model: str, dataset: str, completed_at: str | None, levels: list[dict], **extra) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"kind": "vlmkit-perf", "status": "success", "completed_at": completed_at, "target": {"model": model},
            "dataset": {"name": dataset}, "levels": levels, **extra}
    path = folder / PERF_SUMMARY
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


LEVEL = {
    "label": "c=4", "requests": {"successful": 9, "measured": 10}, "request_throughput": 12.5,
    "output_token_throughput": 400.0, "ttft_ms": {"mean": 20.0, "p99": 31.5}, "tpot_ms": {"mean": 5.0, "p99": 6.0},
    "itl_ms": {"p99": 7.0}, "e2el_ms": {"mean": 180.0, "p99": 250.0}, "achieved_concurrency": {"mean": 3.9},
}


def test_a_summary_becomes_one_row_per_level_with_its_figures(tmp_path: Path):
    path = _summary(tmp_path / "a", "qwen", "synthetic", "2026-11-20T10:00:00+00:00",
                    [LEVEL, {"label": 16, "interrupted": True, "status": "failed", "ttft_ms": {"mean": True},
                             "request_throughput": "fast"}, "not a level"],
                    notes=["warm-up dropped"], warnings=["server capped max_tokens"])
    (path.parent / PERF_PLOTS).mkdir()
    (path.parent / PERF_PLOTS / "b.png").write_bytes(PNG)
    (path.parent / PERF_PLOTS / "a.png").write_bytes(PNG)
    (path.parent / PERF_PLOTS / "notes.txt").write_text("not a plot")
    run = load_perf(path)
    assert run is not None and (run.model, run.dataset, run.status) == ("qwen", "synthetic", "success")
    assert run.levels[0] == {
        "level": "c=4", "ok/sent": "9/10", "status": "complete", "req/s": 12.5, "out tok/s": 400.0,
        "TTFT mean": 20.0, "TTFT p99": 31.5, "TPOT mean": 5.0, "TPOT p99": 6.0, "ITL p99": 7.0, "E2EL mean": 180.0,
        "E2EL p99": 250.0, "conc": 3.9,
    }
    # a level cut short; figures of the wrong type (a boolean, a text) are no figures
    second = run.levels[1]
    assert (second["level"], second["ok/sent"], second["status"]) == ("16 (cut short)", "?/?", "failed")
    assert second["TTFT mean"] is None and second["req/s"] is None and len(run.levels) == 2
    assert run.notes == ["warm-up dropped", "server capped max_tokens"]
    assert [p.name for p in run.plots] == ["a.png", "b.png"]
    assert run.plot_urls()[0] == ("a.png", "data:image/png;base64," + base64.b64encode(PNG).decode())


def test_files_that_are_not_perf_summaries_are_skipped(tmp_path: Path):
    (tmp_path / "x").mkdir()
    bad = tmp_path / "x" / PERF_SUMMARY
    bad.write_text("{not json", encoding="utf-8")
    assert load_perf(bad) is None
    bad.write_text(json.dumps({"kind": "vlmkit-results"}), encoding="utf-8")
    assert load_perf(bad) is None
    assert load_perf(tmp_path / "missing.json") is None
    bare = _summary(tmp_path / "y", "", "", None, [])
    run = load_perf(bare)
    assert run is not None and (run.model, run.dataset, run.levels, run.plots) == ("?", "?", [], [])
    assert collect_perf([tmp_path]) == [run]


def test_runs_are_collected_newest_first_and_filtered_by_pattern(tmp_path: Path):
    _summary(tmp_path / "w" / "1", "qwen-7b", "synthetic", "2026-11-20T10:00:00+00:00", [LEVEL])
    _summary(tmp_path / "w" / "2", "qwen-7b", "MMBench", "2026-11-22T10:00:00+00:00", [LEVEL])
    _summary(tmp_path / "w" / "3", "llava", "synthetic", "2026-11-21T10:00:00+00:00", [LEVEL])
    undated = _summary(tmp_path / "w" / "4", "llava", "MMBench", None, [LEVEL])
    every = collect_perf([tmp_path / "w"])
    assert [(r.model, r.dataset) for r in every] == [
        ("qwen-7b", "MMBench"), ("llava", "synthetic"), ("qwen-7b", "synthetic"), ("llava", "MMBench"),
    ]
    assert [r.dataset for r in collect_perf([tmp_path / "w"], models=["qwen-*"])] == ["MMBench", "synthetic"]
    assert [r.model for r in collect_perf([tmp_path / "w"], datasets=["synth*"])] == ["llava", "qwen-7b"]
    assert collect_perf([tmp_path / "w"], models=["qwen*"], datasets=["MM*"])[0].completed_at.startswith("2026-11-22")
    # a file named directly, and a root that does not exist
    assert [r.path for r in collect_perf([undated, tmp_path / "nowhere"])] == [undated]
