"""The self-contained HTML page: the data as one JSON block, the template (page.html, page.css, page.js, package
data) around it. No server and no network: it opens from disk, thumbnails and plots are data URLs, and the
original images are linked by their file path.

Samples are stored compactly (the keys page.js reads): i index, v verdict, c category, q prompt text, m media
([type, thumbnail id or null, path]), p reply, r reasoning, x extracted answer, h how it was read (`method`),
t target, s per-row score, g circular group hit, e error, j judge's analysis, o a GUI grounding click ({pt: [x, y],
box: [x0, y0, x1, y1]}, fractions of the first image: drawn over its thumbnail). Thumbnails live once in `images`
(id -> data URL) however many samples show them.

Long texts are cut to the sample's share of the page (vlmkit.report.cuts; `sample_text_budget`), each ending with a
note of where the whole text is; k holds the whole length in characters of each text cut (key -> length).
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from vlmkit.report.cuts import cut_texts
from vlmkit.report.diff import Diff
from vlmkit.report.frame_curve import Curve, curves_payload
from vlmkit.report.perf_runs import LEVEL_FIGURES, PerfRun
from vlmkit.report.runs import ReportInputError, Run
from vlmkit.core.cells import index_key
from vlmkit.report.samples import WRONG, Sample, read_records, to_sample, verdict
from vlmkit.report.table import Row, legend
from vlmkit.report.thumbs import Thumbnails
from vlmkit.report.video_modes import ModeComparison, modes_payload

SAMPLE_MODES = ("all", "wrong", "none")
PAGE_TARGET = 9_600_000  # bytes a page aims at when the thumbnail size is chosen for it
MIN_THUMB_BUDGET = 2_000_000  # what thumbnails get however much text the page holds
CODE_BYTES = 100_000  # the template, tables and run blocks, roughly
# The bytes of text a sample may show (prompt, reply, reasoning, judge, error, extracted answer, target): its share of
# what the page leaves for samples, less the rest of its entry (keys, verdict, category, media paths: SAMPLE_KEYS),
# within these bounds. A 4,000-sample page gives each 1,625 bytes (the text of tools/bench_report.py's MCQ samples
# is 0.9 KB at most: none is cut), so that even 4,000 samples whose every text is long stay within PAGE_TARGET with
# their thumbnails; a page of up to ~230 samples gives each 32 KB.
PAGE_TEXT = PAGE_TARGET - MIN_THUMB_BUDGET - CODE_BYTES
# The most samples one run embeds: predictions.jsonl is read a record at a time and only these become samples, so
# that a run of a million rows makes a page of the same size, in the same memory, as one of 4,000; the page says
# how many it shows and links the predictions file that holds them all (4,000: tools/bench_report.py's page, drawn
# in well under a second).
SAMPLE_CAP = 4_000
SAMPLE_KEYS = 250
SAMPLE_TEXT_MIN = 1_000
SAMPLE_TEXT_MAX = 32_000


def _plain(value: Any) -> Any:
    """JSON-safe: NaN/inf -> None (the page must parse as strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _text(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return _plain(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def sample_text_budget(samples: int) -> int:
    """The bytes of text each sample may show in a page that embeds this many samples."""
    return max(SAMPLE_TEXT_MIN, min(SAMPLE_TEXT_MAX, PAGE_TEXT // max(1, samples) - SAMPLE_KEYS))


_CUTTABLE = ("q", "p", "r", "j", "e", "x", "t")  # the entry's free texts


def sample_entry(sample: Sample, thumbs: Thumbnails, *, text_budget: int = SAMPLE_TEXT_MAX,
                 source: Path | str = "predictions.jsonl") -> dict[str, Any]:
    """A sample as page.js reads it; texts past text_budget bytes are cut, naming source (the run's
    predictions.jsonl) as where the whole text is."""
    entry: dict[str, Any] = {
        "i": str(sample.index),
        "v": sample.verdict,
        "c": sample.category,
        "q": sample.prompt_text(),
        "m": [[kind, thumbs.add(value) if kind == "image" else None, value] for kind, value in sample.media()],
        "p": sample.prediction,
        "r": sample.reasoning,
        "x": _text(sample.extracted),
        "h": sample.method,
        "t": _text(sample.target),
        "s": _plain(sample.score),
        "g": sample.group_hit,
        "e": sample.error,
        "j": sample.judge,
        "o": _click_entry(sample),
        "l": sample.bars.entry() if sample.bars is not None else None,  # --mcq-mode: option bars (report.option_bars)
    }
    texts, whole = cut_texts({k: entry[k] for k in _CUTTABLE}, text_budget, path=str(source), index=sample.index)
    entry.update(texts)
    if whole:
        entry["k"] = whole
    return {k: v for k, v in entry.items() if v not in (None, [], "")}


def _click_entry(sample: Sample) -> dict[str, Any] | None:
    click = sample.click
    if click is None:
        return None
    return {k: list(v) for k, v in (("pt", click.point), ("box", click.box)) if v is not None}


def _fraction_of_max(run: Run, name: str, value: float) -> float | None:
    """Where value sits between 0 and its scale's maximum (the breakdown's bars); None when unknown."""
    scale = run.figure_scale(name)
    top = {"fraction": 1.0, "percent": 100.0}.get(scale.kind) if scale else None
    if scale is not None and scale.kind == "points":
        top = scale.out_of
    if not top:
        return None
    return max(0.0, min(1.0, value / top))


def breakdown_block(run: Run) -> dict[str, Any] | None:
    """results.json's breakdown turned so that figures are rows and splits columns (tables VLMEvalKit writes
    one row per split with a column per category: wide for MMBench's 26 categories)."""
    records = run.scoring.get("breakdown")
    if not isinstance(records, list) or not records:
        return None
    records = [r for r in records if isinstance(r, dict)]
    splits = [str(r.get("split", "all")) for r in records]
    names: list[str] = []
    for record in records:
        names += [k for k in record if k != "split" and k not in names]
    rows = []
    for name in names:
        cells = []
        for record in records:
            value = record.get(name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                cells.append(None)
                continue
            scale = run.figure_scale(name)
            display = scale.format(value) if scale else f"{value:g}"
            cells.append([value, display, _fraction_of_max(run, name, value)])
        rows.append([name, cells])
    return {"columns": splits, "rows": rows}


def _run_entry(row: Row, ident: str) -> dict[str, Any]:
    run, scale = row.run, row.run.scale
    scoring_counts = run.scoring.get("counts") if isinstance(run.scoring.get("counts"), dict) else {}
    return {
        "id": ident,
        "model": run.model,
        "dataset": run.dataset,
        "metric": run.metric,
        "value": _plain(run.value),
        "display": row.display,
        "ci95": row.ci95,
        "vs_best_p": _plain(row.vs_best.p_value) if row.vs_best else None,
        "vlmevalkit": _vlmevalkit_entry(row),
        "scale": row.scale_label,
        "hib": scale.higher_is_better if scale else True,
        "n": run.n,
        "done": run.counts.get("completed"),
        "errors": run.counts.get("inference_errors"),
        "unparsed": scoring_counts.get("unread", scoring_counts.get("unparsed")),  # after any judge
        "status": run.status,
        "best": row.best,
        "latest": run.latest,
        "completed": (run.completed_at or "")[:19].replace("T", " "),
        "file": str(run.path),
        "notes": [str(n) for n in run.results.notes + (run.scoring.get("notes") or [])],
        "errors_by_kind": run.results.errors_by_kind,
        "breakdown": breakdown_block(run),
        "samples": None,
        "sample_note": None,
    }


def _vlmevalkit_entry(row: Row) -> dict[str, Any] | None:
    """VLMEvalKit's figure for the same replies (results.json `scoring.vlmevalkit`); None where absent."""
    run = row.run
    if run.vlmevalkit is None:
        return None
    notes = run.vlmevalkit.get("notes")
    return {
        "value": _plain(run.vlmevalkit_value),
        "display": row.vlmevalkit,
        "metric": run.vlmevalkit_metric,
        "differing": run.vlmevalkit_differing,
        "source": run.vlmevalkit_source,
        "notes": [str(n) for n in notes] if isinstance(notes, list) else [],
    }


def _samples_for(run: Run, mode: str, keep: set[str], cap: int | None = None
                 ) -> tuple[list[Sample] | None, str | None]:
    """The samples of a run the page embeds (at most `cap`: the first in file order that the mode picks, the
    samples a diff lists first among them), and a note when some or all are left out. The file is read a record
    at a time; a record becomes a Sample only when it is embedded."""
    if mode == "none" and not keep:
        return None, "samples not embedded (--samples none)"
    if not run.predictions.is_file():
        return None, f"no {run.predictions.name} beside {run.path.name}"
    cap = SAMPLE_CAP if cap is None else cap
    warnings: list[str] = []
    total = wanted = 0
    chosen: list[tuple[bool, Sample]] = []  # (listed by the diff, sample), in file order
    try:
        for record in read_records(run.predictions, warnings):
            total += 1
            listed = index_key(record.get("index")) in keep
            if not listed and not (mode == "all" or (mode == "wrong" and verdict(record, run.metric) != "hit")):
                continue
            wanted += 1
            if len(chosen) >= cap:
                if not listed:
                    continue
                last = next((pos for pos in range(len(chosen) - 1, -1, -1) if not chosen[pos][0]), None)
                if last is None:
                    continue
                del chosen[last]  # a sample the diff lists takes the place of the last one only the mode picked
            chosen.append((listed, to_sample(record, run.metric)))
    except ReportInputError as exc:  # one bad file leaves its run without samples, not the page unwritten
        return None, str(exc)
    notes = list(warnings)  # fields of the wrong type, left out
    if wanted < total:
        notes.append(f"{wanted} of {total} samples embedded (--samples {mode}): right answers left out")
    if len(chosen) < wanted:
        notes.append(f"{len(chosen):,} of these {wanted:,} shown (a page embeds at most {cap:,} samples a run: the "
                     f"first in file order); every sample is in {run.predictions}")
    return [sample for _, sample in chosen], "; ".join(notes) or None


def _perf_entry(perf: PerfRun) -> dict[str, Any]:
    return {
        "model": perf.model,
        "dataset": perf.dataset,
        "status": perf.status,
        "completed": (perf.completed_at or "")[:19].replace("T", " "),
        "file": str(perf.path),
        "columns": ["level", "ok/sent", "status", *(name for name, _ in LEVEL_FIGURES)],
        "levels": [{k: _plain(v) for k, v in level.items()} for level in perf.levels],
        "notes": perf.notes,
        "plots": perf.plot_urls(),
    }


def _diff_entry(diff: Diff, ids: dict[int, str]) -> dict[str, Any]:
    return {
        "a": ids[id(diff.a)],
        "b": ids[id(diff.b)],
        "compared": diff.compared,
        "notes": diff.notes,
        "counts": dict(diff.counts()),
        "test": _test_entry(diff),
        # ia / ib: the sample's `i` in run a / b (absent when the sample is not in that run)
        "changes": [
            {k: v for k, v in (("ia", c.a and str(c.a.index)), ("ib", c.b and str(c.b.index))) if v is not None}
            | {"from": c.before, "to": c.after}
            for c in diff.changes
        ],
    }


def _test_entry(diff: Diff) -> dict[str, Any] | None:
    """The diff's paired test (vlmkit.report.paired.PairedTest) as page.js shows it; None where no sample was
    scored in both runs."""
    test = diff.test
    if test is None:
        return None
    return {"method": test.method, "n": test.n, "discordant": test.discordant, "a_only": test.a_only,
            "b_only": test.b_only, "p_value": _plain(test.p_value), "differs": test.differs,
            "summary": test.summary()}


def build_payload(
    rows: list[Row],
    *,
    perf: list[PerfRun] = (),  # type: ignore[assignment]
    diff: Diff | None = None,
    samples: str = "all",
    thumbs: Thumbnails | None = None,
    sources: list[str] = (),  # type: ignore[assignment]
    frame_curves: list[Curve] = (),  # type: ignore[assignment]
    video_modes: list[ModeComparison] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    """Everything page.js shows. samples: which samples each run embeds (all, wrong: every one not right, none);
    the samples a diff lists are always embedded. thumbs: the thumbnail maker; one without a size gets the
    largest whose thumbnails fit in what the samples' text leaves of PAGE_TARGET (vlmkit.report.thumbs)."""
    if samples not in SAMPLE_MODES:
        raise ValueError(f"samples must be one of {', '.join(SAMPLE_MODES)}")
    thumbs = thumbs if thumbs is not None else Thumbnails()
    ids = {id(row.run): f"r{pos}" for pos, row in enumerate(rows)}
    changed = {c.key for c in diff.changes} if diff else set()
    entries, chosen = [], []
    for row in rows:
        entry = _run_entry(row, ids[id(row.run)])
        keep = changed if diff and (row.run is diff.a or row.run is diff.b) else set()
        picked, entry["sample_note"] = _samples_for(row.run, samples, keep)
        if picked is not None and entry["sample_note"] and "every sample is in" in entry["sample_note"]:
            entry["all_samples"] = row.run.predictions.resolve().as_uri()  # the rest, one click away
        entries.append(entry)
        chosen.append(picked)
    budget = sample_text_budget(sum(len(picked or []) for picked in chosen))
    files = [str(row.run.predictions) for row in rows]  # where each run's whole texts are
    if thumbs.size is None:  # thumbnails get what the samples' text leaves of PAGE_TARGET
        blank = Thumbnails(0)
        text = sum(len(json.dumps(sample_entry(s, blank, text_budget=budget, source=source), ensure_ascii=False,
                                  separators=(",", ":")).encode("utf-8"))
                   for picked, source in zip(chosen, files) for s in picked or [])
        images = [value for picked in chosen for s in picked or [] for kind, value in s.media() if kind == "image"]
        thumbs.plan(images, budget=max(MIN_THUMB_BUDGET, PAGE_TARGET - CODE_BYTES - text))
    for entry, picked, source in zip(entries, chosen, files):
        entry["samples"] = None if picked is None else [
            sample_entry(s, thumbs, text_budget=budget, source=source) for s in picked
        ]
    return {
        "title": "vlmkit report",
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "sources": list(sources),
        "legend": legend(rows),
        "verdicts": {"wrong": sorted(WRONG)},
        "runs": entries,
        "images": thumbs.urls,
        "thumb_size": thumbs.size,
        "perf": [_perf_entry(p) for p in perf],
        "diff": _diff_entry(diff, ids) if diff else None,
        "frame_curves": curves_payload(list(frame_curves), ids),  # drawn as a line chart (page.js drawFrameCurves)
        "video_modes": modes_payload(list(video_modes), ids),
    }


def _asset(name: str) -> str:
    return resources.files("vlmkit.report").joinpath(name).read_text(encoding="utf-8")


def render(payload: dict[str, Any]) -> str:
    """The page's HTML text."""
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c")  # no `</script>` can end the data block early
    return Template(_asset("page.html")).substitute(
        title=payload["title"], css=_asset("page.css"), js=_asset("page.js"), data=data
    )


def write_page(path: Path, payload: dict[str, Any]) -> int:
    """Write the page atomically; returns its size in bytes."""
    from vlmkit.core.files import write_text_atomic

    text = render(payload)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)
    return len(text.encode("utf-8"))
