"""`vlmkit perf --score`: accuracy under load. Each level's answers are scored by the dataset's own scorer.

With --score every request keeps its answer's text only until its line of perf_requests.jsonl is written (`reply`,
`cut_off`: vlmkit.perf.report.request_line), so memory stays flat in the run's length. When a level ends, its lines
are read back from the file (from where the level began) and the dataset scores them with `dataset.evaluate(table)`,
the call `vlmkit run` makes (no judge: a judge-scored benchmark is refused before any request):

- a row's prediction is the answer of the level's first measured request for that row (warm-up requests are not
  scored; a row sent more than once, when --num-requests exceeds the rows, is scored on its first answer);
- the prediction is the answer's content after its last `</think>` (vlmkit.core.reasoning, as `vlmkit run` reads
  it; the server's reasoning_content is never kept);
- a request that failed (a timeout, an HTTP or stream error, a dropped connection) or whose answer was cut off
  (finish_reason `length`, or a `<think>` never closed) gives no prediction: the scorer counts the row as a miss, as
  `vlmkit run` counts a row without an answer;
- a row the level did not send (fewer requests than rows, a level cut short) is left out of that level's table;
  requests stopped by Ctrl-C likewise.

The level's `accuracy` block holds the headline (metric, value, scale, as the EvalResult gives them), the counts
(rows scored, answered, errors by kind, cut off) and the note above in one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlmkit.core.reasoning import split_reasoning

MISSES_NOTE = ("timeouts, errors and cut-off replies (finish_reason length) count as misses; each row is scored on "
               "the level's first measured answer to it; rows the level did not send are left out")


def score_refusal(dataset: Any, options: Any) -> str | None:
    """Why --score cannot score this source (one line), or None when it can."""
    if getattr(dataset, "turn_rows", None) is not None:
        return "--score: --sessions replays conversations, which carry no reference answers to score"
    if options.trace_speed is not None:
        return "--score: --trace replays request shapes (lengths, shared blocks), which have no answers to score"
    if options.prefix_tokens:
        return ("--score: --prefix-share puts a generated prefix before each prompt, which changes the question; "
                "score without it")
    name = getattr(dataset, "name", "the dataset")
    if not callable(getattr(dataset, "evaluate", None)):  # synthetic payloads: no scorer, no reference
        return f"--score: {name} is generated load without answers; give --data with a scorable benchmark"
    problem = getattr(dataset, "scoring_problem", None)
    found = problem() if callable(problem) else None
    if found:
        return f"--score: {found}"
    target = (getattr(dataset, "answer_columns", None) or ("answer",))[0]
    if target not in dataset.data.columns:
        return f"--score: {name} has no `{target}` column: nothing to score the answers against"
    params = dataset.scorer_params() if callable(getattr(dataset, "scorer_params", None)) else {}
    if not params:
        return f"--score: {name} has no scorer in vlmkit ({type(dataset).__name__})"
    return None


@dataclass
class LevelAnswers:
    """What one level answered, row by row (first measured answer only) and in counts over every measured request."""

    predictions: dict[int, str | None] = field(default_factory=dict)  # row -> reply, None for a miss
    requests: int = 0  # measured requests read (cancelled ones not)
    answered: int = 0  # of them, a complete answer
    cut_off: int = 0  # of them, an answer cut at max_tokens
    errors: dict[str, int] = field(default_factory=dict)  # error kind -> requests
    first_n: dict[int, int] = field(default_factory=dict)  # row -> the request number its prediction came from


def level_answers(path: Path, offset: int, label: str) -> LevelAnswers:
    """The answers of level `label` from perf_requests.jsonl, reading from byte `offset` (where the level began)."""
    found = LevelAnswers()
    with open(path, encoding="utf-8") as handle:
        handle.seek(offset)
        for text in handle:
            line = json.loads(text)
            if line.get("level") != label or line.get("warmup") or line.get("error") == "cancelled":
                continue
            found.requests += 1
            error = line.get("error")
            answer, _, thinking_cut = split_reasoning(line.get("reply") or "")
            cut = bool(line.get("cut_off")) or thinking_cut
            if error is not None:
                found.errors[error] = found.errors.get(error, 0) + 1
            elif cut:
                found.cut_off += 1
            else:
                found.answered += 1
            row, n = int(line["row"]), int(line["n"])
            if n < found.first_n.get(row, n + 1):  # lines of --workers come worker by worker: the smallest n wins
                found.first_n[row] = n
                found.predictions[row] = answer if error is None and not cut else None
    return found


def score_level(dataset: Any, path: Path, offset: int, label: str) -> dict[str, Any]:
    """The level's `accuracy` block: its answers scored by `dataset.evaluate`, misses as MISSES_NOTE says."""
    answers = level_answers(path, offset, label)
    block: dict[str, Any] = {
        "metric": None, "value": None, "formatted": None, "scale": None, "scorer": None,
        "rows_scored": len(answers.predictions), "requests": answers.requests, "answered": answers.answered,
        "cut_off": answers.cut_off, "errors": dict(sorted(answers.errors.items())),
        "misses_without_answer": sum(p is None for p in answers.predictions.values()),
        "note": MISSES_NOTE,
    }
    if not answers.predictions:
        block["note"] = "no request of this level was scored (none was measured)"
        return block
    rows = sorted(answers.predictions)
    table = dataset.data.iloc[rows].reset_index(drop=True)
    table = table.assign(prediction=[answers.predictions[r] for r in rows])
    result = dataset.evaluate(table)
    scale = result.scale_of(result.primary)
    block.update(
        metric=result.primary,
        value=result.primary_value,
        formatted=result.formatted(result.primary),
        scale=scale.to_dict() if scale is not None else None,
        scorer=result.scorer,
        counts={k: int(v) for k, v in result.counts.items()},
    )
    return block
