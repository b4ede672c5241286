"""MM-Math (middle-school math with diagrams): VLMEvalKit's MMMath (vlmeval/dataset/mmmath.py at e8e78f05).

The prompt is VLMEvalKit's ImageBaseDataset prompt: the row's images, then its `question`. Scoring:
vlmkit.scoring.benchmarks.mm_math, whose LaTeX parsing needs antlr4-python3-runtime 4.11 (`pip install
'vlmkit[math]'`): a run without it is refused before inference, in one line naming that command.
"""

from __future__ import annotations

from typing import ClassVar

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring


class MMMathDataset(OwnRuleScoring, TSVDataset):
    """MM-Math (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "difficulty", "year", "knowledge_l1", "knowledge_l2")
    rule_scorer: ClassVar[str] = "mm_math"

    def scoring_problem(self) -> str | None:
        from vlmkit.scoring.benchmarks.mm_math_judge import missing_library

        return super().scoring_problem() or missing_library()
