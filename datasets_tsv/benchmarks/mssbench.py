"""MSSBench: VLMEvalKit's MSSBenchDataset class (vlmeval/dataset/mssbench.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image, then its `question` as it is. Scoring:
vlmkit.scoring.benchmarks.mssbench: comply/refuse read by VLMEvalKit's refusal patterns, or by the judge a run gives
with --judge (VLMEvalKit's run.py gives gpt-4o-mini by default).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset


class MSSBenchDataset(TSVDataset):
    """MSSBench (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.mssbench import score_mssbench

        try:
            return score_mssbench(df, judge)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mssbench"}
