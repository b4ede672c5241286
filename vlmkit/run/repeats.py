"""`vlmkit run --repeats N`: each sample asked N times with a sampling temperature, each attempt journalled apart.

Decisions (docs/error_bars.md, "Repeated sampling"):
- Refused in one line unless the model samples: a temperature above 0, or a `--temperature` the user gave (0
  included: someone measuring a server's own nondeterminism says so by passing it). Also refused with --shard /
  --merge / torchrun, --mcq-mode logits|continuation (likelihoods do not vary) and --retry-truncated (one at a time).
- Attempt k (1..N) sends `seed` k with every request (the OpenAI body's `seed`; a local model seeds torch with it
  before each padded generate), so attempts differ from each other and a rerun asks the same requests. The seed
  replaces a row's own `seed` parameter, if it has one.
- Attempt 1 is the pair's own journal (`journal.jsonl`), attempt k >= 2 journals into `attempts/attempt<k>/
  journal.jsonl` under the pair's folder: a rerun keeps every attempt already journalled and asks only what is
  missing, attempt by attempt. predictions.jsonl, the xlsx, the headline and its interval are attempt 1's.
- Each attempt is scored by the dataset's own scorer. `scoring.repeats` holds each attempt's headline, mean@N (their
  mean), std (their sample standard deviation, n-1: the spread across repeats), pass@k for k = 1..N (the unbiased
  estimator, vlmkit.scoring.common.pass_at_k, over rows or circular groups, an attempt with no answer for a unit
  counting as wrong; null for graded scorers with no right/wrong per row) and majority (each row's most common
  answer over the attempts, ties to the attempt seen first, scored by the same scorer). Answers vote by what the
  scorer read (`extracted`: the letter, Yes/No) where it reads one, else by the reply's text.
- mean@N and std take the attempts that were scored; `scored_attempts` says how many.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.core.cells import index_key
from vlmkit.scoring.common.pass_at_k import majority, mean_pass_at_k
from vlmkit.scoring.result import EvalResult

ATTEMPTS_DIR = "attempts"


def attempt_dir(run_dir: Path, attempt: int) -> Path:
    """Where attempt k >= 2 keeps its journal (attempt 1 is the pair's folder itself)."""
    return run_dir if attempt == 1 else run_dir / ATTEMPTS_DIR / f"attempt{attempt}"


def attempt_params(attempt: int, repeats: int) -> dict[str, Any] | None:
    """What attempt k adds to each request: its seed (None without --repeats)."""
    return {"seed": attempt} if repeats > 1 else None


def refusal(repeats: int, model: str, temperature: Any, temperature_given: bool) -> str | None:
    """One line when --repeats N > 1 would ask a greedy model the same thing N times; None when it may run."""
    if repeats <= 1 or temperature_given:
        return None
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature > 0:
        return None
    return (f"--repeats {repeats}: {model} decodes greedily (temperature {temperature or 0}), so its {repeats} "
            "attempts would give one answer; pass --temperature (e.g. --temperature 0.7)")


@dataclass
class Attempt:
    """One attempt's answers and how they scored."""

    number: int
    predictions: list[Any]  # by row position; None without an answer
    evaluation: EvalResult | None


def votes(attempt: Attempt, keys: Sequence[str]) -> list[Any]:
    """What each row's answer votes as: the scorer's `extracted` reading where it has one, else the reply's text
    (stripped); None without an answer."""
    read: dict[str, Any] = {}
    ev = attempt.evaluation
    if ev is not None and ev.per_sample is not None and {"index", "extracted"} <= set(ev.per_sample.columns):
        read = {index_key(i): v for i, v in zip(ev.per_sample["index"], ev.per_sample["extracted"])
                if v is not None and not (isinstance(v, float) and math.isnan(v))}
    out = []
    for key, prediction in zip(keys, attempt.predictions):
        if prediction is None:
            out.append(None)
        elif key in read:
            out.append(("read", str(read[key])))
        else:
            out.append(("text", str(prediction).strip()))
    return out


def majority_predictions(attempts: Sequence[Attempt], keys: Sequence[str]) -> list[Any]:
    """Each row's majority answer (the reply of the first attempt that gave the winning vote); None where no attempt
    answered."""
    ballots = [votes(a, keys) for a in attempts]
    out = []
    for pos in range(len(keys)):
        winner = majority([b[pos] for b in ballots])
        out.append(None if winner is None else attempts[winner].predictions[pos])
    return out


def pass_at(attempts: Sequence[Attempt]) -> tuple[dict[str, float] | None, str | None]:
    """({"1": pass@1, ..., "N": pass@N}, the unit) over the units any attempt scored; (None, None) when some scored
    attempt has no right/wrong per unit (graded scores) or none was scored."""
    hits = [a.evaluation.unit_hits() if a.evaluation is not None else {} for a in attempts]
    if any(h is None for h in hits) or not any(hits):
        return None, None
    units = sorted({key for h in hits for key in h})  # type: ignore[union-attr]
    right = [sum(1 for h in hits if h.get(key)) for key in units]  # type: ignore[union-attr]
    n = len(attempts)
    grouped = any(a.evaluation is not None and "group_hit" in a.evaluation.per_sample.columns for a in attempts)
    return {str(k): mean_pass_at_k(right, n, k) for k in range(1, n + 1)}, "circular group" if grouped else "row"


def repeats_block(attempts: Sequence[Attempt], majority_eval: EvalResult | None) -> dict[str, Any]:
    """`scoring.repeats` (module docstring)."""
    scored = [a for a in attempts if a.evaluation is not None]
    metric = scored[0].evaluation.primary if scored else None  # type: ignore[union-attr]
    values = [a.evaluation.metrics.get(metric) for a in scored]  # type: ignore[union-attr]
    values = [float(v) for v in values if isinstance(v, (int, float))]
    mean = sum(values) / len(values) if values else None
    std = float(pd.Series(values).std(ddof=1)) if len(values) > 1 else (0.0 if values else None)
    passes, unit = pass_at(attempts)
    return {
        "n": len(attempts),
        "seeds": [a.number for a in attempts],
        "metric": metric,
        "per_attempt": [
            {"attempt": a.number, "seed": a.number, "answered": sum(p is not None for p in a.predictions),
             "value": a.evaluation.metrics.get(metric) if a.evaluation is not None else None}
            for a in attempts
        ],
        "scored_attempts": len(values),
        "mean": mean,
        "std": std,
        "pass_at_k": passes,
        "pass_at_k_unit": unit,
        "majority": ({"value": majority_eval.metrics.get(metric), "vote_on": "the scorer's reading, else the reply"}
                     if majority_eval is not None and metric is not None else None),
    }


def repeats_line(label: str, block: dict[str, Any], evaluation: EvalResult | None) -> str:
    """The console's line under the table: mean@N, its spread, pass@k and majority, on the headline's scale."""
    scale = evaluation.scale_of(block["metric"]) if evaluation is not None and block["metric"] else None

    def fmt(value: Any) -> str:
        if not isinstance(value, (int, float)):
            return "-"
        return scale.format(value) if scale is not None else f"{value:.4g}"

    n = block["n"]
    parts = [f"mean@{n} {fmt(block['mean'])} (std {fmt(block['std'])} across repeats: "
             + ", ".join(fmt(a["value"]) for a in block["per_attempt"]) + ")"]
    if block["pass_at_k"]:
        parts.append(", ".join(f"pass@{k} {v:.4f}" for k, v in block["pass_at_k"].items()))
    if block["majority"]:
        parts.append(f"majority {fmt(block['majority']['value'])}")
    return f"{label}: {n} repeats (seeds {block['seeds'][0]}-{block['seeds'][-1]}): " + "; ".join(parts)


def figures(label: str, attempts: Sequence[Attempt], keys: Sequence[str], evaluation: EvalResult,
            score: Callable[[list[Any]], EvalResult | None]) -> tuple[dict[str, Any], str]:
    """(`scoring.repeats`, the console line) over the attempts, attempt 1 first; `score(predictions)` scores the
    majority answers by the dataset's scorer."""
    block = repeats_block(attempts, score(majority_predictions(attempts, keys)))
    return block, repeats_line(label, block, evaluation)
