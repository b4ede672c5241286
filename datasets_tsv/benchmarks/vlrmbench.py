"""VLRMBench, VLRMBench_MultiSolution, VLRMBench_Foresight: VLMEvalKit's VLRMBench class (vlmeval/dataset/vlrmbench.py
at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image(s), then its `question` as it is. Scoring:
vlmkit.scoring.benchmarks.vlrmbench (step-label F1 per `category`, multi_solution pairs, foresight yes/no), by rule;
VLMEvalKit asks no judge.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset


class VLRMBenchDataset(TSVDataset):
    """VLRMBench (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("category",)  # and answer / task_gt by category (the scorer says)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.vlrmbench import score_vlrmbench

        try:
            result = score_vlrmbench(df)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None
        if judge is not None:
            result.notes.append(f"VLMEvalKit scores {self.name} by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "vlrmbench"}
