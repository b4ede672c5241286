"""VLM2Bench: VLMEvalKit's VLM2Bench class (vlmeval/dataset/vlm2bench.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's images (its `image` cell holds several), then
`Question: <question>\\n`. Scoring: vlmkit.scoring.benchmarks.vlm2bench (true/false pairs, counting, grouping per
`category`), by rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset


class VLM2BenchDataset(TSVDataset):
    """VLM2Bench (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category")

    def prompt_text(self, line: dict[str, Any]) -> str:
        return f"Question: {self.text(line, 'question')}\n"

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.vlm2bench import score_vlm2bench

        try:
            result = score_vlm2bench(df)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None
        if judge is not None:
            result.notes.append(f"VLMEvalKit scores {self.name} by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "vlm2bench"}
