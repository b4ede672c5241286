"""Benchmarks VLMEvalKit scores with an LLM judge: their prompts, for inference only, until vlmkit has a judge.

The prompt is VLMEvalKit's for these benchmarks: the images, then the text of `question_column` (default
`question`) followed by `suffix` (default nothing), e.g. MathVista/MMVet/LLaVABench (the question alone), MathVerse's
CoT variant (`query_cot`), the ShortQA family (`\\nPlease directly provide a short answer to the question. `).
`evaluate` refuses in one line: the answers stay in predictions.jsonl for a judge to score later. The registry
builds these only for inference (`--mode infer`); see datasets_tsv.catalog.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.scoring.result import EvalResult

from .base import DatasetError, TSVDataset

JUDGE_KINDS = ("vqa", "mcq", "shortqa", "caption")


class JudgeOnlyDataset(TSVDataset):
    """A judge-scored benchmark's prompts (see the module docstring); never scored here."""

    def __init__(
        self, name: str, *, kind: str = "vqa", question_column: str = "question", suffix: str = "", **kwargs: Any
    ) -> None:
        if kind not in JUDGE_KINDS:
            raise ValueError(f"{name}: unknown kind {kind!r} (expected one of {', '.join(JUDGE_KINDS)})")
        self.kind = kind
        self.question_column = question_column
        self.suffix = suffix
        self.prompt_columns = (question_column,)
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return self.text(line, self.question_column) + self.suffix

    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False) -> EvalResult:
        raise DatasetError(
            f"{self.name} is scored by an LLM judge in VLMEvalKit and vlmkit has no --judge yet: it runs for "
            "inference only (--mode infer); the answers are kept in predictions.jsonl"
        )

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "judge (not in vlmkit yet)", "question_column": self.question_column, "suffix": self.suffix}
