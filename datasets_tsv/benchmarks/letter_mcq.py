"""Option-letter MCQ benchmarks whose prompt and scorer are their own (M3oralBench, SIUO_MCQ): VLMEvalKit's
M3oralBenchDataset and SIUOMCQDataset.

The prompt, as VLMEvalKit builds it: the row's images, then `Question: {question}\\n`, and when the row has options
among A-G, `Options:\\n`, one `X. {option}\\n` per option and the dataset's `instruction` (M3oralBench: `Please answer
with only one option letter.`, SIUO: `Please select one option letter only.`). Scoring:
vlmkit.scoring.benchmarks.letter_mcq with the catalog's `breakdowns` (column -> prefix of its figures).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

LETTERS = "ABCDEFG"


class LetterMCQDataset(TSVDataset):
    """Option-letter MCQ with its own prompt (module docstring)."""

    kind: ClassVar[str] = "mcq"

    def __init__(self, name: str, *, instruction: str, breakdowns: Mapping[str, str] | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        self.instruction = instruction
        self.breakdowns = dict(breakdowns or {})
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        text = f"Question: {self.text(line, 'question')}\n"
        options = {k: line[k] for k in LETTERS if k in line and not is_blank(line[k])}
        if options:
            text += "Options:\n" + "".join(f"{k}. {v}\n" for k, v in options.items()) + self.instruction
        return text

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.letter_mcq import score_letter_mcq

        result = score_letter_mcq(df, self.breakdowns)
        if judge is not None:
            result.notes.append(f"VLMEvalKit scores {self.name} by its rule only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "letter_mcq", "breakdowns": self.breakdowns}
