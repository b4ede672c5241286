"""ChartQAPro (ChartQAPro, ChartQAPro_CoT, ChartQAPro_PoT): VLMEvalKit's ChartQAPro, one TSV for the three.

The prompt, as VLMEvalKit builds it: the chart, the row's `paragraph` (VLMEvalKit sends an empty text part when
there is none; vlmkit leaves it out), then the prompt for the row's `question_type` in the answer style (`style`:
Direct, CoT or PoT; datasets_tsv.benchmarks.chartqapro_prompts) with the question filled in (`question` is a list;
a Conversational row shows the earlier turns, questions and `answer`s alternating). Scoring:
vlmkit.scoring.benchmarks.chartqapro (the same rule for the three styles, as in VLMEvalKit).
"""

from __future__ import annotations

import ast
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.chartqapro_prompts import PROMPTS
from datasets_tsv.kinds.base import DatasetError, TSVDataset

STYLES = ("Direct", "CoT", "PoT")


class ChartQAProDataset(TSVDataset):
    """ChartQAPro (module docstring)."""

    kind: ClassVar[str] = "vqa"
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "answer", "question_type")
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question_type", "Year")

    def __init__(self, name: str, *, style: str = "Direct", **kwargs: Any) -> None:
        if style not in STYLES:
            raise ValueError(f"{name}: style {style!r}; choose one of {', '.join(STYLES)}")
        self.style = style
        super().__init__(name, **kwargs)

    def _list(self, line: dict[str, Any], field: str) -> list[Any]:
        try:
            value = ast.literal_eval(self.text(line, field))
        except (SyntaxError, ValueError):
            value = None
        if not isinstance(value, list) or not value:
            raise DatasetError(f"{self._where(line, field)}: not a non-empty Python list")
        return value

    def prompt_text(self, line: dict[str, Any]) -> str:
        questions, answers = self._list(line, "question"), self._list(line, "answer")
        kind = self.text(line, "question_type")
        if (self.style, kind) not in PROMPTS:
            raise DatasetError(f"{self._where(line, 'question_type')}: {kind!r} is not a ChartQAPro question type")
        if kind == "Conversational":
            turns = [x for qa in zip(questions[:-1], answers[:-1]) for x in qa]
            return PROMPTS[(self.style, kind)].replace("{conversation}", str(turns)).replace(
                "{question}", str(questions[-1]))
        return PROMPTS[(self.style, kind)].replace("{question}", str(questions[0]))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        parts: list[Part] = [{"type": "image", "value": p} for p in self._images_at(pos)]
        paragraph = row.get("paragraph")
        if not is_blank(paragraph):
            parts.append({"type": "text", "value": str(paragraph)})
        parts.append({"type": "text", "value": self.prompt_text(row)})
        return parts

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.chartqapro import score_chartqapro

        result = score_chartqapro(df)
        if self.style != "Direct":
            result.notes.append(f"the {self.style} replies are scored by the Direct rule, as VLMEvalKit does (it "
                                "warns that the scores can be very low)")  # fmt: skip
        if judge is not None:
            result.notes.append("VLMEvalKit scores ChartQAPro by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "chartqapro", "style": self.style}
