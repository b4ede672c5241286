"""MMVet / MMVet_Hard: open answers graded 0-1 by an LLM judge.

The prompt is VLMEvalKit's: the images, then the question alone (datasets_tsv.kinds.judged). The scorer, with the
judge prompt beside it, is vlmkit.scoring.benchmarks.mmvet. Without a judge, `evaluate` is refused in one line; a
scorer's complaint about a row (a missing cell, a duplicate index) names the file.
"""

from __future__ import annotations

from typing import ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.judged import JudgedDataset


class MMVetDataset(JudgedDataset):
    """MMVet / MMVet_Hard: graded 0-1 by the judge; `category` holds the capabilities (e.g. `rec,ocr`)."""

    judge_scorer = "MMVet grading (LLM judge, 0-1 per answer)"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category")

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.mmvet import score_mmvet

        return score_mmvet(df, judge, what=str(self.tsv_path))
