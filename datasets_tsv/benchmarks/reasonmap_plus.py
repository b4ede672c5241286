"""ReasonMap-Plus: VLMEvalKit's ReasonMap_Plus class (vlmeval/dataset/reasonmap_plus.py at e8e78f05).

The prompt: the row's image, then its `question` as it is (VLMEvalKit's build_prompt; it hands the model the `image`
cell itself as the image's value, vlmkit the decoded file). Scoring: vlmkit.scoring.benchmarks.reasonmap_plus, by
rule (yes/no, letter, integer or exact match by the row's `type`; accuracy and difficulty-weighted accuracy).
"""

from __future__ import annotations

from typing import ClassVar

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring


class ReasonMapPlusDataset(OwnRuleScoring, TSVDataset):
    """ReasonMap-Plus (module docstring)."""

    rule_scorer: ClassVar[str] = "reasonmap_plus"

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "type", "difficulty_city")

