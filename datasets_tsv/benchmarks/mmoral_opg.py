"""MMOral_OPG_CLOSED and MMOral_OPG_OPEN: VLMEvalKit's classes of those names (vlmeval/dataset/mmoral_opg_closed.py,
mmoral_opg_open.py at e8e78f05).

MMOral_OPG_CLOSED:

The prompt, as VLMEvalKit builds it: the row's image(s), then `Question: {question}\\n`, `Options:\\n`, one
`X. {optionN}\\n` for A-D (columns option1..option4; a missing one reads `nan`, as VLMEvalKit's `str()` of it) and its
instruction. Scoring: vlmkit.scoring.benchmarks.mmoral_opg, by rule. MMOral_OPG_OPEN: `MMOralOPGOpenDataset`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.judged import JudgedDataset

INSTRUCTION = ("Please answer the above multiple-choice question by selecting the single correct option (A, B, C, or "
               "D). If the provided information is insufficient to determine a clear answer, please choose the most "
               "likely correct option based on the available data and your judgment.")  # fmt: skip
OPEN_INSTRUCTION = "Please provide a detailed and accurate answer to the question."


class MMOralOPGClosedDataset(TSVDataset):
    """MMOral-OPG closed-ended MCQ (module docstring)."""

    kind: ClassVar[str] = "mcq"
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "option1", "option2", "option3", "option4")
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "option1", "option2", "option3", "option4", "category")

    def prompt_text(self, line: dict[str, Any]) -> str:
        from vlmkit.scoring.benchmarks.mmoral_opg import option_texts

        options = "".join(f"{letter}. {text}\n" for letter, text in option_texts(line).items())
        return f"Question: {self.text(line, 'question')}\nOptions:\n{options}{INSTRUCTION}"

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.mmoral_opg import score_mmoral_opg

        result = score_mmoral_opg(df)
        if judge is not None:
            result.notes.append(f"VLMEvalKit scores {self.name} by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mmoral_opg"}


class MMOralOPGOpenDataset(JudgedDataset):
    """MMOral_OPG_OPEN: VLMEvalKit's MMOral_OPG_OPEN class (mmoral_opg_open.py at e8e78f05). The prompt: the row's
    image(s), then `Question: {question}\\n` and `OPEN_INSTRUCTION`. Graded by an LLM judge
    (vlmkit.scoring.benchmarks.mmoral_opg_open): a run needs --judge."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, scorer="mmoral_opg_open", answer_columns=("question", "answer", "category"), **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return f"Question: {self.text(line, 'question')}\n{OPEN_INSTRUCTION}"
