"""GroundingME: VLMEvalKit's GroundingME class (vlmeval/dataset/groundingme.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image(s), then `PROMPT_TEMPLATE` with the row's `question` (the
description of the object). Scoring: vlmkit.scoring.benchmarks.groundingme (box IoU), by rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

PROMPT_TEMPLATE = (
    "All spatial relationships are defined from the viewer's perspective, where 'front' means closer to the viewer and "
    "'back' means farther from the viewer. Please provide the bounding box coordinate of the object the following "
    "statement describes:\n{description}\nEnsure that all details mentioned about the object are accurate. Provide at "
    "most one bounding box. If a matching object is found, provide its bounding box as a JSON in the format "
    '{{"bbox_2d": [x1, y1, x2, y2]}}. If no matching object is found, output {{"bbox_2d": null}}.'
)


class GroundingMEDataset(TSVDataset):
    """GroundingME (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "width", "height", "subtask_l1")

    def prompt_text(self, line: dict[str, Any]) -> str:
        return PROMPT_TEMPLATE.format(description=self.text(line, "question"))

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.groundingme import score_groundingme

        try:
            result = score_groundingme(df)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None
        if judge is not None:
            result.notes.append(f"VLMEvalKit scores {self.name} by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "groundingme"}
