"""The files one (model, dataset) pair of `vlmkit run` writes besides the journal: predictions.jsonl and the
results.json document (its fields: vlmkit.outputs.schema; meanings: docs/outputs.md), and the rule that keeps a
better-informed results.json."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key
from vlmkit.core.files import write_text_atomic
from vlmkit.outputs.layout import RESULTS
from vlmkit.outputs.provenance import git_state, host_info, now_iso, package_versions
from vlmkit.outputs.schema import SCHEMA_VERSION, Counts, Results, UnreadableFile, Usage, read_results
from vlmkit.scoring.result import EvalResult


def plain(value: Any) -> Any:
    """JSON-friendly scalars (NaN -> None, numpy -> Python)."""
    if value is None or type(value) in (str, int, bool):  # most cells, at once
        return value
    if type(value) is float:
        return None if value != value else value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return value.item() if hasattr(value, "item") else value


def write_predictions(
    path: Path, keys: list[str], rows: pd.DataFrame, records: dict[str, dict], evaluation: EvalResult | None,
    journalled_line: Callable[[str, dict[str, Any] | None], str | None] | None = None,
) -> None:
    """One line per row in dataset order: its journal record (or `not_run`), its other TSV columns as metadata, and
    the scorer's per-row fields. A record for which `journalled_line(key, record)` gives the journal's JSON line
    (the run's Journal.line) is written from that line (the record encoded once, not twice), the added fields
    appended to it."""
    scored: dict[str, dict[str, Any]] = {}
    if evaluation is not None:
        table = evaluation.per_sample
        fields = [c for c in table.columns if c != "index"]
        values = [[plain(v) for v in table[c].tolist()] for c in fields]
        for i, index in enumerate(table["index"].tolist()):
            scored[index_key(index)] = {c: column[i] for c, column in zip(fields, values)}
    passthrough = [c for c in rows.columns if c not in ("index", "answer")]
    columns = [rows[c].tolist() for c in passthrough]  # column lists: cheaper than a dict per row from pandas
    metadata = zip(*columns) if passthrough else (() for _ in keys)
    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode  # one encoder for every line
    lines = []
    for key, index, meta in zip(keys, rows["index"].tolist(), metadata):
        record = records.get(key)
        added = {"metadata": {c: plain(v) for c, v in zip(passthrough, meta)}, **scored.get(key, {})}
        line = journalled_line(key, record) if journalled_line is not None else None
        if line is not None and line.endswith("}") and len(line) > 2 and not added.keys() & record.keys():
            lines.append(f"{line[:-1]}, {encode(added)[1:]}")  # the same text as encoding the merged record
            continue
        record = dict(record) if record is not None else {"index": index, "prediction": None,
                                                          "error": {"kind": "not_run"}}
        record.update(added)
        lines.append(encode(record))
    lines.append("")
    write_text_atomic(path, "\n".join(lines))


def usage_totals(records: dict[str, dict], keys: list[str]) -> Usage:
    usage = Usage(requests=0, input_tokens=0, output_tokens=0, reasoning_tokens=0)
    for key in keys:
        rec_usage = (records.get(key) or {}).get("usage")
        if rec_usage:
            usage["requests"] += 1
            for name in ("input_tokens", "output_tokens", "reasoning_tokens"):
                usage[name] += int(rec_usage.get(name) or 0)
    return usage


def better_results(path: Path, n_total: int, n_completed: int) -> int | None:
    """How many answers an existing results.json for the same rows holds, when that is more than n_completed."""
    try:
        counts = read_results(path).counts
    except UnreadableFile:
        return None
    completed = counts.get("completed")
    if counts.get("total") == n_total and completed is not None and completed > n_completed:
        return completed
    return None


def eval_refusal(run_dir: Path, label: str, n_total: int, n_completed: int) -> tuple[str, str] | None:
    """(status, message) when --mode eval must write nothing: no answer to score, or results.json already holds
    more answers for the same rows than the journals do now."""
    if n_completed == 0:
        return "no_answers", (f"{label}: no answer to score in {run_dir} (--mode eval scores journalled answers; "
                              "run --mode all or infer first)")
    held = better_results(run_dir / RESULTS, n_total, n_completed)
    if held is not None:
        return "kept", (f"{label}: {run_dir / RESULTS} holds {held} answers, the journals only "
                        f"{n_completed}; results not overwritten (run --mode all to ask for the rest)")
    return None


def results_document(outcome: Any, dataset_info: dict[str, Any], records: dict[str, dict], keys: list[str], *,
                     started: str, duration: float, truncated_cells: int, argv: list[str], model: dict[str, Any],
                     run: dict[str, Any], judge: dict[str, Any]) -> dict[str, Any]:
    """results.json of one (model, dataset) pair (vlmkit.outputs.schema.Results, as the dict write_json takes);
    `outcome` is the runner's DatasetRun."""
    return Results(
        schema_version=SCHEMA_VERSION,
        status=outcome.status,
        started_at=started,
        completed_at=now_iso(),
        duration_s=round(duration, 3),
        argv=argv,
        packages=package_versions(),
        git=git_state(Path(__file__).resolve().parents[2]),
        host=host_info(),
        model=model,
        dataset={**dataset_info, "limit": run.get("limit"), "n_evaluated": outcome.n_total},
        run={k: v for k, v in run.items() if k != "limit"},
        counts=Counts(
            total=outcome.n_total,
            completed=outcome.n_completed,
            inference_errors=outcome.n_errors,
            not_run=outcome.n_total - outcome.n_completed - outcome.n_errors,
            xlsx_cells_truncated=truncated_cells,
        ),
        errors_by_kind=outcome.errors,
        scoring=outcome.evaluation.to_dict() if outcome.evaluation is not None else None,
        scoring_failures=outcome.scoring_failures,
        usage=usage_totals(records, keys),
        judge=judge,
        message=outcome.message,
        notes=outcome.notes,
        files=outcome.files,
    ).to_dict()
