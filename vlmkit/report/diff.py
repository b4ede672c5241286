"""Two runs of one dataset compared sample by sample: the samples whose verdict changed.

Samples are matched by index. A change is any verdict that differs (samples.VERDICTS: hit -> miss, miss -> hit,
hit -> error, unread -> hit, ...); a sample in one run only is `absent` in the other. A VQA sample whose partial
score moved (0.3 -> 0.6) keeps the verdict `partial` and is not listed. Changes are sorted by transition (the
ones that lost a right answer first), then in the first run's order.

The paired test (vlmkit.report.paired) says whether the two runs differ on the samples both scored: McNemar's exact
test on 0/1 outcomes (an error or an unread answer is a miss; circular MCQ compares whole groups, read from each
group's main row), a paired bootstrap of the mean score difference where a run has graded scores (VQA, ANLS). The
outcome is per row: for a headline built from rows in another way (MME's acc+, F1) it tests the rows, not the figure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from vlmkit.report.paired import PairedTest, mcnemar, paired_bootstrap
from vlmkit.report.runs import ReportInputError, Run
from vlmkit.report.samples import Sample, read_samples

ABSENT = "absent"
CIRCULAR_BASE = 1_000_000  # a circular group is index % this (vlmkit.scoring.kinds.mcq; the report reads no scorer)
_SCORED = ("hit", "miss", "partial", "unread", "error")  # verdicts with an outcome (unscored: none)
# Order of transitions in the table: losses of a right answer first, then gains, then the rest.
_RANK = {"hit": 0, "partial": 1, "miss": 2, "unread": 3, "unscored": 4, "error": 5, ABSENT: 6}


@dataclass
class Change:
    key: str
    a: Sample | None
    b: Sample | None

    @property
    def before(self) -> str:
        return self.a.verdict if self.a else ABSENT

    @property
    def after(self) -> str:
        return self.b.verdict if self.b else ABSENT

    @property
    def transition(self) -> str:
        return f"{self.before} -> {self.after}"


@dataclass
class Diff:
    a: Run
    b: Run
    changes: list[Change]
    compared: int  # samples present in both runs
    notes: list[str]
    test: PairedTest | None = None  # None where no sample was scored in both runs

    def counts(self) -> Counter[str]:
        return Counter(c.transition for c in self.changes)


def _samples(run: Run, warnings: list[str]) -> list[Sample]:
    if not run.predictions.is_file():
        raise ReportInputError(f"{run.path}: no {run.predictions.name} beside it (the diff compares its samples)")
    return read_samples(run.predictions, run.metric, warnings)


def diff_runs(a: Run, b: Run) -> Diff:
    """The samples whose verdict differs between a and b (runs of one dataset; ReportInputError otherwise)."""
    if a.dataset != b.dataset:
        raise ReportInputError(
            f"{a.path} is a run of {a.dataset!r} and {b.path} of {b.dataset!r}: --diff compares two runs of one dataset"
        )
    notes = []
    md5_a, md5_b = (r.results.dataset.get("md5") for r in (a, b))
    if md5_a and md5_b and md5_a != md5_b:
        notes.append(f"the two runs read different files of {a.dataset} (MD5 {md5_a} and {md5_b}): targets may differ")
    if a.metric != b.metric or a.scorer != b.scorer:
        notes.append(f"scored differently: {a.scorer}/{a.metric} and {b.scorer}/{b.metric}")
    warnings: list[str] = []  # fields of the wrong type in either predictions file, left out
    in_a = {s.key: s for s in _samples(a, warnings)}
    in_b = {s.key: s for s in _samples(b, warnings)}
    notes += warnings
    order = list(in_a) + [k for k in in_b if k not in in_a]
    position = {k: i for i, k in enumerate(order)}
    changes = [
        Change(key, in_a.get(key), in_b.get(key))
        for key in order
        if (in_a[key].verdict if key in in_a else ABSENT) != (in_b[key].verdict if key in in_b else ABSENT)
    ]
    changes.sort(key=lambda c: (_RANK.get(c.before, 9), _RANK.get(c.after, 9), position[c.key]))
    compared = len(in_a.keys() & in_b.keys())
    only_a, only_b = len(in_a) - compared, len(in_b) - compared
    if only_a or only_b:
        notes.append(f"{only_a} sample(s) only in the first run, {only_b} only in the second (listed as absent)")
    return Diff(a, b, changes, compared, notes, paired_test(in_a, in_b))


def _outcome(sample: Sample) -> float:
    """A sample's outcome on the unit scale: its score where it has one, else 1 for a hit, 0 otherwise."""
    if sample.verdict in ("error", "unread"):
        return 0.0
    if sample.score is not None:
        return float(sample.score)
    return 1.0 if sample.verdict == "hit" else 0.0


def _main_row(sample: Sample) -> bool:
    try:
        value = float(sample.index)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return value.is_integer() and 0 <= value < CIRCULAR_BASE


def paired_test(in_a: dict[str, Sample], in_b: dict[str, Sample]) -> PairedTest | None:
    """McNemar or a paired bootstrap over the samples both runs scored (module docstring)."""
    both = [k for k in in_a if k in in_b and in_a[k].verdict in _SCORED and in_b[k].verdict in _SCORED]
    if not both:
        return None
    grouped = [k for k in both if in_a[k].group_hit is not None and in_b[k].group_hit is not None]
    if grouped and len(grouped) == len(both):
        mains = [k for k in grouped if _main_row(in_a[k])]
        if mains:
            return mcnemar([bool(in_a[k].group_hit) for k in mains], [bool(in_b[k].group_hit) for k in mains],
                           unit="circular group")
    a = [_outcome(in_a[k]) for k in both]
    b = [_outcome(in_b[k]) for k in both]
    if all(v in (0.0, 1.0) for v in (*a, *b)):
        return mcnemar([v == 1.0 for v in a], [v == 1.0 for v in b])
    return paired_bootstrap(a, b)


def _short(value: object, width: int) -> str:
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def diff_text(diff: Diff, *, most: int | None = None) -> str:
    """The console form: a summary line per transition, then one line per changed sample."""
    from vlmkit.report.export import fixed_width
    from vlmkit.report.table import display_interval

    a, b = diff.a, diff.b
    by_count = sorted(diff.counts().items(), key=lambda kv: -kv[1])
    lines = [
        f"A: {a.label} ({a.status}, {a.path})",
        f"B: {b.label} ({b.status}, {b.path})",
        f"{len(diff.changes)} of {diff.compared} sample(s) changed verdict"
        + (": " + ", ".join(f"{t} {n}" for t, n in by_count) if by_count else ""),
    ]
    lines += [f"{name}: {a_or_b.metric or 'value'} {text}" for name, a_or_b in (("A", a), ("B", b))
              if (text := display_interval(a_or_b, with_value=True))]
    if diff.test is not None:
        lines.append(diff.test.summary())
    lines += [f"note: {n}" for n in diff.notes]
    shown = diff.changes if most is None else diff.changes[:most]
    if shown:
        rows = []
        for change in shown:
            sa, sb = change.a, change.b
            ref = sa or sb
            rows.append([
                _short(ref.index if ref else change.key, 12),
                change.before,
                change.after,
                _short(_read(sa), 18),
                _short(_read(sb), 18),
                _short(ref.target if ref else None, 14),
                _short(ref.prompt_text() if ref else None, 50),
            ])
        table = fixed_width(["index", "A", "B", "A read", "B read", "target", "question"], rows, set())
        lines += ["", table]
        if most is not None and len(diff.changes) > most:
            lines.append(f"... and {len(diff.changes) - most} more")
    return "\n".join(lines)


def _read(sample: Sample | None) -> str:
    """What the scorer read from a sample's reply (or its error kind)."""
    if sample is None:
        return ""
    if sample.verdict == "error":
        return (sample.error or "error").split(":", 1)[0]
    if sample.extracted is not None:
        return str(sample.extracted)
    if sample.score is not None:
        return f"{sample.score:.2f}"
    return _short(sample.prediction, 18)
