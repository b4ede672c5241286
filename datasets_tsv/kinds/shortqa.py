"""The ShortQA kind: short answers an LLM judge marks right or wrong (LiveMMBench, PathVQA, hle, and the prompts of
EMMA and MME-SCI, datasets_tsv.benchmarks.emma / .mmesci).

The prompt is VLMEvalKit's: the images, then the question and `\\nPlease directly provide a short answer to the
question. ` (`SHORTQA_SUFFIX`, the default; datasets_tsv.kinds.judged). The scorer, with the judge prompt beside it,
is vlmkit.scoring.kinds.shortqa: choice rows are read as MCQ by rule, `g_index` groups circular copies. Without a
judge, `evaluate` is refused in one line; a scorer's complaint about a row names the file.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.judged import JudgedDataset

SHORTQA_SUFFIX = "\nPlease directly provide a short answer to the question. "


class ShortQADataset(JudgedDataset):
    """The ShortQA family: short answers judged right or wrong; choice rows read as MCQ; `g_index` groups circular."""

    judge_scorer = "ShortQA correctness (LLM judge)"

    def __init__(self, name: str, *, kind: str = "shortqa", suffix: str = SHORTQA_SUFFIX, **kwargs: Any) -> None:
        super().__init__(name, kind=kind, suffix=suffix, **kwargs)

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.kinds.shortqa import score_shortqa

        return score_shortqa(df, judge, what=str(self.tsv_path))
