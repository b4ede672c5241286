"""XSTest: VLMEvalKit's XSTestDataset (vlmeval/dataset/xstest.py at e8e78f05), a text-only safety benchmark.

The prompt is the row's `question` alone. Scoring: vlmkit.scoring.benchmarks.xstest (refusal labels by VLMEvalKit's
patterns, or by a judge when --judge is given).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset


class XSTestDataset(TSVDataset):
    """XSTest (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("question", "answer")

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.xstest import score_xstest

        return score_xstest(df, judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "xstest"}
