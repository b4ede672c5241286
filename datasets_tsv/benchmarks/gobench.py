"""GOBench: VLMEvalKit's GOBenchDataset class (vlmeval/dataset/gobench.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's first image, then `SYSTEM_TEXT`, a line break and the `question`.
Scoring: vlmkit.scoring.benchmarks.gobench (reality, aesthetics and consistency ratings against the answer's), by
rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

# VLMEvalKit's SYS: its `\` line continuation keeps the next line's 8 spaces of indentation
SYSTEM_TEXT = (
    "Please analyze the image based on the provided prompt and answer the following three questions.\n\n---\n"
    "**Question 1: Reality Assessment**\n"
    "Please answer each of the provided reality questions with only Yes, No, or Cannot Determine.\n\n---\n"
    "**Question 2: Aesthetics Rating**\nPlease rate the aesthetics of the image on a scale of 1-5.\n\n---\n"
    "**Question 3: Instruction Consistency Rating**\n"
    "Based on the image and the provided prompt,         please rate the instruction consistency of the generated "
    "image on a scale of 1-5.\n"
)


class GOBenchDataset(TSVDataset):
    """GOBench (module docstring)."""

    kind: ClassVar[str] = "other"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return SYSTEM_TEXT + "\n" + self.text(line, "question")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        return [*({"type": "image", "value": p} for p in self._images_at(pos)[:1]),
                {"type": "text", "value": self.prompt_text(row)}]  # fmt: skip

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.gobench import score_gobench

        try:
            result = score_gobench(df)
        except ValueError as exc:
            raise DatasetError(f"{self.tsv_path}: {exc}") from None
        if judge is not None:
            result.notes.append("VLMEvalKit's GOBench judge call never works (it calls judge.score, which its judges "
                                "lack), so its rule reads every reply; the judge given was not asked")  # fmt: skip
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "gobench"}
