"""RefCOCO: VLMEvalKit's RefCOCODataset (vlmeval/dataset/refcoco.py at e8e78f05), box grounding.

The prompt, as VLMEvalKit builds it (ImageBaseDataset.build_prompt): the row's image(s), then its `question` as it
is. Scoring: vlmkit.scoring.benchmarks.refcoco (box IoU >= 0.5, per RefCOCO/RefCOCO+/RefCOCOg split), by rule.
VLMEvalKit renames each `index` to `<split>_<index>` on load; vlmkit keeps the TSV's `index`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset


class RefCOCODataset(TSVDataset):
    """RefCOCO (module docstring)."""

    kind: ClassVar[str] = "other"
    answer_columns: ClassVar[tuple[str, ...]] = ()

    def scoring_problem(self) -> str | None:
        boxes = ("bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2")
        if not any(c in self.data.columns for c in ("answer", "bbox", "x1")) and not all(
                c in self.data.columns for c in boxes):  # fmt: skip
            return f"{self.tsv_path}: no gold box (columns bbox_x1..bbox_y2, answer, x1..y2 or bbox), needed to " \
                   f"score {self.name}"  # fmt: skip
        return None

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.refcoco import score_refcoco

        problem = self.scoring_problem()
        if problem:
            raise DatasetError(problem)
        try:
            result = score_refcoco(df, self.name)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None
        if judge is not None:
            result.notes.append(f"VLMEvalKit scores {self.name} by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "refcoco"}
