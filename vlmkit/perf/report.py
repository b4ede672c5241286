"""The files and the console table of a perf run.

- perf_summary.json: run identity, options (no key), the figures' definitions, one block per level;
- perf_summary.csv: one row per level, flat columns;
- perf_requests.jsonl: one line per request (warm-up ones marked, first), its own figures in ms, written as the
  request finishes (vlmkit.perf.collect): within a level the lines are in completion order (with --workers, one
  worker's lines after another's); `server` says which --api-base server it went to when there are several.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from vlmkit.core.files import write_text_atomic
from vlmkit.perf.client import Record
from vlmkit.perf.metrics import STATS, per_request
from vlmkit.outputs.console_table import format_table
from vlmkit.outputs.json_files import write_json
from vlmkit.core.spreadsheet import spreadsheet_text
from vlmkit.outputs.layout import PERF_SUMMARY, PERF_SUMMARY_CSV

LATENCIES = ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms")


def write_summary(out_dir: Path, summary: dict[str, Any]) -> None:
    write_json(out_dir / PERF_SUMMARY, summary)
    write_text_atomic(out_dir / PERF_SUMMARY_CSV, summary_csv(summary["levels"]))


def csv_row(level: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "level": level["label"],
        "mode": level["mode"],
        "concurrency": level.get("concurrency"),
        "request_rate": level.get("request_rate"),
        "measured": level["requests"]["measured"],
        "successful": level["requests"]["successful"],
        "failed": level["requests"]["failed"],
        "errors": ";".join(f"{k}={v}" for k, v in level["requests"]["errors_by_kind"].items()),
        "duration_s": level["duration_s"],
        "request_throughput": level["request_throughput"],
        "input_token_throughput": level["input_token_throughput"],
        "output_token_throughput": level["output_token_throughput"],
    }
    for name in LATENCIES:
        for stat in STATS:
            row[f"{name}_{stat}"] = level[name][stat]
    row["queued_ms_mean"] = level["queued_ms"]["mean"]
    row["queued_ms_p99"] = level["queued_ms"]["p99"]
    row["achieved_concurrency_mean"] = level["achieved_concurrency"]["mean"]
    row["achieved_concurrency_max"] = level["achieved_concurrency"]["max"]
    goodput = level.get("goodput") or {}
    row["goodput_per_s"] = goodput.get("per_s")
    row["goodput_fraction"] = goodput.get("fraction")
    cpu = [p["cpu_fraction"] for p in level["client"]["processes"]]
    row["client_cpu_max"] = max(cpu) if cpu else None
    row["warnings"] = len(level["warnings"])
    row["interrupted"] = level["interrupted"]
    load = level.get("load") or {}
    row["status"] = level.get("status", "complete")
    row["workers_failed"] = len(level.get("worker_failures", []))
    measured = load.get("measured") or {}
    row["measured_concurrency"] = measured.get("concurrency")
    row["measured_request_rate"] = measured.get("request_rate")
    row.update(workload_columns(level))
    return row


def workload_columns(level: dict[str, Any]) -> dict[str, Any]:
    """The CSV columns of the blocks a level has when its workload asked for them (sessions, trace, prefix, server
    metrics, a rate search)."""
    row: dict[str, Any] = {}
    sessions = level.get("sessions")
    if sessions is not None:
        turns = sessions["turns"]
        row["turns"] = len(turns)
        row["ttft_median_first_turn_ms"] = turns[0]["ttft_ms"]["median"] if turns else None
        row["ttft_median_last_turn_ms"] = turns[-1]["ttft_ms"]["median"] if turns else None
        growth = sessions.get("ttft_growth") or {}
        row["ttft_ms_per_1k_history_tokens"] = growth.get("ms_per_1k_prompt_tokens")
        row["sessions_cut_short"] = sessions["cut_short"]
    trace = level.get("trace")
    if trace is not None:
        row["trace_speed"] = trace["speed"]
        for stat in ("median", "p99", "max"):
            row[f"trace_drift_{stat}_ms"] = trace["drift_ms"][stat]
    prefix = level.get("prefix")
    if prefix is not None:
        row["ttft_median_shared_prefix_ms"] = prefix["shared"]["ttft_ms"]["median"]
        row["ttft_median_own_prefix_ms"] = prefix["unique"]["ttft_ms"]["median"]
    server = level.get("server_metrics")
    if server is not None:
        for key in ("running", "waiting", "kv_cache_usage"):
            gauge = server["gauges"].get(key) or {}
            row[f"server_{key}_mean"] = gauge.get("mean")
            row[f"server_{key}_max"] = gauge.get("max")
        row["server_prefix_cache_hit_rate"] = server["prefix_cache_hit_rate"]
    search = level.get("search")
    if search is not None:
        row["search_passed"] = search["passed"]
    accuracy = level.get("accuracy")
    if accuracy is not None:
        row["score_metric"] = accuracy["metric"]
        row["score_value"] = accuracy["value"]
        row["score_rows"] = accuracy["rows_scored"]
        row["score_answered"] = accuracy["answered"]
        row["score_cut_off"] = accuracy["cut_off"]
        row["score_errors"] = sum(accuracy["errors"].values())
    return row


def summary_csv(levels: list[dict[str, Any]]) -> str:
    rows = [csv_row(level) for level in levels]
    buffer = io.StringIO()
    if rows:
        fields = list(dict.fromkeys(key for row in rows for key in row))  # a level cut short may lack a block
        writer = csv.DictWriter(buffer, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: ("" if v is None else spreadsheet_text(v)) for k, v in row.items()} for row in rows)
    return buffer.getvalue()


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def request_line(level: str, rec: Record, index: Any, t0: int, *, servers: int = 1,
                 figures: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request's line in perf_requests.jsonl; `server` (its --api-base URL's position) when there are several.
    `figures`: the record's per_request(), when the caller has it already."""
    fig = figures or per_request(rec)
    line = {
        "level": level,
        "n": rec.n,
        "row": rec.row,
        "index": index,
        "warmup": rec.warmup,
        "worker": rec.worker,
        "ok": rec.ok,
        "error": rec.error,
        "message": rec.message,
        "status": rec.status or None,
        "sched_ms": _ms((rec.sched - t0) / 1e6),
        "start_ms": _ms((rec.start - t0) / 1e6) if rec.start else None,
        "queued_ms": _ms(fig["queued_ms"]),
        "ttft_ms": _ms(fig["ttft_ms"]),
        "tpot_ms": _ms(fig["tpot_ms"]),
        "e2el_ms": _ms(fig["e2el_ms"]),
        "itl_ms": [round(g, 3) for g in fig["itl_ms"]],
        "chunks": len(rec.chunks),
        "input_tokens": rec.input_tokens,
        "output_tokens": fig["output_tokens"],
        "output_tokens_source": fig["output_tokens_source"],
        "max_tokens": rec.max_tokens,
    }
    if servers > 1:
        line["server"] = rec.server
    if rec.group is not None:  # --prefix-share: whether its prompt starts with the shared prefix
        line["shared_prefix"] = bool(rec.group)
    if rec.turn is not None:  # --sessions: n is the session's number, turn its request's place in it (0 = first)
        line["turn"] = rec.turn
    if rec.reply is not None:  # --score: the answer's text, scored at the level's end (vlmkit.perf.accuracy)
        line["reply"] = "".join(rec.reply)
        line["cut_off"] = rec.cut_off
    return line


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # built once: lines are written per request


def dumps_line(line: dict[str, Any]) -> str:
    return _LINE_ENCODER.encode(line) + "\n"


def _load_mark(level: dict[str, Any]) -> str:
    """` (at c=2: 1 of 2 workers failed)` for a level whose figures were measured at a lower load than asked."""
    failures = level.get("worker_failures") or []
    if not failures:
        return ""
    load = level["load"]
    processes = f"{len(failures)} of {load['processes']['asked']} workers failed"
    if not load["processes"]["measured"]:
        return f" (failed: {processes})"
    measured = load["measured"]
    at = f"c={measured['concurrency']}" if "concurrency" in measured else f"rate={measured['request_rate']:g}/s"
    return f" (at {at}: {processes})"


def console_table(levels: list[dict[str, Any]]) -> str:
    rows = []
    for level in levels:
        r = level["requests"]
        rows.append(
            {
                "level": level["label"] + _load_mark(level) + (" (cut short)" if level["interrupted"] else ""),
                "ok/sent": f"{r['successful']}/{r['measured']}",
                "req/s": level["request_throughput"],
                "out tok/s": level["output_token_throughput"],
                "TTFT mean": level["ttft_ms"]["mean"],
                "TTFT p99": level["ttft_ms"]["p99"],
                "TPOT mean": level["tpot_ms"]["mean"],
                "TPOT p99": level["tpot_ms"]["p99"],
                "ITL p99": level["itl_ms"]["p99"],
                "E2EL mean": level["e2el_ms"]["mean"],
                "E2EL p99": level["e2el_ms"]["p99"],
                "conc": level["achieved_concurrency"]["mean"],
                "goodput/s": (level.get("goodput") or {}).get("per_s"),
                "score": (level.get("accuracy") or {}).get("formatted"),
            }
        )
    columns = list(rows[0]) if rows else []
    for optional in ("goodput/s", "score"):
        if rows and all(row[optional] is None for row in rows):
            columns.remove(optional)
    return format_table(rows, columns) + "\n(latencies in ms; figures over successful requests; definitions in perf_summary.json)"


def turns_table(level: dict[str, Any]) -> str:
    """--sessions: TTFT and prompt tokens per turn of the level's conversations, and how TTFT grows with history."""
    block = level["sessions"]
    rows = [{"turn": t["turn"], "ok/sent": f"{t['successful']}/{t['requests']}",
             "prompt tok": t["prompt_tokens_mean"], "TTFT median": t["ttft_ms"]["median"],
             "TTFT p99": t["ttft_ms"]["p99"]} for t in block["turns"]]
    text = f"{level['label']}: per turn of its sessions\n" + format_table(rows, list(rows[0]) if rows else ["turn"])
    growth = block.get("ttft_growth")
    if growth and growth["ms_per_1k_prompt_tokens"] is not None:
        text += (f"\nTTFT median grows {growth['ms_per_1k_prompt_tokens']:.3g} ms per 1,000 prompt tokens of history "
                 f"(last turn / first: {growth['last_over_first']:.3g}x)")
    if block.get("cut_short"):
        text += f"\n{block['cut_short']} session(s) ended at a failed turn"
    return text


def _fmt(value: float | None, spec: str = ".3g") -> str:
    return "-" if value is None else format(value, spec)


def extra_lines(level: dict[str, Any]) -> list[str]:
    """One console line each for a level's trace drift, prefix groups and server metrics, where it has them."""
    label = level["label"]
    lines = []
    trace = level.get("trace")
    if trace:
        d = trace["drift_ms"]
        lines.append(f"{label}: sent schedule vs the trace: drift p50 {_fmt(d['median'])} ms, p99 {_fmt(d['p99'])} ms, "
                     f"max {_fmt(d['max'])} ms over {trace['requests']} requests ({_fmt(trace['span_s'])} s at "
                     f"x{trace['speed']:g})")
    prefix = level.get("prefix")
    if prefix:
        shared, unique = prefix["shared"], prefix["unique"]
        text = (f"{label}: TTFT median shared prefix {_fmt(shared['ttft_ms']['median'])} ms ({shared['successful']} "
                f"requests), own prefix {_fmt(unique['ttft_ms']['median'])} ms ({unique['successful']})")
        if "server_hit_rate" in prefix:
            text += f"; server's prefix-cache hit rate {_fmt(prefix['server_hit_rate'], '.1%')}"
        lines.append(text)
    accuracy = level.get("accuracy")
    if accuracy:
        errors = sum(accuracy["errors"].values())
        scale = (accuracy.get("scale") or {}).get("scale")
        headline = (f"{accuracy['metric']} {accuracy['formatted']}" + (f" ({scale})" if scale else "")
                    if accuracy["metric"] is not None else "nothing scored")
        lines.append(f"{label}: score {headline} on {accuracy['rows_scored']} rows: {accuracy['answered']} answered, "
                     f"{errors} errors, {accuracy['cut_off']} cut off (errors and cut-off replies scored as misses)")
    server = level.get("server_metrics")
    if server and server["samples"]:
        parts = [f"{k} mean {_fmt(g['mean'])} max {_fmt(g['max'])}" for k, g in server["gauges"].items()]
        parts += [f"{k} {_fmt(v)}/s" for k, v in server["per_s"].items()]
        if server["prefix_cache_hit_rate"] is not None:
            parts.append(f"prefix-cache hit rate {_fmt(server['prefix_cache_hit_rate'], '.1%')}")
        lines.append(f"{label}: server ({server['samples']} samples): " + ", ".join(parts))
    return lines
