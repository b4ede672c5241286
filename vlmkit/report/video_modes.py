"""How a video benchmark's score moves with the way the video reaches the model: the temporal-encoding question.

A served model can get a clip as separate frames (`--video-mode frames`, the default: N JPEG images, no timing) or
as one `video_url` part (the server samples and encodes it, with its own temporal position encoding); a local model
takes the frames as a video natively where its processor has a video path. Served models lose temporal encoding
when frames go as separate images (lmms-eval #1266): this section measures, on a user's own runs, whether it shows.

Runs compared (from results.json and predictions.jsonl alone):
- a run's mode (`run_mode`): `frames` or `video_url` for a served model (`model.settings.base_url` recorded; the
  mode is `model.settings.video_mode`, else `model.kwargs.video_mode`, else frames), `local` for one of the kit's
  local models (its weights recorded: `model.settings.local_path` or `model_path`);
- its benchmark: `dataset.video.benchmark` for a run of a frame-budget sweep, else the dataset's name; its budget
  as vlmkit.report.frame_curve reads it (a `video_url` run's budget does not bound what the server samples, so it
  pairs with a run at any budget; frames and local runs pair at the same budget only);
- pairs: the same served model in `frames` and in `video_url`; and each served run against each local run of the
  same benchmark (the same rows: the test uses the samples both scored). Of several runs of one (model, mode,
  budget) the latest counts; a run set aside (results.staleN.json: a rerun with another --video-mode writes over the
  same folder) is used, so both modes of one work dir are found.
Each pair gets both figures, the paired test of B against A (vlmkit.report.diff.paired_test: McNemar's exact test
on hits, a paired bootstrap on graded scores) and one line saying what it means for the question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlmkit.report.diff import paired_test
from vlmkit.report.export import _md_escape, _md_table, fixed_width
from vlmkit.report.frame_curve import RunBudget, run_budget
from vlmkit.report.paired import PairedTest
from vlmkit.report.runs import Run
from vlmkit.report.samples import read_samples
from vlmkit.report.table import display_value

FRAMES, VIDEO_URL, LOCAL = "frames", "video_url", "local"
MODES = (FRAMES, VIDEO_URL)


def run_mode(run: Run) -> str | None:
    """`frames`, `video_url` or `local` for a run of a video dataset; None for any other run."""
    dataset = run.results.dataset or {}
    if dataset.get("kind") != "video" and not isinstance(dataset.get("video"), dict):
        return None
    model = run.results.model or {}
    settings = model.get("settings") if isinstance(model.get("settings"), dict) else {}
    kwargs = model.get("kwargs") if isinstance(model.get("kwargs"), dict) else {}
    served = bool(settings.get("base_url") or kwargs.get("api_base"))
    if not served:  # the kit's local models record their weights (a user's own class: neither, left out)
        return LOCAL if settings.get("local_path") or settings.get("model_path") or kwargs.get("model_path") else None
    mode = settings.get("video_mode") or kwargs.get("video_mode") or FRAMES
    return mode if mode in MODES else None


@dataclass(frozen=True)
class ModeRun:
    run: Run
    mode: str
    benchmark: str
    budget: RunBudget | None

    @property
    def budget_label(self) -> str:
        if self.mode == VIDEO_URL:
            return "server's sampling"
        return self.budget.label if self.budget is not None else "budget not recorded"

    @property
    def label(self) -> str:
        return f"{self.run.model} ({self.mode}, {self.budget_label})"


@dataclass
class ModeComparison:
    """B against A on one benchmark: `test` None where no sample was scored in both."""

    benchmark: str
    a: ModeRun
    b: ModeRun
    test: PairedTest | None
    reading: str


def _mode_runs(runs: list[Run]) -> list[ModeRun]:
    latest: dict[tuple[Any, ...], ModeRun] = {}
    for run in runs:
        mode = run_mode(run)
        if mode is None or run.value is None:
            continue
        budget = run_budget(run)
        benchmark = budget.benchmark if budget is not None else run.dataset
        entry = ModeRun(run, mode, benchmark, budget)
        value = None if mode == VIDEO_URL or budget is None else (budget.key, budget.value)
        slot = (benchmark, run.model, mode, value)
        if slot not in latest or (run.completed_at or "") > (latest[slot].run.completed_at or ""):
            latest[slot] = entry
    return list(latest.values())


def _same_budget(a: ModeRun, b: ModeRun) -> bool:
    if VIDEO_URL in (a.mode, b.mode):
        return True
    if a.budget is None or b.budget is None:
        return False
    return (a.budget.key, a.budget.value) == (b.budget.key, b.budget.value)


def _reading(a: ModeRun, b: ModeRun, test: PairedTest | None) -> str:
    """One line on the temporal-encoding question for B against A."""
    what = {
        (FRAMES, VIDEO_URL): "one video_url part (the server samples and encodes the clip) against separate frames",
        (VIDEO_URL, FRAMES): "separate frames against one video_url part",
        (FRAMES, LOCAL): "the local model's own video path against the served model's separate frames",
        (VIDEO_URL, LOCAL): "the local model's own video path against the served model's video_url",
    }.get((a.mode, b.mode), f"{b.mode} against {a.mode}")
    if test is None:
        return f"{what}: no sample was scored in both runs; nothing to compare"
    gap = f"{test.mean_difference:+.4f} on {test.n} {test.unit}(s), p = {test.p_value:.3g}"
    if not test.differs:
        return (f"{what}: {gap}; inside the noise: these rows show no loss from how the video is sent "
                f"({test.discordant} discordant)")
    better = "gains" if test.mean_difference > 0 else "loses"
    return (f"{what}: {gap}; {b.mode} {better} beyond the noise, so how the frames reach the model "
            "(temporal encoding) matters on this benchmark")


def _compare(benchmark: str, a: ModeRun, b: ModeRun) -> ModeComparison:
    warnings: list[str] = []
    samples = []
    for side in (a, b):
        path = side.run.predictions
        samples.append({s.key: s for s in read_samples(path, side.run.metric, warnings)} if path.is_file() else {})
    test = paired_test(samples[0], samples[1])
    return ModeComparison(benchmark, a, b, test, _reading(a, b, test))


def video_mode_comparisons(runs: list[Run]) -> list[ModeComparison]:
    """The pairs of runs that differ in how the video reaches the model (module docstring), by benchmark."""
    entries = _mode_runs(runs)
    by_benchmark: dict[str, list[ModeRun]] = {}
    for entry in entries:
        by_benchmark.setdefault(entry.benchmark, []).append(entry)
    out = []
    for benchmark, group in sorted(by_benchmark.items()):
        group.sort(key=lambda e: (e.run.model, e.mode, e.budget_label))
        served = [e for e in group if e.mode != LOCAL]
        local = [e for e in group if e.mode == LOCAL]
        for a in (e for e in served if e.mode == FRAMES):
            for b in (e for e in served if e.mode == VIDEO_URL and e.run.model == a.run.model):
                if _same_budget(a, b):
                    out.append(_compare(benchmark, a, b))
        for a in served:
            for b in local:
                if _same_budget(a, b):
                    out.append(_compare(benchmark, a, b))
    return out


def _cells(c: ModeComparison) -> list[str]:
    test = c.test
    return [c.benchmark, c.a.label, display_value(c.a.run), c.b.label, display_value(c.b.run),
            "" if test is None else f"{test.mean_difference:+.4f}",
            "" if test is None else f"{test.a_only}/{test.b_only}",
            "" if test is None else f"{test.p_value:.3g}"]


HEADER = ["benchmark", "A", "score A", "B", "score B", "B - A", "A only/B only", "p"]


def modes_console(comparisons: list[ModeComparison]) -> str:
    """The console section; empty without a pair."""
    if not comparisons:
        return ""
    lines = ["video modes - frames, video_url and local models on the same rows (paired test of B against A)",
             fixed_width(HEADER, [_cells(c) for c in comparisons], {2, 4, 5, 6, 7})]
    lines += [f"{c.benchmark}: {c.a.label} -> {c.b.label}: {c.reading}" for c in comparisons]
    return "\n".join(lines)


def modes_markdown(comparisons: list[ModeComparison]) -> list[str]:
    """report.md's section (lines); none without a pair."""
    if not comparisons:
        return []
    out = ["## Video modes", "",
           "The same benchmark with the video sent as separate frames, as one `video_url` part, or to a local model; "
           "B - A on the samples both scored, with the paired test's p-value (McNemar on hits).", ""]
    out += _md_table(HEADER, [_cells(c) for c in comparisons], {2, 4, 5, 6, 7}) + [""]
    out += [f"- {_md_escape(f'{c.a.label} -> {c.b.label}: {c.reading}')}" for c in comparisons] + [""]
    return out


def _side(entry: ModeRun, run_ids: dict[int, str]) -> dict[str, Any]:
    return {"label": entry.label, "mode": entry.mode, "display": display_value(entry.run),
            "run": run_ids.get(id(entry.run))}


def modes_payload(comparisons: list[ModeComparison], run_ids: dict[int, str]) -> list[dict[str, Any]]:
    """What page.js shows (`video_modes`): one entry per pair."""
    out = []
    for c in comparisons:
        test = c.test
        out.append({
            "benchmark": c.benchmark,
            "a": _side(c.a, run_ids),
            "b": _side(c.b, run_ids),
            "difference": None if test is None else test.mean_difference,
            "a_only": None if test is None else test.a_only,
            "b_only": None if test is None else test.b_only,
            "p_value": None if test is None else test.p_value,
            "method": None if test is None else test.method,
            "reading": c.reading,
        })
    return out
