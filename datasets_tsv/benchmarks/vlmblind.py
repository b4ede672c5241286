"""VLMs are Blind (VLMBlind): VLMEvalKit's VLMBlind, an MCQ-type dataset whose answers are open (`answers` column).

The prompt is VLMEvalKit's generic MCQ prompt (datasets_tsv.kinds.mcq.mcq_prompt: `Hint: ...\\n` when there is one,
`Question: {question}\\n`, and the options block only when the row has option columns). Scoring:
vlmkit.scoring.benchmarks.vlmblind, with the catalog's `task_rules` (task -> rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.mcq import mcq_prompt, row_options


class VLMBlindDataset(TSVDataset):
    """VLMs are Blind (module docstring)."""

    kind: ClassVar[str] = "mcq"
    answer_columns: ClassVar[tuple[str, ...]] = ("answers", "task")

    def __init__(self, name: str, *, task_rules: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        from vlmkit.scoring.benchmarks.vlmblind import RULES

        rules = dict(task_rules or {})
        bad = sorted({str(r) for r in rules.values() if r not in RULES})
        if bad:
            raise ValueError(f"{name}: task_rules: unknown rule(s) {', '.join(bad)}; choose from {', '.join(RULES)}")
        self.task_rules = rules
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        hint = line.get("hint")
        return mcq_prompt(self.text(line, "question"), row_options(line), None if is_missing(hint) else str(hint))

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.vlmblind import score_vlmblind

        result = score_vlmblind(df, self.task_rules)
        if judge is not None:
            result.notes.append("VLMEvalKit scores VLMBlind by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "vlmblind", "task_rules": self.task_rules}
