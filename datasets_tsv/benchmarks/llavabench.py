"""LLaVABench / LLaVABench_KO: open answers reviewed by an LLM judge against GPT-4's reference answer.

The prompt is VLMEvalKit's: the images, then the question alone (datasets_tsv.kinds.judged). The scorer, with the
review prompts (English and Korean) beside it, is vlmkit.scoring.benchmarks.llavabench. Without a judge, `evaluate`
is refused in one line; a scorer's complaint about a row names the file.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.judged import JudgedDataset


class LLaVABenchDataset(JudgedDataset):
    """LLaVABench / LLaVABench_KO (`language="ko"`): the answer reviewed against the GPT-4 reference (`gpt4_ans`)
    with the image caption as context; relative score per `category`."""

    judge_scorer = "LLaVABench review (LLM judge, relative to the reference answer)"
    answer_columns: ClassVar[tuple[str, ...]] = ("gpt4_ans", "caption", "category")

    def __init__(self, name: str, *, language: str = "en", **kwargs: Any) -> None:
        from vlmkit.scoring.benchmarks.llavabench import LANGUAGES

        if language not in LANGUAGES:
            raise ValueError(f"{name}: unknown review language {language!r} (expected one of {', '.join(LANGUAGES)})")
        self.language = language
        super().__init__(name, **kwargs)

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.llavabench import score_llavabench

        return score_llavabench(df, judge, language=self.language, what=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {**super().scorer_params(), "language": self.language}
