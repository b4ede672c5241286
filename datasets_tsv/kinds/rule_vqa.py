"""Short-answer benchmarks with a rule scorer of their own (TallyQA, CountBenchQA, ZEROBench, MTVQA_TEST).

The prompt is VLMEvalKit's: the images, then the question followed by the metric's suffix (PROMPT_SUFFIX, copied
from vlmeval/dataset/image_vqa.py; the catalog may give another with `suffix`). The ground truth is read from
`answer_column` (ZEROBench keeps it in `answers`). Scoring: vlmkit.scoring.kinds.rule_vqa, chosen by `metric`
(TallyQA's headline is VLMEvalKit's `TallyQA`, a fraction; each result carries VLMEvalKit's figure for the same replies).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

PROMPT_SUFFIX = {
    "tallyqa": "\nAnswer the question using a single number.",
    "countbench": " Note that: answer with a number directly e.g. 3. Do not include any additional text.",
    "zerobench": (
        " \n\n\nLet's think step by step and give the final answer in curly braces,  like this: {final answer}"
    ),
    "mtvqa": "\nAnswer the question using a word or phrase in the language of the question.",
}


class RuleVQADataset(TSVDataset):
    """Image VQA scored by one benchmark's own rule (see the module docstring)."""

    kind: ClassVar[str] = "vqa"

    def __init__(self, name: str, *, metric: str, suffix: str | None = None, answer_column: str = "answer",
                 **kwargs: Any) -> None:
        if metric not in PROMPT_SUFFIX:
            raise ValueError(f"{name}: unknown rule VQA metric {metric!r} (expected one of {', '.join(PROMPT_SUFFIX)})")
        if suffix is not None and not isinstance(suffix, str):
            raise TypeError(f"{name}: the prompt suffix must be text, got {suffix!r}")
        self.metric = metric
        self.suffix = PROMPT_SUFFIX[metric] if suffix is None else suffix
        self.answer_column = answer_column
        self.answer_columns = (answer_column, *(("category",) if metric == "mtvqa" else ()))
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return self.text(line, "question") + self.suffix

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.rule_vqa import score_rule_vqa

        if self.answer_column != "answer":
            df = df.drop(columns=["answer"], errors="ignore").rename(columns={self.answer_column: "answer"})
        return score_rule_vqa(df, self.metric)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "vqa", "metric": self.metric, "suffix": self.suffix, "answer_column": self.answer_column}
