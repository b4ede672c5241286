"""CharXiv's reasoning validation set graded by an LLM judge as VLMEvalKit grades it (vlmkit.scoring.benchmarks.charxiv)."""

from __future__ import annotations

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.charxiv import grade_charxiv
from vlmkit.scoring.result import EvalResult


def score_charxiv_reasoning(df: pd.DataFrame, judge: Judge) -> EvalResult:
    """Grade CharXiv reasoning replies (columns: see vlmkit.scoring.benchmarks.charxiv.grade_charxiv)."""
    return grade_charxiv(df, judge, "reasoning")
