"""SIUO_GEN: VLMEvalKit's SIUOGenDataset class (vlmeval/dataset/siuo_gen.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image(s), then its `question` as it is. Scoring:
vlmkit.scoring.benchmarks.siuo_gen: safety and effectiveness by the judge a run gives with --judge (VLMEvalKit's
run.py default: gpt-4o-mini), else by VLMEvalKit's exact_matching rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset


class SIUOGenDataset(TSVDataset):
    """SIUO_GEN (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ()

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.siuo_gen import score_siuo_gen

        try:
            return score_siuo_gen(df, judge)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "siuo_gen"}
