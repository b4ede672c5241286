"""A benchmark scored by a rule of its own, asked with the plain prompt: its catalog row and its scorer module are the
whole of it.

The catalog row names this class and the scorer, e.g. `{"scorer": "crpe", "kind": "vqa", "answer_columns":
["answer", "category"]}`. The prompt is the row's images, then the question (and `suffix`, default nothing). Scoring
is `vlmkit.scoring.benchmarks.<scorer>.score_<scorer>(df, **scorer_options)`, the scorer registered by its module
(vlmkit.scoring.ids.benchmark_scorer): it returns an EvalResult named `<scorer>` that sets its scale. A benchmark
whose prompt differs writes its own class (datasets_tsv/benchmarks/<name>.py).

A judge given to the run is not asked (the rule scores every row); results.json says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.ids import load_benchmark_scorer, require_benchmark_scorer
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

RULE_KINDS = ("mcq", "yorn", "vqa", "caption", "other")


class RuleScoredDataset(TSVDataset):
    """A benchmark scored by `vlmkit.scoring.benchmarks.<scorer>` (module docstring)."""

    def __init__(
        self,
        name: str,
        *,
        scorer: str,
        kind: str = "vqa",
        answer_columns: Sequence[str] = ("answer",),
        suffix: str = "",
        scorer_options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            require_benchmark_scorer(scorer)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        if kind not in RULE_KINDS:
            raise ValueError(f"{name}: unknown kind {kind!r} (expected one of {', '.join(RULE_KINDS)})")
        self.scorer, self.kind, self.suffix = scorer, kind, suffix
        self.answer_columns = tuple(answer_columns)
        self.scorer_options = dict(scorer_options or {})
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return self.text(line, "question") + self.suffix

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        return score_by_rule(self, self.scorer, df, judge, self.scorer_options)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.scorer, **({"options": self.scorer_options} if self.scorer_options else {})}


def score_by_rule(dataset: TSVDataset, scorer: str, df: pd.DataFrame, judge: Judge | None,
                  options: Mapping[str, Any] | None = None) -> EvalResult:
    """`score_<scorer>(df, **options)` from vlmkit.scoring.benchmarks.<scorer>; a ValueError from the rule (a target it
    cannot read) is one line naming the TSV; a judge given to the run is not asked, and the result says so."""
    try:
        result: EvalResult = load_benchmark_scorer(scorer)(df, **dict(options or {}))
    except ValueError as exc:
        raise DatasetError(f"{dataset.tsv_path}: {exc}") from None
    if judge is not None:
        result.notes.append(f"{dataset.name} is scored by its rule only; the judge given was not asked")
    return result


class OwnRuleScoring:
    """For a benchmark class that writes its own prompt and is scored by its rule module
    (vlmkit.scoring.benchmarks.<rule_scorer>): put it before TSVDataset in the bases and name `rule_scorer`."""

    rule_scorer: ClassVar[str]

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        return score_by_rule(self, self.rule_scorer, df, judge)  # type: ignore[arg-type]

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.rule_scorer}
