"""Answers cut off by the token budget: how many, how they scored, and asking them again with more tokens.

Decisions (docs/error_bars.md, "Truncated answers"):
- An answer is cut when its record says `finish_reason: "length"` (an OpenAI-compatible server's word; the local
  transformers path says it when an answer used all of max_new_tokens without an end token, vlm.local.decoding), or
  when it ended inside its reasoning (the `truncated_reasoning` error: no answer could be read, a miss). Records
  written before finish_reason was journalled keep it under `extra`.
- The share is over the rows that got a reply (answers and truncated_reasoning errors); failed calls are not replies.
- score_finished / score_truncated: the mean per-row outcome of each group (a hit 1, a miss 0, a graded row its own
  score, a cut reply with nothing read 0), from the scorer's per-sample rows (EvalResult.sample_scores). That is the
  headline itself only where the headline is a plain mean over rows; for other headlines (a sum, a mean of
  categories, circular groups) it is the rows' side of it. null where a group is empty or nothing was scored.
- Above WARN_SHARE of replies cut, the run prints one line naming --max-tokens.
- `--retry-truncated N` asks each cut row once more with `max_tokens` N (journal `retry_truncated/journal.jsonl` in the
  pair's folder, so a rerun asks only what is missing there); the headline and every file are made from the retried
  answers (a retry that failed keeps the first answer), and `scoring.retry_truncated` records the figures before and
  after. The retry's own answers may be cut again: the after-figure's `truncation` says how many.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vlmkit.scoring.result import EvalResult

LENGTH = "length"
WARN_SHARE = 0.05
RETRY_DIR = "retry_truncated"  # under the pair's folder: the retried rows' journal
TRUNCATED_REASONING = "truncated_reasoning"


def retry_dir(run_dir: Path) -> Path:
    return run_dir / RETRY_DIR


def finish_reason(record: Mapping[str, Any]) -> str | None:
    """A journal record's finish_reason (its own field, else under `extra` as older records hold it)."""
    value = record.get("finish_reason")
    if value is None and isinstance(record.get("extra"), Mapping):
        value = record["extra"].get("finish_reason")
    return value if isinstance(value, str) else None


def _error_kind(record: Mapping[str, Any]) -> str | None:
    error = record.get("error")
    return error.get("kind") if isinstance(error, Mapping) else None


def is_reply(record: Mapping[str, Any]) -> bool:
    """Whether the model replied (an answer, or a reply cut inside its reasoning): a failed call is not one."""
    return record.get("error") is None or _error_kind(record) == TRUNCATED_REASONING


def is_cut(record: Mapping[str, Any]) -> bool:
    """Whether a reply ended on the token budget."""
    if _error_kind(record) == TRUNCATED_REASONING:
        return True
    return record.get("error") is None and finish_reason(record) == LENGTH


NO_REPLY, FINISHED, CUT = 0, 1, 2  # a row's reply state (`reply_state`), one byte a row


def reply_state(record: Mapping[str, Any] | None) -> int:
    """NO_REPLY (no record, or a failed call), FINISHED, or CUT (the reply ended on the token budget)."""
    if record is None or not is_reply(record):
        return NO_REPLY
    return CUT if is_cut(record) else FINISHED


def reply_states(records: Mapping[str, dict[str, Any]], keys: Sequence[str]) -> bytearray:
    """Each row's reply_state, by position in keys (the runner fills it in its own pass over the records)."""
    return bytearray(reply_state(records.get(key)) for key in keys)


def cut_positions(records: Mapping[str, dict[str, Any]], keys: Sequence[str]) -> list[int]:
    """Positions (in keys) of the rows whose journalled reply was cut."""
    return [pos for pos, state in enumerate(reply_states(records, keys)) if state == CUT]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def truncation_summary(states: Sequence[int], keys: Sequence[str], scores: Mapping[str, float] | None
                       ) -> dict[str, Any]:
    """`scoring.truncation`: count, share (of replies), replies, score_finished, score_truncated (module docstring);
    states: each row's reply_state by position; scores: each row's outcome by index key (None: nothing scored)."""
    finished: list[float] = []
    cut: list[float] = []
    for key, state in zip(keys, states):
        if state == NO_REPLY:
            continue
        outcome = float(scores.get(key, 0.0)) if scores is not None else 0.0
        (cut if state == CUT else finished).append(outcome)
    replies = len(finished) + len(cut)
    scored = scores is not None
    return {
        "count": len(cut), "share": len(cut) / replies if replies else 0.0, "replies": replies,
        "score_finished": _mean(finished) if scored else None, "score_truncated": _mean(cut) if scored else None,
        "measure": "mean per-row outcome (hit 1, miss 0, graded rows their score)",
    }


def budget_line(label: str, summary: Mapping[str, Any], max_tokens: Any) -> str | None:
    """One line naming --max-tokens when more than WARN_SHARE of the replies were cut; None otherwise."""
    if not summary.get("replies") or summary["share"] <= WARN_SHARE:
        return None
    budget = f"--max-tokens is {max_tokens}" if max_tokens is not None else "no --max-tokens was given (the default)"
    return (f"{label}: {summary['count']} of {summary['replies']} replies ({summary['share']:.0%}) ended on the token "
            f"budget (finish_reason length) and are scored as cut; {budget}: raise --max-tokens, or re-ask them with "
            "--retry-truncated N")


class Retried(Mapping[str, dict[str, Any]]):
    """A pair's records with each cut row's retried answer in place of the first one (a retry that failed, or none
    yet, leaves the first). Reads as the runner's journal records do (`failed`, `line`, `get`)."""

    def __init__(self, first: Any, retried: Any) -> None:
        self.first, self._retried = first, retried

    def _source(self, key: str) -> Any:
        retried = self._retried
        return retried if key in retried and not retried.failed(key) else self.first

    def failed(self, key: str) -> bool:
        return self._source(key).failed(key)

    def line(self, key: str) -> str:
        return self._source(key).line(key)

    def was_retried(self, key: str) -> bool:
        return self._source(key) is self._retried

    def __getitem__(self, key: str) -> dict[str, Any]:
        return self._source(key)[key]

    def __contains__(self, key: object) -> bool:
        return key in self.first or key in self._retried

    def __iter__(self) -> Iterator[str]:
        yield from self.first
        yield from (key for key in self._retried if key not in self.first)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def figures(label: str, records: Mapping[str, dict[str, Any]], keys: Sequence[str], states: Sequence[int],
            evaluation: EvalResult, *, first: Callable[[Any], tuple[list[Any], bytearray]],
            score: Callable[[list[Any]], EvalResult | None], budget: int | None, max_tokens: Any
            ) -> tuple[dict[str, Any], list[str], list[str]]:
    """(blocks for results.json's `scoring`, console lines, notes) of a scored pair whose rows' reply states are
    `states`: `truncation` always; with --retry-truncated (records is Retried) `retry_truncated`, the first answers
    (`first(records.first)`: predictions and states) scored again by `score(predictions)`, and its console line; else
    the --max-tokens line above WARN_SHARE (printed now, and kept as a note)."""
    cut = truncation_summary(states, keys, evaluation.sample_scores())
    blocks: dict[str, Any] = {"truncation": cut}
    if not isinstance(records, Retried):
        line = budget_line(label, cut, max_tokens)
        if line is not None:
            print(line, flush=True)
        return blocks, [], [line] if line is not None else []
    predictions, states_before = first(records.first)
    before = score(predictions)
    cut_before = truncation_summary(states_before, keys, before.sample_scores() if before is not None else None)
    retried = sum(1 for key in keys if key in records and records.was_retried(key))
    value = before.primary_value if before is not None else None
    blocks["retry_truncated"] = {
        "max_tokens": budget, "cut_before": cut_before["count"], "retried": retried,
        "before": {"value": value, "truncation": cut_before},
        "after": {"value": evaluation.primary_value, "truncation": cut},
    }
    scale = evaluation.scale_of(evaluation.primary)
    was = "-" if value is None else scale.format(value) if scale is not None else f"{value:.4g}"
    line = (f"{label}: --retry-truncated {budget}: {retried} of {cut_before['count']} cut replies answered again; "
            f"{evaluation.primary} {was} before, {evaluation.formatted(evaluation.primary)} after (the "
            f"headline); cut replies {cut_before['count']} -> {cut['count']}")
    return blocks, [line], []
