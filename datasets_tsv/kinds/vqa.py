"""Short-answer questions over images (TextVQA, DocVQA, ChartQA, OCRVQA, OCRBench).

The prompt is VLMEvalKit's: the question, then `\\nAnswer the question using a single word or phrase.`; OCRBench
in VLMEvalKit uses the question alone, which the catalog says with `short_answer=False`.
The metric is a constructor option set by the catalog: `vqa_score` (TextVQA), `anls` (DocVQA/InfoVQA: the official
script's ANLS, edit distance over the longer raw length), `relaxed` (ChartQA: its `_acc.csv` is VLMEvalKit's one row
of split columns and Overall), `exact` (OCRVQA, GQA), `ocrbench`. Every result carries VLMEvalKit's figure for the same
replies (vlmkit.scoring.kinds.vqa).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

VQA_METRICS = ("vqa_score", "anls", "relaxed", "exact", "ocrbench")
SHORT_ANSWER = "\nAnswer the question using a single word or phrase."


class ImageVQADataset(TSVDataset):
    """Image VQA: `answer` is one answer or a list of acceptable ones."""

    kind: ClassVar[str] = "vqa"

    def __init__(self, name: str, *, metric: str = "vqa_score", short_answer: bool = True, **kwargs: Any) -> None:
        if metric not in VQA_METRICS:
            raise ValueError(f"{name}: unknown VQA metric {metric!r} (expected one of {', '.join(VQA_METRICS)})")
        self.metric = metric
        self.short_answer = bool(short_answer)
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        question = self.text(line, "question")
        return question + SHORT_ANSWER if self.short_answer else question

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.vqa import score_vqa

        return score_vqa(df, metric=self.metric)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "vqa", "metric": self.metric, "short_answer_prompt": self.short_answer}
