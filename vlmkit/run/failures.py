"""What went wrong in a run, said once and early: error summaries by kind, the early stop, and the fix to name.

- `errors_by_kind`: every failed sample's error record grouped by kind (count, first row and its message), for the
  console and results.json.
- `FirstFailures`: stops a run whose first samples (the first min(8, n) to complete) all failed the same way with
  a status no retry can fix (FATAL_STATUSES), or all could not reach the server: every other row would fail too.
- `with_hint`: a server message about max_tokens / the context length names the flag that fixes it.
- `scoring_failures`: rows the scorer could not read an answer from (an MCQ answer that fits no option, a Y/N
  answer that is neither), by kind with the first row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key, is_missing
from vlmkit.core.model_calls import FATAL_STATUSES
from vlmkit.core.secrets import one_line

EARLY_WINDOW = 8  # the first min(EARLY_WINDOW, n) samples to complete decide an early stop
UNREACHABLE_KINDS = frozenset({"connection"})  # every retry already failed: the server is not there
MESSAGE_CHARS = 300  # how much of a server's message a console line quotes
_LENGTH_WORDS = re.compile(r"max_tokens|max_completion_tokens|max_new_tokens|max_model_len|context length|"
                           r"context window|maximum context|too many tokens|input is too long", re.I)
SCORING_FAILURE_METHODS = {
    "unparsed": "answers that name no option, or neither yes nor no",
    "judge_unread": "answers the judge was asked about and nothing could be read from its replies",
    "judge_error": "answers whose judge call failed (asked again on the next run)",
}


class RunStopped(Exception):
    """A (model, dataset) pair stopped before its samples were asked: the probe failed, or the first samples all
    failed the same way. The text is one line saying why (and what to change)."""



def with_hint(message: str) -> str:
    """The message, plus the flag that fixes it when it is about max_tokens or the context length."""
    if _LENGTH_WORDS.search(message):
        return (f"{message} (set --max-tokens N below the server's limit, or leave --max-tokens unset to use the "
                "server's default)")
    return message


class FirstFailures:
    """Watches the first records of a run; `check` returns the stop message once they all failed the same way."""

    def __init__(self, n_tasks: int, window: int = EARLY_WINDOW) -> None:
        self.window = min(window, n_tasks)
        self.seen: list[dict[str, Any] | None] = []

    def check(self, record: dict[str, Any]) -> str | None:
        if self.window <= 0 or len(self.seen) >= self.window:
            return None
        self.seen.append(record.get("error"))
        if len(self.seen) < self.window or any(e is None for e in self.seen):
            return None
        errors = [e for e in self.seen if e is not None]
        statuses = {e.get("status") for e in errors}
        kinds = {e.get("kind") for e in errors}
        first = one_line(errors[0].get("message") or "", MESSAGE_CHARS)
        n = len(errors)
        if len(statuses) == 1 and next(iter(statuses)) in FATAL_STATUSES:
            status = next(iter(statuses))
            return with_hint(f"stopped: the first {n} sample(s) all failed with HTTP {status}, which no retry fixes: "
                             f"{first}")
        if kinds <= UNREACHABLE_KINDS:
            return (f"stopped: the first {n} sample(s) could not reach the server: {first} (is it running, and is "
                    "--api-base right?)")
        return None


def errors_by_kind(records: Mapping[str, dict[str, Any]], keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """{kind: {count, first_index, first_message, status}} over the failed rows among keys, kinds in the order met."""
    out: dict[str, dict[str, Any]] = {}
    failed = getattr(records, "failed", None)  # a journal's records say which are errors without reading them all
    for key in keys:
        if failed is not None and not failed(key):
            continue
        error = (records.get(key) or {}).get("error")
        if error is None:
            continue
        kind = str(error.get("kind") or "exception")
        if kind not in out:
            out[kind] = {"count": 0, "first_index": records[key].get("index"),
                         "first_message": one_line(error.get("message") or "", MESSAGE_CHARS), "status": error.get("status")}
        out[kind]["count"] += 1
    return out


def scoring_failures(per_sample: pd.DataFrame | None,
                     predictions: Mapping[str, Any] | Any | None = None) -> dict[str, dict[str, Any]]:
    """{kind: {count, first_index, first_prediction, what}} from a scorer's per-sample table (its `method` column;
    None: nothing was scored); predictions by index key (anything with `.get(key)`), to quote the first one."""
    if per_sample is None or "method" not in per_sample.columns:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for index, method in zip(per_sample["index"].tolist(), per_sample["method"].tolist()):
        if method not in SCORING_FAILURE_METHODS:
            continue
        if method not in out:
            pred = (predictions or {}).get(index_key(index))
            out[method] = {"count": 0, "first_index": index, "what": SCORING_FAILURE_METHODS[method],
                           "first_prediction": None if is_missing(pred) else one_line(str(pred), 120)}
        out[method]["count"] += 1
    return out


def summary_lines(label: str, errors: dict[str, dict[str, Any]], scoring: dict[str, dict[str, Any]]) -> list[str]:
    """Console lines: one per error kind and per scoring-failure kind, each with its first row."""
    lines = [
        f"{label}: {e['count']} sample(s) failed with {kind}; first: row {e['first_index']}: {e['first_message']}"
        for kind, e in errors.items()
    ]
    for kind, f in scoring.items():
        shown = f": {f['first_prediction']!r}" if f.get("first_prediction") is not None else ""
        lines.append(f"{label}: {f['count']} {kind} ({f['what']}); first: row {f['first_index']}{shown}")
    return lines
