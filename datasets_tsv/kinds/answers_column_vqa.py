"""VizWiz: VQA whose ground truths are in an `answers` column (a list), asked with the question alone.

VLMEvalKit builds VizWiz's prompt as ImageBaseDataset does (the question, no short-answer instruction) and scores
the `answers` list with the VQA score; the catalog gives the column as `answer_column`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.vqa import ImageVQADataset


class AnswersColumnVQADataset(ImageVQADataset):
    """Image VQA with the ground truths in another column than `answer` (see the module docstring)."""

    def __init__(self, name: str, *, answer_column: str = "answers", **kwargs: Any) -> None:
        self.answer_column = answer_column
        self.answer_columns = (answer_column,)
        kwargs.setdefault("short_answer", False)
        super().__init__(name, **kwargs)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        if self.answer_column != "answer":
            df = df.drop(columns=["answer"], errors="ignore").rename(columns={self.answer_column: "answer"})
        return super()._score(df, fuzzy=fuzzy, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {**super().scorer_params(), "answer_column": self.answer_column}
