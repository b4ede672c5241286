"""Volcengine Ark's evaluation output records for conversation datasets (`<run_dir>/ark_output.jsonl`,
vlmkit.outputs.layout.ARK_OUTPUT).

Ark's evaluation writes one JSON line per session (Ark's "评测数据集格式说明", the jsonl output examples); vlmkit
writes the same record for every row of a dataset whose `output_format` is "ark" (the custom
conversation formats: Ark jsonl/Excel-as-csv, EvalScope general_qa):

    {"session_id": 0,
     "messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "0+1"},
                  {"role": "assistant", "reference_response": "1",
                   "responses": [{"parameters": {...},
                                  "usage": {"prompt_tokens": 13, "completion_tokens": 577, "total_tokens": 590},
                                  "content": "<the model's reply>", "score": 10.0, "analysis": "..."}]}]}

- `session_id`: the rows' `session_id` values when every row has one and no two agree (as whole numbers where they
  are), else the row's index (0..n-1 for a file without ids, as Ark numbers them; a row a .meta.json repeated has an
  index of its own).
- `messages`: the row's conversation as the file gave it (`messages`: system, user and earlier assistant turns with
  their `content`; a row without one: its system prompt and question), then the assistant turn holding
  `reference_response` (the row's answer; null when it has none - inference only; a list when the row gives
  several) and `responses`, one entry since vlmkit asks once per row:
  - `parameters`: the run's generation settings (`defaults`, generation keys only), overlaid by the row's
    `parameters` as the file gave them (Ark echoes them: `logprobs: false`, `top_logprobs` and an empty `stop` are
    kept although vlmkit does not send them), overlaid by what vlmkit sent for the row (the journal's `params`,
    e.g. a .meta.json max_tokens);
  - `usage`: the journal's token counts in Ark's (OpenAI's) names: `prompt_tokens` (input), `completion_tokens`
    (output, reasoning included as the server counts it), `total_tokens` (their sum), and
    `completion_tokens_details.reasoning_tokens` when the server reported reasoning tokens; null when unknown;
  - `content`: the reply as vlmkit keeps it (its answer, without surrounding white space, which Ark keeps;
    reasoning stays in predictions.jsonl, as Ark's records show none);
  - `score`, `analysis`: the LLM judge's score (vlmkit.scoring.kinds.qa_judge, on 0-10: not Ark's own judge's scale) and
    analysis when the run had a judge and it read a score; null without a judge (`--judge`), for a judgement that
    was unread or failed, and for a row without a reference;
  - `error` (only when the row has no reply: its inference failed or was not run): `"<kind>: <message>"`, with
    `content` null, as Ark's records carry a failed inference.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key, is_blank, is_missing, whole_number
from vlmkit.core.files import write_text_atomic
from vlmkit.core.model_calls import GENERATION_PARAMS
from vlmkit.outputs.json_files import strict_json
from vlmkit.core.secrets import scrub

OUTPUT_FORMAT = "ark"  # the value of a dataset's `output_format` that asks for these records (file name: layout)


def _scalar_id(value: Any) -> Any:
    number = whole_number(value)
    return number if number is not None else str(value).strip()


def _session_ids(rows: list[dict[str, Any]]) -> list[Any]:
    ids = [row.get("session_id") for row in rows]
    if ids and all(not is_blank(v) and not isinstance(v, (list, dict)) for v in ids):
        keys = [index_key(v) for v in ids]
        if len(set(keys)) == len(keys):
            return [_scalar_id(v) for v in ids]
    return [_scalar_id(row["index"]) for row in rows]


def _conversation(row: dict[str, Any]) -> list[dict[str, Any]]:
    messages = row.get("messages")
    if isinstance(messages, (list, tuple)) and messages:
        return [dict(turn) for turn in messages if isinstance(turn, dict)]
    turns = [] if is_blank(row.get("system")) else [{"role": "system", "content": str(row["system"])}]
    question = row.get("question")
    turns.append({"role": "user", "content": None if is_missing(question) else str(question)})
    return turns


def _reference(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return None if is_blank(value) else str(value)


def _parameters(row: dict[str, Any], record: dict[str, Any], defaults: Mapping[str, Any] | None) -> dict[str, Any]:
    out = {k: v for k, v in (defaults or {}).items() if k in GENERATION_PARAMS and v is not None}
    given = row.get("parameters")
    if isinstance(given, dict):
        out.update(given)
    sent = record.get("params")
    if isinstance(sent, dict):
        out.update(sent)
    return out


def ark_usage(usage: Any) -> dict[str, Any] | None:
    """A journal record's usage ({input_tokens, output_tokens, reasoning_tokens}) in Ark's names."""
    if not isinstance(usage, dict):
        return None
    prompt = int(usage.get("input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    out: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                           "total_tokens": prompt + completion}
    reasoning = int(usage.get("reasoning_tokens") or 0)
    if reasoning:
        out["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return out


def _judged(per_sample: pd.DataFrame | None) -> dict[str, tuple[Any, Any]]:
    """(score on the judge's scale, analysis) by index key, from a judged scorer's per-sample table."""
    if per_sample is None or "points" not in per_sample.columns:
        return {}
    analyses = per_sample["analysis"] if "analysis" in per_sample.columns else [None] * len(per_sample)
    out = {}
    for index, points, analysis in zip(per_sample["index"].tolist(), per_sample["points"].tolist(), analyses):
        if not is_missing(points):
            out[index_key(index)] = (float(points), None if is_missing(analysis) else str(analysis))
    return out


def _error_text(record: dict[str, Any] | None) -> str:
    error = (record or {}).get("error") or {"kind": "not_run", "message": "the row was not asked"}
    if isinstance(error, dict):
        kind, message = error.get("kind") or "error", error.get("message")
        return f"{kind}: {message}" if message else str(kind)
    return str(error)


def ark_records(
    rows: pd.DataFrame,
    records: Mapping[str, dict[str, Any]],
    per_sample: pd.DataFrame | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One Ark output record per row of `rows` (the dataset's table, in order; see the module docstring).
    `records`: journal records by index key; `per_sample`: the evaluation's per-sample table (None: not scored);
    `defaults`: the run's generation settings (model kwargs; keys other than generation parameters are ignored)."""
    table = rows.to_dict("records")
    judged = _judged(per_sample)
    out = []
    for session_id, row in zip(_session_ids(table), table):
        key = index_key(row["index"])
        record = records.get(key) or {}
        ok = bool(record) and record.get("error") is None and record.get("prediction") is not None
        score, analysis = judged.get(key, (None, None)) if ok else (None, None)
        response: dict[str, Any] = {
            "parameters": _parameters(row, record, defaults),
            "usage": ark_usage(record.get("usage")),
            "content": record.get("prediction") if ok else None,
            "score": score,
            "analysis": analysis,
        }
        if not ok:
            response["error"] = _error_text(record)
        assistant = {"role": "assistant", "reference_response": _reference(row.get("answer")), "responses": [response]}
        out.append({"session_id": session_id, "messages": [*_conversation(row), assistant]})
    return out


def write_ark_output(
    path: Path,
    rows: pd.DataFrame,
    records: Mapping[str, dict[str, Any]],
    per_sample: pd.DataFrame | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
    secrets: Iterable[str | None] = (),
) -> int:
    """Write `ark_records(...)` as JSON lines to path (atomically; every secret given scrubbed). Returns the count."""
    out = ark_records(rows, records, per_sample, defaults=defaults)
    lines = [json.dumps(strict_json(record), ensure_ascii=False, default=str, allow_nan=False) for record in out]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, scrub("".join(line + "\n" for line in lines), tuple(s for s in secrets if s)))
    return len(out)
