"""NaturalBench (NaturalBenchDataset): VLMEvalKit's NaturalBenchDataset prompt and scorer.

The prompt, character for character: the row's images, then `{question} Please answer Yes or No.` for a row of
`type` yes_no, `{question} Please output the letter corresponding to the correct option.` for multiple_choice.
Scoring: vlmkit.scoring.benchmarks.naturalbench (groups of four rows; question, image, binary and group scores as fractions).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

SUFFIX = {
    "yes_no": "Please answer Yes or No.",
    "multiple_choice": "Please output the letter corresponding to the correct option.",
}


class NaturalBenchDataset(TSVDataset):
    """NaturalBench natural adversarial pairs (module docstring)."""

    kind: ClassVar[str] = "mcq"
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "type")
    answer_columns: ClassVar[tuple[str, ...]] = ("type",)

    def prompt_text(self, line: dict[str, Any]) -> str:
        task_type = self.text(line, "type").strip()
        if task_type not in SUFFIX:
            raise DatasetError(f"{self._where(line, 'type')}: {task_type!r} is not yes_no or multiple_choice")
        return f"{self.text(line, 'question')} {SUFFIX[task_type]}"

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.naturalbench import score_naturalbench

        result = score_naturalbench(df)
        if judge is not None:
            result.notes.append("VLMEvalKit scores NaturalBench by its rule only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "naturalbench"}
