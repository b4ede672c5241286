"""VLRMBench, VLRMBench_MultiSolution, VLRMBench_Foresight: VLMEvalKit's VLRMBench class (vlmeval/dataset/vlrmbench.py
at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image(s), then its `question` as it is. Scoring:
vlmkit.scoring.benchmarks.vlrmbench (step-label F1 per `category`, multi_solution pairs, foresight yes/no), by rule;
VLMEvalKit asks no judge.
"""

from __future__ import annotations

from typing import ClassVar

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring


class VLRMBenchDataset(OwnRuleScoring, TSVDataset):
    """VLRMBench (module docstring)."""

    rule_scorer: ClassVar[str] = "vlrmbench"

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("category",)  # and answer / task_gt by category (the scorer says)

