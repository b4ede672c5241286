"""A 95% interval for a headline no closed form fits (a sum, an F1, a mean of categories, any benchmark's own
figure): the dataset's own scorer re-run on resampled prediction tables (docs/error_bars.md, "Rescored bootstrap").

- What is drawn. The rows of the predictions table, with replacement, or whole groups where the scorer reads rows
  together: its per-sample `group` column (one value per row) names clusters when a value holds fewer than
  CLUSTER_MEAN_ROWS rows on average or a `group_hit` stands beside it (NaturalBench's groups of four). A
  `group` of more rows (MATBench's category_split) is a stratum instead, and so are the table's `split` x `category`
  cells where the result names no group (STRATUM_MEAN_ROWS rows or more on average): rows are drawn within each
  stratum, as many as it holds, so no category goes empty and a mean of categories keeps its weights.
- How it is laid out. Drawn units in table order, a unit's copies side by side (a group's rows in their order), and
  every row a fresh unique `index` (its position: a number where the column holds numbers, else its text), so a
  scorer that refuses repeated indices sees none; the columns are the table's.
- Whether the scorer allows it. Before any resample, CHECKS times, the units are put in a shuffled order, each once,
  with fresh indices, and scored: the headline must come back unchanged. A scorer that reads rows together by their
  position or their `index` text and names no `group` changes it, and gets no interval but a note. A grouped
  resample is also checked: each drawn copy must come back as one `group` of its own, else it counts as failed.
- The judge is never asked again: the first scoring goes through a RecordingJudge, and every rescoring through a
  ReplayJudge that answers each request with the reply the judge gave to the same request (errors included); a
  request it never saw stops the bootstrap with a note.
- How many. RESAMPLES (200) from numpy's default_rng(SEED) (per resample and stratum of m units,
  `integers(0, m, size=m)`), in blocks of BLOCK (50): after each block the bootstrap stops when the next block would
  take it past TIME_BUDGET_S, so a slow scorer gets 50, 100 or 150 (the count is the interval's `resamples`, and a
  note says why it is fewer). No interval from fewer than MIN_RESAMPLES: when the shuffled checks say the first 50
  would take longer than FIRST_BLOCK_CAP_S, none is tried. The same table, seed and count give the same interval.
- Failures. A resample whose scoring raises or has no finite headline is skipped and counted; more than
  MAX_FAILED_SHARE of them, or fewer than MIN_RESAMPLES left, and the result keeps no interval, with a note. Nothing
  here raises out of a bootstrap: the first scoring's exceptions alone reach the caller.
- The interval: the 2.5th and 97.5th percentiles of the resampled headlines, the SE their standard deviation (n-1),
  on the headline's own scale; method `bootstrap_rescored`. Only where the result has no interval about its
  headline already (the closed-form and weighted ones stay).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key, is_missing
from vlmkit.judging.base import Judge, JudgeReply, JudgeRequest, JudgeStopped
from vlmkit.scoring.common.intervals import Interval, cluster_codes
from vlmkit.scoring.result import EvalResult

RESCORED = "bootstrap_rescored"
RESAMPLES = 200
BLOCK = 50
MIN_RESAMPLES = 50
SEED = 0
TIME_BUDGET_S = 20.0
FIRST_BLOCK_CAP_S = 60.0
MAX_FAILED_SHARE = 0.1
CLUSTER_MEAN_ROWS = 10  # a per-sample `group` with fewer rows a value on average is a cluster, else a stratum
STRATUM_MEAN_ROWS = 10  # table strata (split x category) only where they hold this many rows on average
STRATA_COLUMNS = ("split", "category")
CHECKS = 3  # shuffled orders the scorer must score as the table itself

Scorer = Callable[[pd.DataFrame, Any], EvalResult]  # (predictions table, judge or None) -> result


# -- the judge, asked once -----------------------------------------------------------------------------------------
def _request_key(request: JudgeRequest) -> str:
    return json.dumps(request.identity(), sort_keys=True, default=str)


class RecordingJudge:
    """Forwards to the run's judge and keeps every reply by what the reply depends on (JudgeRequest.identity)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.name = judge.name
        self.replies: dict[str, JudgeReply] = {}

    def ask(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        replies = self.judge.ask(requests)
        for request, reply in zip(requests, replies):
            self.replies[_request_key(request)] = reply
        return replies


class JudgeNotAsked(JudgeStopped):
    """A rescoring asked the judge something the first scoring did not: the bootstrap stops (never asked)."""


class ReplayJudge:
    """Answers from a RecordingJudge's replies only; counts what it was asked."""

    def __init__(self, recorded: RecordingJudge) -> None:
        self.name = recorded.name
        self.replies = recorded.replies
        self.asked = 0
        self.missed = 0  # requests it had no reply for (a scorer that swallows JudgeNotAsked is still caught)

    def ask(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        out = []
        for request in requests:
            reply = self.replies.get(_request_key(request))
            if reply is None:
                self.missed += 1
                raise JudgeNotAsked(f"the rescoring asked the judge a request the scoring did not (row {request.row})")
            out.append(reply)
        self.asked += len(requests)
        return out


# -- units and strata ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """What one resample draws: `units` (per unit, the table positions of its rows, in order) within `strata` (a
    stratum code per unit, None for one stratum); `grouped` when a unit is a scorer group; `strata_by` names them."""

    units: list[np.ndarray]
    strata: np.ndarray | None
    grouped: bool
    strata_by: str | None


def _row_groups(result: EvalResult, table: pd.DataFrame) -> list[str] | None:
    """The per-sample `group` of each table row (by `index`), where every row has exactly one; else None."""
    frame = result.per_sample
    if frame is None or not {"index", "group"} <= set(frame.columns) or "index" not in table.columns:
        return None
    seen: dict[str, set[str]] = {}
    for key, group in zip(frame["index"], frame["group"]):
        if not is_missing(group):
            seen.setdefault(index_key(key), set()).add(str(group))
    keys = [index_key(k) for k in table["index"]]
    if any(len(seen.get(k, ())) != 1 for k in keys):
        return None
    return [next(iter(seen[k])) for k in keys]


def _table_strata(table: pd.DataFrame) -> tuple[np.ndarray | None, str | None]:
    """Strata from the table's split x category cells (or one of them) that hold STRATUM_MEAN_ROWS rows on average."""
    present = [c for c in STRATA_COLUMNS if c in table.columns]
    for columns in ([present] if len(present) > 1 else []) + [[c] for c in reversed(present)]:
        labels = ["\x00".join(str(v) for v in row) for row in table[columns].itertuples(index=False, name=None)]
        codes, k = cluster_codes(labels)
        if k > 1 and len(labels) / k >= STRATUM_MEAN_ROWS:
            return codes, " x ".join(f"`{c}`" for c in columns)
    return None, None


def resample_plan(result: EvalResult, table: pd.DataFrame) -> Plan:
    """Rows, or the scorer's groups where it names clusters (module docstring)."""
    groups = _row_groups(result, table)
    if groups is not None:
        codes, g = cluster_codes(groups)
        clusters = "group_hit" in result.per_sample.columns or len(groups) / max(g, 1) < CLUSTER_MEAN_ROWS
        if clusters:
            units = [np.flatnonzero(codes == c) for c in dict.fromkeys(codes.tolist())]  # in order of first row
            return Plan(units, None, True, None)
        if g > 1:
            return Plan([np.array([p]) for p in range(len(table))], codes, False, "the scorer's `group`")
    strata, by = _table_strata(table)
    return Plan([np.array([p]) for p in range(len(table))], strata, False, by)


def draw_counts(plan: Plan, rng: np.random.Generator) -> np.ndarray:
    """How often each unit is drawn in one resample: within each stratum (in code order), as many draws as it holds
    units, each uniform over them (rng.integers)."""
    n = len(plan.units)
    counts = np.zeros(n, dtype=np.int64)
    strata = plan.strata if plan.strata is not None else np.zeros(n, dtype=np.int64)
    for s in np.unique(strata):
        members = np.flatnonzero(strata == s)
        picks = rng.integers(0, len(members), size=len(members))
        counts[members] += np.bincount(picks, minlength=len(members))
    return counts


def fresh_indices(column: pd.Series, n: int) -> pd.Series:
    """n unique indices by position: numbers where the column holds numbers, else their text."""
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        return pd.Series(np.arange(n), dtype=column.dtype)
    return pd.Series([str(p) for p in range(n)], dtype=object)


def resampled_table(table: pd.DataFrame, plan: Plan, order: Sequence[int]) -> tuple[pd.DataFrame, np.ndarray]:
    """(the table of `order`'s units, one copy per entry, each unit's rows in order, fresh indices; the copy number of
    each row)."""
    parts = [plan.units[u] for u in order]
    positions = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    copies = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
    out = table.iloc[positions].reset_index(drop=True)
    if "index" in out.columns:
        out["index"] = fresh_indices(table["index"], len(out))
    return out, copies


def _copies_kept_apart(result: EvalResult, table: pd.DataFrame, copies: np.ndarray) -> bool:
    """Whether each drawn copy of a group came back as one scorer group of its own."""
    groups = _row_groups(result, table)
    if groups is None:
        return False
    pairs = set(zip(copies.tolist(), groups))
    return len(pairs) == len(set(copies.tolist())) == len(set(groups))


def _headline(result: EvalResult, primary: str) -> float | None:
    value = result.metrics.get(primary)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


# -- the bootstrap -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    resamples: int = RESAMPLES
    seed: int = SEED
    block: int = BLOCK
    min_resamples: int = MIN_RESAMPLES
    time_budget_s: float = TIME_BUDGET_S
    first_block_cap_s: float = FIRST_BLOCK_CAP_S
    max_failed_share: float = MAX_FAILED_SHARE


def _unit_words(plan: Plan) -> str:
    what = "whole scorer groups" if plan.grouped else "rows"
    return what + " drawn with replacement" + (f" within {plan.strata_by}" if plan.strata_by else "")


def add_resampled_interval(result: EvalResult, score: Scorer, table: pd.DataFrame, judge: Any = None,
                           settings: Settings = Settings()) -> EvalResult:
    """Give `result` (the scoring of `table`) a rescored bootstrap interval where it has none about its headline
    (module docstring); `judge`: None or a ReplayJudge. Returns `result`, with the interval or a note why none."""
    primary = result.primary
    estimate = _headline(result, primary)
    if result.primary_interval is not None or estimate is None or len(table) < 2:
        return result
    plan = resample_plan(result, table)
    if len(plan.units) < 2:
        return result
    why = _bootstrap(result, score, table, judge, plan, estimate, settings)
    if why is not None:
        result.notes.append(f"no 95% interval for {primary}: {why}")
    return result


def _rescore(score: Scorer, table: pd.DataFrame, judge: Any) -> EvalResult:
    """score(table, judge); JudgeNotAsked also where the scorer caught it (the ReplayJudge counts its misses)."""
    result = score(table, judge)
    if getattr(judge, "missed", 0):
        raise JudgeNotAsked("a request the scoring did not make")
    return result


def _bootstrap(result: EvalResult, score: Scorer, table: pd.DataFrame, judge: Any, plan: Plan, estimate: float,
               s: Settings) -> str | None:
    """Set result.interval; or the reason there is none."""
    primary = result.primary
    shuffles = np.random.default_rng([s.seed, 1])
    one = 0.0
    for _ in range(CHECKS):
        check, copies = resampled_table(table, plan, shuffles.permutation(len(plan.units)))
        started = time.monotonic()
        try:
            checked = _rescore(score, check, judge)
        except JudgeNotAsked as exc:
            return f"rescoring resampled tables would ask the judge again ({exc})"
        except Exception as exc:  # noqa: BLE001 - any scorer failure means no interval, never a traceback
            return f"the scorer fails on its own rows shuffled and re-indexed ({type(exc).__name__}: {exc})"
        one = max(one, time.monotonic() - started)
        again = _headline(checked, primary)
        if again is None or not math.isclose(again, estimate, rel_tol=1e-9, abs_tol=1e-9):
            if plan.grouped:
                return (f"the scorer's figure changes when its groups are shuffled whole and re-indexed ({primary} "
                        f"was {estimate:.6g}, then {again}): it groups rows by their order (a group of another "
                        "size?) or by their index")
            return (f"the scorer reads its rows together by their order or their index ({primary} was "
                    f"{estimate:.6g}, then {again} with the rows shuffled and re-indexed), and names no per-sample "
                    "`group` to draw whole")
        if plan.grouped and not _copies_kept_apart(checked, check, copies):
            return "the scorer's groups do not come back whole when the groups are shuffled and re-indexed"
    if one * s.min_resamples > s.first_block_cap_s:
        return (f"one scoring takes {one:.1f} s, so {s.min_resamples} rescorings would take about "
                f"{one * s.min_resamples:.0f} s (more than {s.first_block_cap_s:.0f} s)")
    rng = np.random.default_rng(s.seed)
    figures: list[float] = []
    attempted = failed = 0
    started = time.monotonic()
    stop_reason: str | None = None
    while attempted < s.resamples:
        for _ in range(min(s.block, s.resamples - attempted)):
            counts = draw_counts(plan, rng)  # drawn before scoring, so a failure leaves the stream as it was
            attempted += 1
            sample, copies = resampled_table(table, plan, np.repeat(np.arange(len(plan.units)), counts))
            try:
                rescored = _rescore(score, sample, judge)
            except JudgeNotAsked as exc:
                return f"rescoring resampled tables would ask the judge again ({exc})"
            except Exception:  # noqa: BLE001 - counted, the bootstrap goes on
                failed += 1
                continue
            value = _headline(rescored, primary)
            if value is None or (plan.grouped and not _copies_kept_apart(rescored, sample, copies)):
                failed += 1
                continue
            figures.append(value)
        elapsed = time.monotonic() - started
        next_block = min(s.block, s.resamples - attempted)
        if next_block and elapsed + next_block * elapsed / attempted > s.time_budget_s:
            stop_reason = (f"{attempted} resamples, not {s.resamples}: they took {elapsed:.1f} s, and "
                           f"{next_block} more would pass the {s.time_budget_s:.0f} s budget")
            break
    if failed > s.max_failed_share * attempted or len(figures) < s.min_resamples:
        return (f"the scorer failed on {failed} of {attempted} resampled tables ({_unit_words(plan)}; at most "
                f"{s.max_failed_share:.0%} may fail and {s.min_resamples} must score)")
    values = np.asarray(figures, dtype=float)
    low, high = np.percentile(values, [2.5, 97.5])
    result.interval = Interval(
        primary, estimate, float(low), float(high), float(values.std(ddof=1)), RESCORED, len(table),
        clusters=len(plan.units) if plan.grouped else None, cluster_by="scorer group" if plan.grouped else None,
        resamples=len(figures), seed=s.seed,
    )  # fmt: skip
    note = (f"95% interval of {primary}: the scorer re-run on {len(figures)} resampled tables ({_unit_words(plan)}, "
            f"seed {s.seed})")
    if failed:
        note += f"; {failed} resample(s) the scorer failed on skipped"
    if stop_reason:
        note += f"; {stop_reason}"
    if judge is not None and getattr(judge, "asked", 0):
        note += "; the judge's replies reused, never asked again"
    result.notes.append(note)
    return None


def scored_with_interval(score: Scorer, table: pd.DataFrame, judge: Any = None,
                         settings: Settings = Settings()) -> EvalResult:
    """`score(table, judge)` with an interval about its headline: the scorer's own, else the generic one of a mean
    (EvalResult.with_generic_interval), else a rescored bootstrap (module docstring) that never asks the judge
    again. Exceptions of the scoring itself reach the caller as they would without the interval."""
    recorder = RecordingJudge(judge) if judge is not None else None
    result = score(table, recorder).with_generic_interval()
    if result.primary_interval is None:
        replay = ReplayJudge(recorder) if recorder is not None else None
        add_resampled_interval(result, score, table, replay, settings)
    return result
