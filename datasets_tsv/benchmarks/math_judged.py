"""The judged math benchmarks: MathVista_MINI, the MathVerse_MINI variants, MathVision / MathVision_MINI.

The prompt is VLMEvalKit's, as `JudgedDataset` builds it from the catalog's kwargs: the images, then the question
(MathVerse's CoT variant: `query_cot`). Scoring needs a judge (`--judge`); the scorers, with the judge prompts
beside them, are vlmkit.scoring.benchmarks.mathvista / mathverse / mathvision. A row the scorer cannot use (an unknown
`answer_type`, a `choices` cell that is not a list, ...) stops the evaluation in one line naming file, row and field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.common.math_answers import BadRow
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.judged import JudgedDataset


class _MathJudged(JudgedDataset):
    def _checked(self, scorer: Callable[[pd.DataFrame, Judge], EvalResult], df: pd.DataFrame,
                 judge: Judge) -> EvalResult:
        try:
            return scorer(df, judge)
        except BadRow as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None


class MathVistaDataset(_MathJudged):
    """MathVista: judge extraction, comparison by answer type and precision, breakdown by task and skill."""

    judge_scorer = "mathvista"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question", "question_type", "answer_type")

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.mathvista import score_mathvista

        return self._checked(score_mathvista, df, judge)


class MathVerseDataset(_MathJudged):
    """MathVerse: judge extraction, then a judge verdict against the standard answer; breakdown by problem version."""

    judge_scorer = "mathverse"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question_for_eval")

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.mathverse import score_mathverse

        return self._checked(score_mathverse, df, judge)


class MathVisionDataset(_MathJudged):
    """MathVision: judge extraction, then VLMEvalKit's is_equal (without eval); breakdown by category."""

    judge_scorer = "mathvision"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question")

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.mathvision import score_mathvision

        return self._checked(score_mathvision, df, judge)
