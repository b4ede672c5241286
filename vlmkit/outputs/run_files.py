"""The files one (model, dataset) pair of `vlmkit run` writes besides the journal: predictions.jsonl and the
results.json document (its fields: vlmkit.outputs.schema; meanings: docs/outputs.md), and the rule that keeps a
better-informed results.json."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key
from vlmkit.outputs.streamed import atomic_file
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


CHUNK = 4096  # rows whose cells are taken from the tables at a time while predictions.jsonl is written


def write_predictions(
    path: Path, keys: list[str], rows: pd.DataFrame, records: Mapping[str, dict], evaluation: EvalResult | None,
    journalled_line: Callable[[str, dict[str, Any] | None], str | None] | None = None,
) -> None:
    """One line per row in dataset order: its journal record (or `not_run`), its other TSV columns as metadata, and
    the scorer's per-row fields. Written a line at a time (atomically), the tables read CHUNK rows at a time.

    A journal's records (vlmkit.run.journal.JournalRecords, anything with `line(key)`) are written from their lines
    as the journal has them, the added fields appended, without reading the record (the same text as encoding the
    merged record); so is a record for which `journalled_line(key, record)` gives its line."""
    scored = _Scored(evaluation, keys)
    passthrough = [c for c in rows.columns if c not in ("index", "answer")]
    raw_line = getattr(records, "line", None)
    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode  # one encoder for every line
    with atomic_file(path) as out:
        for start in range(0, len(keys), CHUNK):
            block = rows.iloc[start : start + CHUNK]
            columns = [block[c].tolist() for c in passthrough]  # column lists: cheaper than a dict per row
            metadata = zip(*columns) if passthrough else (() for _ in range(len(block)))
            lines = []
            for pos, index, meta in zip(range(start, start + len(block)), block["index"].tolist(), metadata):
                key = keys[pos]
                added = {"metadata": {c: plain(v) for c, v in zip(passthrough, meta)}, **scored.at(pos, key)}
                line = _spliced(key, records, added, raw_line, journalled_line, encode)
                if line is None:
                    record = records.get(key)
                    record = dict(record) if record is not None else {"index": index, "prediction": None,
                                                                      "error": {"kind": "not_run"}}
                    record.update(added)
                    line = encode(record)
                lines.append(line)
            out.write(("\n".join(lines) + "\n").encode("utf-8"))


def _spliced(key: str, records: Mapping[str, dict], added: dict[str, Any], raw_line: Callable[[str], str] | None,
             journalled_line: Callable[[str, dict[str, Any] | None], str | None] | None,
             encode: Callable[[Any], str]) -> str | None:
    """key's journal line with `added` spliced in, when that is the text encoding the merged record gives; None
    when the record must be encoded (no line, a field of `added` in it, escapes another encoder may have made)."""
    if raw_line is not None:
        if key not in records:
            return None
        line = raw_line(key)
        if "\\u" in line or any(f'"{name}": ' in line for name in added):  # maybe a field that collides: encode
            return None
    elif journalled_line is not None:
        record = records.get(key)
        line = journalled_line(key, record)
        if line is None or added.keys() & record.keys():  # type: ignore[union-attr]
            return None
    else:
        return None
    if not (line.endswith("}") and len(line) > 2):
        return None
    return f"{line[:-1]}, {encode(added)[1:]}"


class _Scored:
    """The scorer's per-row fields (its per-sample table but `index`) of each row: read by position a chunk at a
    time when the table lists the rows in dataset order (the usual case), else looked up by index key."""

    def __init__(self, evaluation: EvalResult | None, keys: list[str]) -> None:
        self.table = evaluation.per_sample if evaluation is not None else None
        self.fields: list[str] = []
        self.by_key: dict[str, dict[str, Any]] | None = None
        self.block: tuple[int, list[list[Any]]] | None = None
        if self.table is None:
            return
        self.fields = [c for c in self.table.columns if c != "index"]
        indices = self.table["index"].tolist()
        if len(indices) != len(keys) or any(index_key(i) != k for i, k in zip(indices, keys)):
            values = [[plain(v) for v in self.table[c].tolist()] for c in self.fields]
            self.by_key = {index_key(index): {c: column[i] for c, column in zip(self.fields, values)}
                           for i, index in enumerate(indices)}

    def at(self, pos: int, key: str) -> dict[str, Any]:
        if self.table is None:
            return {}
        if self.by_key is not None:
            return self.by_key.get(key, {})
        start = pos - pos % CHUNK
        if self.block is None or self.block[0] != start:
            part = self.table.iloc[start : start + CHUNK]
            self.block = start, [[plain(v) for v in part[c].tolist()] for c in self.fields]
        values = self.block[1]
        return {c: column[pos - start] for c, column in zip(self.fields, values)}


def usage_totals(records: Mapping[str, dict], keys: list[str]) -> Usage:
    usage = Usage(requests=0, input_tokens=0, output_tokens=0, reasoning_tokens=0)
    for key in keys:
        add_usage(usage, (records.get(key) or {}).get("usage"))
    return usage


def add_usage(usage: Usage, rec_usage: dict[str, Any] | None) -> None:
    """Add one record's usage (None: none reported) to the totals."""
    if rec_usage:
        usage["requests"] += 1
        for name in ("input_tokens", "output_tokens", "reasoning_tokens"):
            usage[name] += int(rec_usage.get(name) or 0)


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
                     run: dict[str, Any], judge: dict[str, Any], usage: Usage | None = None) -> dict[str, Any]:
    """results.json of one (model, dataset) pair (vlmkit.outputs.schema.Results, as the dict write_json takes);
    `outcome` is the runner's DatasetRun; usage: the totals where the caller has counted them already."""
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
        usage=usage if usage is not None else usage_totals(records, keys),
        judge=judge,
        message=outcome.message,
        notes=outcome.notes,
        files=outcome.files,
    ).to_dict()
