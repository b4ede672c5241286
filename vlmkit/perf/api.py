"""`run_perf(dataset, options)`: build every body, probe the server once, run each level, write the report.

The steps, in order: check the options; build the request bodies (before any clock starts); send one one-token
request to each server (an unreachable or non-OpenAI server stops the run here with one line); for each level
(concurrency or request rate) run its warm-up and measured phase in this process or in `--workers` processes,
each request's line written to perf_requests.jsonl as it finishes and its figures folded into the level's tally
(memory flat in the run's length: vlmkit.perf.collect); after each level write perf_summary.json/.csv, so a crash
or Ctrl-C keeps what was measured; finally draw the plots. `--api-base A,B,...` spreads the requests over several
servers (vlmkit.perf.balance); each level then has a `servers` block with each one's counts and figures. Ctrl-C stops the level in flight, keeps its figures, skips later levels, and
marks the summary `interrupted`.

A `--workers` process that fails loses its requests; the level keeps the figures of the processes that reported,
marked with the load they were measured at (`load.measured`, status `partial_load`; `failed` when none
reported), one line per failed worker goes to the console and into the summary's warnings, later levels still
run, and the run ends with status `workers_failed` (exit code 3 from the CLI).

The key in use is masked (vlmkit.core.secrets) wherever it could reach a file or the console: the command line (any
spelling of --api-key, or the key pasted into another argument), the URL, and server or worker messages.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from vlmkit.perf.client import Record, make_session, send
from vlmkit.perf.options import PerfInputError, PerfOptions, check_options
from vlmkit.perf.requests import PreparedRequests, build_requests, dumps, request_body
from vlmkit.perf.collect import Collector, RequestLines, append_parts, combine, combine_turns
from vlmkit.perf.sessions import TurnTally
from vlmkit.perf.trace import drift_block, trace_plans
from vlmkit.perf.prefix import prefix_summary
from vlmkit.perf.search import RateSearch, search_plans
from vlmkit.perf.server_metrics import Sampler
from vlmkit.perf.server_metrics import warning as metrics_warning
from vlmkit.perf.schedule import Arrivals, LevelPlan, Target, run_level
from vlmkit.perf.workers import WorkerRuns
from vlmkit.core.secrets import redacted_argv, scrub

if TYPE_CHECKING:
    from vlmkit.core.contracts import Dataset

CUT_SHORT = "run cut short by Ctrl-C: the figures cover the requests completed before it"
WORKERS_FAILED = (
    "worker process(es) failed: the levels marked partial_load were measured at a lower load than asked (their "
    "load.measured), those marked failed have no figures"
)


@dataclass
class PerfResult:
    """What a perf run produced: the summary (as written to perf_summary.json) and where the files are."""

    summary: dict[str, Any]
    out_dir: Path
    files: dict[str, str] = field(default_factory=dict)
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def levels(self) -> list[dict[str, Any]]:
        return self.summary["levels"]

    @property
    def worker_failures(self) -> list[dict[str, Any]]:
        """Every failed worker process, each with its level's label."""
        return [{"level": lv["label"], **f} for lv in self.levels for f in lv.get("worker_failures", [])]


def _say(options: PerfOptions, text: str, *, err: bool = False) -> None:
    if not options.quiet or err:
        print(scrub(text, options.secrets()), file=sys.stderr if err else sys.stdout, flush=True)


def target_for(options: PerfOptions) -> Target:
    """Where the requests go and their headers: the URL as the API classes read --api-base, the auth headers of the
    served model's class (`auth_headers(api_key)`, reached through the model registry)."""
    from vlm.registry import api_class_target, api_server_urls
    from vlmkit.core.registry import import_target

    if not options.api_base.strip():
        raise PerfInputError("--api-base is empty")
    try:
        urls = [chat for _, chat in api_server_urls(options.api_base)]
    except ValueError as exc:
        raise PerfInputError(f"--api-base {scrub(options.api_base, options.secrets())!r}: {exc}") from None
    model_class = import_target(options.api_class or api_class_target(), what=f"the class of model {options.model!r}")
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
               **model_class.auth_headers(options.api_key)}
    return Target(urls[0], headers, options.timeout, kernel_times=not options.read_times,
                  urls=urls if len(urls) > 1 else [])


def probe(target: Target, options: PerfOptions, url: str | None = None) -> dict[str, Any]:
    """One one-token streaming request to `url` (default: the target's first server); PerfInputError (one line)
    when the server cannot serve the run."""
    from vlmkit.formats.openai_chat import to_openai_messages

    url = url or target.url
    body = dumps(request_body(to_openai_messages("Hi"), {"max_tokens": 1}, options))
    rec = Record(-1, 0, 1, 0)

    async def go() -> None:
        session = make_session(1, options.timeout)
        try:
            await send(session, url, body, target.headers, rec)
        finally:
            await session.close()

    asyncio.run(go())
    secrets = options.secrets()
    url, kind, message = scrub(url, secrets), rec.error, scrub(rec.message or "", secrets)
    if kind is None:
        return {"ok": True, "usage": rec.output_tokens is not None, "e2el_ms": (rec.end - rec.start) / 1e6}
    if kind == "connection":
        raise PerfInputError(f"cannot reach {url}: {message} (is the server running, and is --api-base right?)")
    if kind == "timeout":
        raise PerfInputError(f"{url} sent no complete answer to a one-token request within {options.timeout:g} s")
    if kind in ("http_404", "http_405"):
        raise PerfInputError(
            f"{url} answered HTTP {rec.status} ({message}): not an OpenAI-compatible chat-completions endpoint, "
            f"or it does not serve --model {options.model!r}"
        )
    if kind in ("http_401", "http_403"):
        raise PerfInputError(f"{url} refused the request with HTTP {rec.status} ({message}): check --api-key")
    if kind.startswith("http_"):
        raise PerfInputError(f"{url} answered HTTP {rec.status} to a one-token streaming request: {message}")
    if kind == "not_sse":
        raise PerfInputError(
            f"{url} did not answer with a server-sent event stream ({message}): not an OpenAI-compatible streaming endpoint"
        )
    raise PerfInputError(f"{url} sent a broken stream to a one-token request ({kind}: {message})")


def level_plans(options: PerfOptions, rows: int) -> list[tuple[float, LevelPlan]]:
    """(level value, plan) per level. Each level sends the same sequence: warm-up requests 0..K-1, then the
    measured ones from K (request n uses row n % rows)."""
    k = options.warmup
    count = options.num_requests if options.num_requests is not None else (None if options.duration else rows)
    plans = []
    for i, value in enumerate(options.levels()):
        warm = range(k)
        if options.open_loop:
            arrivals = Arrivals(value, options.burstiness, options.seed + i, count, options.duration)
            plan = LevelPlan(
                label=f"rate={value:g}/s", open_loop=True, slots=options.max_concurrency or 0, warmup_ids=warm,
                ids=range(k, k + len(arrivals)), arrivals=arrivals,
            )
        else:
            plan = LevelPlan(
                label=f"c={int(value)}", open_loop=False, slots=int(value), warmup_ids=warm,
                ids=range(k, k + count) if count is not None else None, id_start=k,
                duration_ns=int(options.duration * 1e9) if options.duration else None,
            )
        plans.append((value, plan))
    return plans


def _run_one_level(plan: LevelPlan, prepared: PreparedRequests, target: Target, options: PerfOptions,
                   lines: IO[str], lines_path: Path) -> WorkerRuns:
    """The level in this process (its lines written to `lines` as requests finish) or in --workers processes
    (each writes a part file, appended to `lines` afterwards)."""
    servers = target.servers()
    if options.workers <= 1:
        stop = threading.Event()
        sink = RequestLines(lines, plan.label, prepared.index, options.secrets(), len(servers))
        run = run_level(plan, prepared, target, stop, collect=Collector(servers, options.slo, sink))
        return WorkerRuns([run], [], [plan])
    from vlmkit.perf.workers import SharedFlag, context, run_level_in_workers

    stop = SharedFlag(context())
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        outcome = run_level_in_workers(plan, prepared, target, options.workers, stop, slo=options.slo,
                                       lines_path=lines_path, secrets=options.secrets())
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    t0 = min((run.t0 for run in outcome.runs), default=0)
    append_parts(lines, lines_path, {run.worker: run.t0 for run in outcome.runs}, t0, len(outcome.shares))
    return outcome


def _level_status(outcome: WorkerRuns) -> str:
    return "complete" if not outcome.failures else ("partial_load" if outcome.runs else "failed")


def default_out_dir(model: str) -> Path:
    from vlmkit.outputs.layout import PERF_DIR, model_folder_name

    return Path("outputs") / PERF_DIR / model_folder_name(model) / datetime.now().strftime("%Y%m%d-%H%M%S")


def run_perf(dataset: Dataset, options: PerfOptions, *, video_frames: Any = None) -> PerfResult:
    """Load-test the server with requests built from `dataset` (any object with the runner's dataset protocol, as
    datasets_tsv's classes have it: name, file_md5, data, line(i), build_prompt(line), generation_params(line),
    info())."""
    from vlmkit.perf import report
    from vlmkit.perf.bottleneck import client_health
    from vlmkit.perf.balance import server_figures
    from vlmkit.perf.metrics import DEFINITIONS
    from vlmkit.perf.workers import failure_line, measured_load
    from vlmkit.outputs.layout import PERF_PLOTS, PERF_REQUESTS, PERF_SUMMARY, PERF_SUMMARY_CSV
    from vlmkit.outputs.provenance import host_info, now_iso, package_versions

    check_options(options)
    secrets = options.secrets()
    target = target_for(options)
    started = now_iso()
    total_rows = len(dataset.data)
    if total_rows == 0:
        raise PerfInputError(f"dataset {dataset.name}: no rows to send")
    if options.score:  # before the probe: a source without answers is refused before any request
        from vlmkit.perf.accuracy import score_refusal

        refusal = score_refusal(dataset, options)
        if refusal is not None:
            raise PerfInputError(refusal)
    servers = target.servers()
    probes = [probe(target, options, url) for url in servers]
    probed = probes[0] if len(probes) == 1 else {
        "ok": True, "usage": all(p["usage"] for p in probes), "e2el_ms": probes[0]["e2el_ms"], "servers": probes,
    }
    shown = scrub(", ".join(servers), secrets)
    _say(options, f"vlmkit perf: {shown} answer{'s' if len(servers) == 1 else ''} a streaming request"
                  + ("" if probed["usage"] else " (without usage: token counts will be estimates)"))
    sessions = getattr(dataset, "turn_rows", None)  # --sessions: every turn's body, a session's rows in order
    units = len(sessions) if sessions is not None else total_rows
    needed = None if options.duration or sessions is not None else options.warmup + (options.num_requests or total_rows)
    prepared = build_requests(dataset, options, needed, video_frames)
    prepared.keep_replies = options.score
    if sessions is not None:
        prepared.sessions, prepared.think_ns = sessions, int(options.think_time * 1e9)
    _say(options, f"vlmkit perf: {len(prepared)} request bodies built before timing ({prepared.total_bytes / 1e6:.2f} MB, "
                  f"{prepared.encoder}) in {prepared.build_s:.2f} s")

    traced = trace_plans(options, dataset) if options.trace_speed is not None else None  # bad input before any file
    out_dir = Path(options.out_dir) if options.out_dir else default_out_dir(options.model)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "summary_json": str(out_dir / PERF_SUMMARY),
        "summary_csv": str(out_dir / PERF_SUMMARY_CSV),
        "requests_jsonl": str(out_dir / PERF_REQUESTS),
    }
    dataset_info = dataset.info()
    summary: dict[str, Any] = {
        "schema_version": 1,
        "kind": "vlmkit-perf",
        "status": "running",
        "interrupted": False,
        "started_at": started,
        "completed_at": None,
        "argv": redacted_argv(sys.argv, secrets),
        "packages": {**package_versions()},
        "http_client": "vlmkit.perf.wire (asyncio, HTTP/1.1)",
        "chunk_times": "read by the client" if options.read_times else
        "kernel receive time (SO_TIMESTAMPNS) on plain-TCP connections where the platform gives it, else read time",
        "host": host_info(),
        "target": {"url": scrub(target.url, secrets), "model": options.model,
                   **({"urls": [scrub(u, secrets) for u in servers]} if len(servers) > 1 else {})},
        "dataset": {**dataset_info, "rows_used": len(prepared), "file_md5": dataset.file_md5},
        "options": options.public(),
        "bodies": {"rows": len(prepared), "bytes": prepared.total_bytes, "build_s": prepared.build_s, "encoder": prepared.encoder},
        "probe": probed,
        "definitions": DEFINITIONS,
        "levels": [],
        "warnings": [],
        "notes": [],
        "files": files,
    }
    plotted: list[tuple[dict[str, Any], Any, Any]] = []
    interrupted = workers_failed = False
    lines_path = out_dir / PERF_REQUESTS
    with open(lines_path, "w", encoding="utf-8") as lines:
        search = RateSearch(options.search, list(options.slo_targets)) if options.search is not None else None
        if search is not None:
            plans: Any = search_plans(search, options, summary["levels"])
        elif traced is not None:
            plans = [(v, p) for v, p, _ in traced]
        else:
            plans = level_plans(options, units)
        offered = {p.label: info for _, p, info in traced} if traced is not None else {}
        for value, plan in plans:
            what = f"{len(plan.ids)} requests" if plan.ids is not None else f"{options.duration:g} s"
            if plan.label in offered:
                what += f" on the trace's schedule ({offered[plan.label]['span_s']:.3g} s)"
            _say(options, f"vlmkit perf: level {plan.label}: measuring {what}"
                          + (f" after {options.warmup} warm-up requests" if options.warmup else ""))
            sampler = None
            if options.metrics_url:
                sampler = Sampler(options.metrics_url, options.metrics_interval, scrub(options.metrics_url, secrets))
                sampler.start()
            lines.flush()
            level_offset = lines.tell()  # --score: this level's lines start here
            try:
                outcome = _run_one_level(plan, prepared, target, options, lines, lines_path)
            except KeyboardInterrupt:  # between phases, outside the loop's own handler
                interrupted = True
                break
            finally:
                server_block = sampler.finish(secrets) if sampler is not None else None
            runs = outcome.runs
            t0 = min((run.t0 for run in runs), default=0)
            tally, timeline, server_tallies = combine(runs, options.slo)
            turns = combine_turns(runs)
            level_interrupted = any(run.interrupted for run in runs)
            figures = tally.summary()
            health, warnings = client_health(runs, open_loop=plan.open_loop, requested_rate=value if plan.open_loop else None)
            load = measured_load(plan, value, outcome)
            failed = [failure_line(plan.label, f, load) for f in outcome.failures]
            level = {
                "label": plan.label,
                "mode": "open" if plan.open_loop else "closed",
                "concurrency": None if plan.open_loop else int(value),
                "request_rate": value if plan.open_loop else None,
                "burstiness": options.burstiness if plan.open_loop else None,
                "max_concurrency": options.max_concurrency if plan.open_loop else None,
                "status": _level_status(outcome),
                "load": load,
                "worker_failures": [{**f.to_dict(), "reason": scrub(f.reason, secrets)} for f in outcome.failures],
                "warmup_requests": sum(run.warmup for run in runs),
                "interrupted": level_interrupted,
                **figures,
                "t0_monotonic_ns": t0,
                "client": health,
                "warnings": [scrub(w, secrets) for w in failed] + warnings,
            }
            if len(servers) > 1:
                level["servers"] = server_figures([scrub(u, secrets) for u in servers], server_tallies)
            if sessions is not None:
                level["sessions"] = (turns or TurnTally()).summary()
            if options.prefix_tokens:
                level["prefix"] = prefix_summary(combine_turns(runs, "prefix"))
            if server_block is not None:
                level["server_metrics"] = server_block
                if options.prefix_tokens:
                    level["prefix"]["server_hit_rate"] = server_block["prefix_cache_hit_rate"]
                unread = metrics_warning(server_block)
                if unread:
                    level["warnings"].append(unread)
            if options.score:
                from vlmkit.perf.accuracy import score_level

                lines.flush()
                level["accuracy"] = score_level(dataset, lines_path, level_offset, plan.label)
            if plan.label in offered:
                info = offered[plan.label]
                level["trace"] = drift_block(level, info["speed"], info["offered"], info["span_s"])
            summary["levels"].append(level)
            summary["warnings"] += [f"{plan.label}: {w}" for w in level["warnings"]]
            workers_failed = workers_failed or bool(failed)
            for warning in level["warnings"]:
                _say(options, f"WARNING {plan.label}: {warning}", err=True)
            plotted.append((level, tally, timeline))
            report.write_summary(out_dir, summary)
            if level_interrupted:
                interrupted = True
                break
    if search is not None:
        summary["slo_search"] = search.result()
    summary["interrupted"] = interrupted
    summary["status"] = "interrupted" if interrupted else ("workers_failed" if workers_failed else "complete")
    if interrupted:
        summary["notes"].append(CUT_SHORT)
    if workers_failed:
        summary["notes"].append(WORKERS_FAILED)
    if options.score:
        from vlmkit.perf.accuracy import MISSES_NOTE

        summary["notes"].append(f"--score: {MISSES_NOTE}")
    if options.plots:
        from vlmkit.perf.plots import write_plots

        plot_files, note = write_plots(out_dir, plotted, summary.get("slo_search"))
        if note:
            summary["notes"].append(note)
        if plot_files:
            files["plots"] = str(out_dir / PERF_PLOTS)
    summary["completed_at"] = now_iso()
    report.write_summary(out_dir, summary)
    if summary["levels"]:
        _say(options, report.console_table(summary["levels"]))
        for level in summary["levels"]:
            if level.get("sessions"):
                _say(options, report.turns_table(level))
            for line in report.extra_lines(level):
                _say(options, line)
    if search is not None:
        _say(options, f"vlmkit perf: highest sustainable rate within the targets: {summary['slo_search']['verdict']}")
    for note in summary["notes"]:
        _say(options, f"note: {note}")
    _say(options, f"vlmkit perf: results in {out_dir}")
    return PerfResult(summary, out_dir, files, interrupted, list(summary["warnings"]))

