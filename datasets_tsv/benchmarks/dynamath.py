"""DynaMath and DynaMath_noprompt: VLMEvalKit's Dynamath (one TSV for both).

The prompt, as VLMEvalKit builds it: the image(s), then `## Question\\n {question}` and, unless the `guide` option
is off (DynaMath_noprompt), VLMEvalKit's answer guide asking for JSON with `solution` and `short answer` (with the
instruction for the row's `answer_type`) and its example, `json.dumps` of the example with an indent of 4.
Scoring: vlmkit.scoring.benchmarks.dynamath (rules first; the judge, when given, for replies no rule reads).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

GUIDE = (
    "\n## Answer Instruction Please provide an answer to the question outlined above. Your response should adhere "
    "to the following JSON format, which includes two keys: 'solution' and 'short answer'. The 'solution' key can "
    "contain detailed steps needed to solve the question, and the 'short answer' key should provide a concise "
    "response. {INST}\nExample of expected JSON response format:\n"
)
EXAMPLE = json.dumps({"solution": "[Detailed step-by-step explanation]", "short answer": "[Concise Answer]"}, indent=4)
INSTRUCTIONS = {
    "multiple choice": "Provide the corresponing choice option in the 'short answer' key, such as 'A', 'B', 'C', or 'D'.",
    "float": "Format the answer as a three-digit floating-point number and provide it in the 'short answer' key.",
}
OTHER = "Float numbers in the answer should be formatted as three-digit floating-point numbers."


class DynaMathDataset(TSVDataset):
    """DynaMath (module docstring)."""

    kind: ClassVar[str] = "vqa"
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "answer_type")
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "answer_type", "subject", "knowledge_level", "qid", "varid")

    def __init__(self, name: str, *, guide: bool = True, **kwargs: Any) -> None:
        self.guide = bool(guide)
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        text = f"## Question\n {self.text(line, 'question')}"
        if self.guide:
            kind = self.text(line, "answer_type")
            text += GUIDE.replace("{INST}", INSTRUCTIONS.get(kind, OTHER)) + EXAMPLE
        return text

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.dynamath import score_dynamath

        return score_dynamath(df, judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "dynamath", "guide": self.guide}
