"""SimpleVQA (factuality of visual questions): VLMEvalKit's SimpleVQA (vlmeval/dataset/simplevqa.py at e8e78f05).

The prompt: the row's one image, then its `question` (VLMEvalKit asserts a single image; a row with another count is
refused in one line). Scoring: vlmkit.scoring.benchmarks.simplevqa (a judge grades each reply; needs --judge).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.judged import JudgedDataset


class SimpleVQADataset(JudgedDataset):
    """SimpleVQA (module docstring)."""

    judge_scorer = "GPT judge: SimpleVQA grading (correct / incorrect / not attempted)"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        images = self._images_at(pos)
        if len(images) != 1:
            where = self._where(row, "image")
            raise DatasetError(f"{where}: SimpleVQA asks about one image, the row has {len(images)}")
        return [{"type": "image", "value": images[0]}, {"type": "text", "value": self.prompt_text(row)}]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.simplevqa import score_simplevqa

        return score_simplevqa(df, judge, what=str(self.tsv_path))
