"""GroundingME: VLMEvalKit's GroundingME class (vlmeval/dataset/groundingme.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image(s), then `PROMPT_TEMPLATE` with the row's `question` (the
description of the object). Scoring: vlmkit.scoring.benchmarks.groundingme (box IoU), by rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring

PROMPT_TEMPLATE = (
    "All spatial relationships are defined from the viewer's perspective, where 'front' means closer to the viewer and "
    "'back' means farther from the viewer. Please provide the bounding box coordinate of the object the following "
    "statement describes:\n{description}\nEnsure that all details mentioned about the object are accurate. Provide at "
    "most one bounding box. If a matching object is found, provide its bounding box as a JSON in the format "
    '{{"bbox_2d": [x1, y1, x2, y2]}}. If no matching object is found, output {{"bbox_2d": null}}.'
)


class GroundingMEDataset(OwnRuleScoring, TSVDataset):
    """GroundingME (module docstring)."""

    rule_scorer: ClassVar[str] = "groundingme"

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "width", "height", "subtask_l1")

    def prompt_text(self, line: dict[str, Any]) -> str:
        return PROMPT_TEMPLATE.format(description=self.text(line, "question"))

