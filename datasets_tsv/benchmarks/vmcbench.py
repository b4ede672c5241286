"""VMCBench (VMCBench_DEV, VMCBench_TEST): VLMEvalKit's VMCBenchDataset prompt and scorer.

The prompt, character for character: `Question: {question}\\n`, then (when the row has options) `Options:\\n`, one
`{L}. {text}\\n` per option column A-Z the row fills, and `Answer with the option's letter from the given choices
directly. \\n` (space before the newline); no hint. Scoring: vlmkit.scoring.benchmarks.vmcbench (MMMU's reading rule,
accuracy x100 per category and the group means the catalog gives as `category_means`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.mcq import row_options

CLOSING = "Answer with the option's letter from the given choices directly. \n"


def vmcbench_prompt(question: str, options: list[tuple[str, str]]) -> str:
    prompt = f"Question: {question}\n"
    if options:
        prompt += "Options:\n" + "".join(f"{letter}. {text}\n" for letter, text in options) + CLOSING
    return prompt


class VMCBenchDataset(TSVDataset):
    """VMCBench multiple choice (module docstring)."""

    kind: ClassVar[str] = "mcq"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category")

    def __init__(self, name: str, *, category_means: Mapping[str, Sequence[str]] | None = None,
                 **kwargs: Any) -> None:
        if category_means is not None and not (
            isinstance(category_means, Mapping)
            and all(isinstance(v, (list, tuple)) and all(isinstance(c, str) for c in v)
                    for v in category_means.values())
        ):
            raise ValueError(f"{name}: category_means must map a group name to a list of categories")
        self.category_means = None if category_means is None else {str(k): list(v) for k, v in category_means.items()}
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return vmcbench_prompt(self.text(line, "question"), row_options(line))

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.vmcbench import score_vmcbench

        result = score_vmcbench(df, self.category_means)
        if judge is not None:
            result.notes.append("VLMEvalKit scores VMCBench by its rule only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "vmcbench", **({"category_means": self.category_means} if self.category_means else {})}
