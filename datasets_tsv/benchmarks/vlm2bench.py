"""VLM2Bench: VLMEvalKit's VLM2Bench class (vlmeval/dataset/vlm2bench.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's images (its `image` cell holds several), then
`Question: <question>\\n`. Scoring: vlmkit.scoring.benchmarks.vlm2bench (true/false pairs, counting, grouping per
`category`), by rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring


class VLM2BenchDataset(OwnRuleScoring, TSVDataset):
    """VLM2Bench (module docstring)."""

    rule_scorer: ClassVar[str] = "vlm2bench"

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category")

    def prompt_text(self, line: dict[str, Any]) -> str:
        return f"Question: {self.text(line, 'question')}\n"

