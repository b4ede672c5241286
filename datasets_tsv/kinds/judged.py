"""Benchmarks VLMEvalKit scores with an LLM judge: their prompts, and the base of the classes that score them.

The prompt is VLMEvalKit's for these benchmarks: the images, then the text of `question_column` (default
`question`) followed by `suffix` (default nothing), e.g. MathVista/MMVet/LLaVABench (the question alone), MathVerse's
CoT variant (`query_cot`), the ShortQA family (`\\nPlease directly provide a short answer to the question. `).

- `JudgedDataset`: a judge-scored benchmark. Its catalog row names its scorer (`scorer`, e.g. `mathvista`: the
  function `score_<scorer>(df, judge)` of vlmkit/scoring/benchmarks/<scorer>.py, with the judge prompts beside it)
  and the columns it needs (`answer_columns`); a family whose scoring takes more (MMVet, LLaVABench, the ShortQA
  kind) is a subclass overriding `score_with_judge(df, judge)`. `evaluate` without a judge is refused in one line
  naming the flags, and a row the scorer cannot use (ValueError, BadRow) in one line naming the file.
- `JudgeOnlyDataset`: a judged benchmark whose scorer vlmkit does not have yet: its prompt, for inference only
  (`--mode infer`); `evaluate` refuses in one line and the answers stay in predictions.jsonl.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.common.math_answers import BadRow
from vlmkit.scoring.ids import load_benchmark_scorer, require_benchmark_scorer
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

JUDGE_KINDS = ("vqa", "mcq", "shortqa", "caption")


def judge_needed(name: str, scorer: str) -> str:
    """The one line that says a benchmark cannot be scored without a judge, and how to give one."""
    return (
        f"{name} is scored by an LLM judge ({scorer}): pass --judge MODEL --judge-api-base URL (any "
        "OpenAI-compatible server), or --mode infer to collect the answers only"
    )


class JudgedDataset(TSVDataset):
    """A judge-scored benchmark: its prompt and its scorer (see the module docstring)."""

    judge_scorer = "LLM judge"  # the scorer in words (or its id), for messages and scorer_params

    def __init__(
        self, name: str, *, kind: str = "vqa", question_column: str = "question", suffix: str = "",
        scorer: str | None = None, answer_columns: Sequence[str] | None = None, **kwargs: Any,
    ) -> None:
        if kind not in JUDGE_KINDS:
            raise ValueError(f"{name}: unknown kind {kind!r} (expected one of {', '.join(JUDGE_KINDS)})")
        if scorer is not None:
            try:
                require_benchmark_scorer(scorer)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
            self.judge_scorer = scorer
        self.scorer = scorer
        if answer_columns is not None:
            self.answer_columns = tuple(answer_columns)
        self.kind = kind
        self.question_column = question_column
        self.suffix = suffix
        self.prompt_columns = (question_column,)
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return self.text(line, self.question_column) + self.suffix

    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False, judge: Judge | None = None) -> EvalResult:
        if judge is None:  # said first: no column of the file matters without a judge
            raise DatasetError(judge_needed(self.name, self.judge_scorer))
        return super().evaluate(predictions, fuzzy=fuzzy, judge=judge)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        assert judge is not None  # evaluate() refuses first without one
        try:
            return self.score_with_judge(df, judge)
        except DatasetError:
            raise
        except BadRow as exc:  # names the row and the field, not the file
            raise DatasetError(f"{self.tsv_path}: {exc}") from None
        except ValueError as exc:  # a scorer's complaint about a row, naming the file: one line, no traceback
            raise DatasetError(str(exc)) from None

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        """The scorer's result: `score_<scorer>(df, judge)`. A ValueError it raises should name the file (an override
        passes `what=str(self.tsv_path)`); a BadRow is given the file here."""
        if self.scorer is None:
            raise NotImplementedError(f"{type(self).__name__} has no judge scorer")
        return load_benchmark_scorer(self.scorer)(df, judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer, "question_column": self.question_column, "suffix": self.suffix}


class JudgeOnlyDataset(JudgedDataset):
    """A judged benchmark's prompt only: vlmkit has no scorer for it yet (see the module docstring)."""

    judge_scorer = "judge (not in vlmkit yet)"

    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False, judge: Judge | None = None) -> EvalResult:
        raise DatasetError(
            f"{self.name} is scored by an LLM judge in VLMEvalKit and vlmkit has no scorer for it yet: it runs for "
            "inference only (--mode infer); the answers are kept in predictions.jsonl"
        )
