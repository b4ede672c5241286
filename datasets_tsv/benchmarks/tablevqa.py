"""TableVQA-Bench (TableVQABench): VLMEvalKit's TableVQABench prompt and scorer.

The prompt is the row's question inside its `split`'s template (VWTQ_PROMPT for vwtq and vwtq_syn, VTABFACT_PROMPT,
FINTABNETQA_PROMPT: vlmeval/dataset/utils/tablevqabench.py, character for character). Scoring:
vlmkit.scoring.benchmarks.tablevqa (accuracy x100 per split).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

VWTQ_PROMPT = (
    "You are asked to answer questions asked on an image.\n"
    "You should answer the question with a single word.\n"
    "Example: \n"
    "Question: what was the only year mr. wu competed in the olympic games?\n"
    "Answer: 2004\n"
    "Question: which township in pope county, arkansas has the least amount of water area?\n"
    "Answer: Freeman\n"
    "If you have multiple answers, please separate them with || marks. Example: Apple||Banana||Tomato\n\n"
    "Question: {question}\n"
    "Answer:"
)
VTABFACT_PROMPT = (
    "You are asked to answer whether the statement is True or False based on given image\n"
    "You should only answer True or False.\n"
    "Example: \n"
    "Statement: the milwaukee buck win 6 game in the 2010 - 11 season\n"
    "Answer: True\n"
    "Statement: only the top team score above the average of 8.8\n"
    "Answer: False\n\n"
    "Statement: {question}\n"
    "Answer:"
)
FINTABNETQA_PROMPT = (
    "You are asked to answer questions asked on a image.\n"
    "You should answer the question within a single word or few words.\n"
    "If units can be known, the answer should include units such as $, %, million and etc.\n"
    "Example: \n"
    "Question: What were the total financing originations for the fiscal year ended October 31, 2004?\n"
    "Answer: $3,852 million\n"
    "Question: What is the time period represented in the table?\n"
    "Answer: October 31\n"
    "Question: What was the percentage of net sales for selling, general and administrative expenses in 2006?\n"
    "Answer: 34.2%\n"
    "Question: {question}\n"
    "Answer:"
)
TEMPLATES = {"fintabnetqa": FINTABNETQA_PROMPT, "vtabfact": VTABFACT_PROMPT, "vwtq": VWTQ_PROMPT,
             "vwtq_syn": VWTQ_PROMPT}  # fmt: skip


class TableVQADataset(TSVDataset):
    """TableVQA-Bench (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "split")

    def prompt_text(self, line: dict[str, Any]) -> str:
        """The question in its split's template; a row of another split (or none) keeps the bare question, as in
        VLMEvalKit (scoring refuses such a row)."""
        question = self.text(line, "question")
        split = line.get("split")
        template = TEMPLATES.get(str(split)) if not is_missing(split) else None
        return question if template is None else template.format_map({"question": question})

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.tablevqa import score_tablevqa

        result = score_tablevqa(df)
        if judge is not None:
            result.notes.append("VLMEvalKit scores TableVQA-Bench by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "tablevqa"}
