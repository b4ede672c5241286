"""How far the LLM judge moved a run's headline, worked out from its predictions.jsonl where the files allow it.

With rules alone (no `--judge`), an answer no rule reads is a miss (results.json `judge.note`); a judge reads some of
them (`method: judge` in predictions.jsonl). So the headline without the judge is the one where every row the judge
read counts as a miss, and a run without a judge could gain at most its unread rows.

That is only sound where the headline is the plain mean of the rows' credits (a hit 1, a miss, an unread answer or a
failed call 0, a partial per-row score its value), on a fraction or percent scale. The credits are summed from
predictions.jsonl and compared with the headline first; where they do not give it (a circular MCQ's groups, MME's
sums, a figure over categories) the effect is said to be unknown, never guessed. A benchmark the judge scores whole
(`counts.by_rule` 0) has no figure without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vlmkit.report.runs import ReportInputError, Run
from vlmkit.report.samples import Sample, read_samples
from vlmkit.scoring.scales import FRACTION, PERCENT

JUDGE_METHOD = "judge"
_MULTIPLIER = {FRACTION: 1.0, PERCENT: 100.0}  # the headline on its scale is the mean credit times this


@dataclass
class JudgeEffect:
    """What the judge did to the headline. `without`: the headline with rules alone (None: cannot be told, `why`
    says so); `at_most`: for a run without a judge, the most one could add (its unread rows all hits)."""

    rows: int = 0  # rows the headline counts
    judged: int = 0  # rows the judge read (`method: judge`)
    judged_credit: float = 0.0  # what they scored (hits, or partial scores)
    unread: int = 0  # rows no one read (a miss either way)
    without: float | None = None
    at_most: float | None = None
    why: str = ""  # why the effect cannot be told ("" when it can)


def _credit(sample: Sample) -> float | None:
    """A row's share of a mean headline; None for a row the headline does not count (no verdict)."""
    if sample.verdict == "hit":
        return 1.0
    if sample.verdict in ("miss", "unread", "error"):
        return 0.0
    if sample.verdict == "partial" and sample.score is not None:
        return sample.score
    return None


def headline_is_row_mean(run: Run, credits: list[float]) -> bool:
    """Whether the run's headline is the mean of these credits on its scale (to a millionth of the scale's unit)."""
    if run.value is None or run.scale is None or run.scale.kind not in _MULTIPLIER or not credits:
        return False
    multiplier = _MULTIPLIER[run.scale.kind]
    return math.isclose(sum(credits) / len(credits) * multiplier, run.value, rel_tol=0.0, abs_tol=1e-6 * multiplier)


def judge_effect(run: Run, *, judged_run: bool) -> JudgeEffect:
    """The judge's effect on the run's headline (judged_run: the run had a judge). Never raises on a bad file: the
    reason is in `why`."""
    effect = JudgeEffect()
    if run.value is None:
        effect.why = f"the run has no scored figure (status {run.status})"
        return effect
    if not run.predictions.is_file():
        effect.why = f"no {run.predictions.name} beside {run.path.name} to count the rows from"
        return effect
    try:
        samples = read_samples(run.predictions, run.metric)
    except ReportInputError as exc:
        effect.why = str(exc)
        return effect
    counted = [(s, c) for s in samples if (c := _credit(s)) is not None]
    credits = [c for _, c in counted]
    effect.rows = len(counted)
    effect.judged = sum(s.method == JUDGE_METHOD for s, _ in counted)
    effect.judged_credit = sum(c for s, c in counted if s.method == JUDGE_METHOD)
    effect.unread = sum(s.verdict == "unread" for s, _ in counted)
    by_rule = (run.scoring.get("counts") or {}).get("by_rule")
    if judged_run and effect.judged and by_rule == 0:
        effect.why = "the judge scored every row (counts.by_rule 0): without it the benchmark has no figure"
        return effect
    if not headline_is_row_mean(run, credits):
        effect.why = (f"the headline ({run.metric}) is not the plain mean of the {len(credits)} rows' verdicts in "
                      f"{run.predictions.name} (groups, sums or categories), so the files do not say")
        return effect
    multiplier = _MULTIPLIER[run.scale.kind]  # type: ignore[union-attr]  # headline_is_row_mean checked it
    effect.without = (sum(credits) - effect.judged_credit) / len(credits) * multiplier
    if not judged_run:
        effect.at_most = (sum(credits) + effect.unread) / len(credits) * multiplier
    return effect
