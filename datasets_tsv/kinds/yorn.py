"""Yes/no questions over images (MME, POPE, HallusionBench, AMBER, VSR-zeroshot). The prompt is the question
(VLMEvalKit's), followed by `suffix` where the catalog gives one (AMBER: `\\nPlease answer yes or no.`, appended
to the text part as VLMEvalKit's ImageYORNDataset.build_prompt does).

The metric is a constructor option set by the catalog: `acc` (plain accuracy), `mme` (acc + acc+ per category,
perception/cognition sums), `pope` (F1 with Yes positive), `hallusion` (aAcc/fAcc/qAcc), `amber` (accuracy per
AMBER category and their mean, `Avg ACC`), `vsr` (precision/recall/acc x100 and F1 as a fraction, as VLMEvalKit).
Each result carries VLMEvalKit's figure for the same replies (its Y/N rule; vlmkit.scoring.kinds.yorn_vlmevalkit).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

YORN_METRICS = ("acc", "mme", "pope", "hallusion", "amber", "vsr")


class ImageYORNDataset(TSVDataset):
    """Image yes/no: `answer` is Yes or No."""

    kind: ClassVar[str] = "yorn"

    def __init__(self, name: str, *, metric: str = "acc", suffix: str = "", **kwargs: Any) -> None:
        if metric not in YORN_METRICS:
            raise ValueError(f"{name}: unknown yes/no metric {metric!r} (expected one of {', '.join(YORN_METRICS)})")
        if not isinstance(suffix, str):
            raise TypeError(f"{name}: the prompt suffix must be text, got {suffix!r}")
        self.metric = metric
        self.suffix = suffix
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return self.text(line, "question") + self.suffix

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.yorn import score_yorn

        return score_yorn(df, metric=self.metric, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "yorn", "metric": self.metric, **({"suffix": self.suffix} if self.suffix else {})}
