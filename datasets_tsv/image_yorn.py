"""Yes/no questions over images (MME, POPE, HallusionBench). The prompt is the question alone (VLMEvalKit's).

The metric is a constructor option set by the catalog: `acc` (plain accuracy), `mme` (acc + acc+ per category,
perception/cognition sums), `pope` (F1 with Yes positive), `hallusion` (aAcc/fAcc/qAcc).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from .base import TSVDataset

YORN_METRICS = ("acc", "mme", "pope", "hallusion")


class ImageYORNDataset(TSVDataset):
    """Image yes/no: `answer` is Yes or No."""

    kind: ClassVar[str] = "yorn"

    def __init__(self, name: str, *, metric: str = "acc", **kwargs: Any) -> None:
        if metric not in YORN_METRICS:
            raise ValueError(f"{name}: unknown yes/no metric {metric!r} (expected one of {', '.join(YORN_METRICS)})")
        self.metric = metric
        super().__init__(name, **kwargs)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.yorn import score_yorn

        return score_yorn(df, metric=self.metric, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "yorn", "metric": self.metric}
