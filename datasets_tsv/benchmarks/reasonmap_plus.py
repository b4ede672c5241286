"""ReasonMap-Plus: VLMEvalKit's ReasonMap_Plus class (vlmeval/dataset/reasonmap_plus.py at e8e78f05).

The prompt: the row's image, then its `question` as it is (VLMEvalKit's build_prompt; it hands the model the `image`
cell itself as the image's value, vlmkit the decoded file). Scoring: vlmkit.scoring.benchmarks.reasonmap_plus, by
rule (yes/no, letter, integer or exact match by the row's `type`; accuracy and difficulty-weighted accuracy).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset


class ReasonMapPlusDataset(TSVDataset):
    """ReasonMap-Plus (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "type", "difficulty_city")

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.reasonmap_plus import score_reasonmap_plus

        try:
            result = score_reasonmap_plus(df)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None
        if judge is not None:
            result.notes.append(f"VLMEvalKit scores {self.name} by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "reasonmap_plus"}
