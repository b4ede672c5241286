"""Multiple-choice questions over images (MMBench, CCBench, SEEDBench, AI2D, ScienceQA, MMStar, ...).

The prompt is VLMEvalKit's, character for character, so scores stay comparable with published leaderboards:
`Hint: {hint}\\n` (only when the row has a hint), `Question: {question}\\n`, then `Options:\\n` with one
`{L}. {text}\\n` per option column A-Z that the row fills, and the closing
`Please select the correct answer from the options above. \\n` (space before the newline). The options block and
the closing line appear only when the row has at least one option.

Circular evaluation (MMBench, CCBench: a question is right only if all its rotations are) is a constructor
option set by the catalog, `circular=True`; it is never guessed from the dataset's name. So is the judge's prompt for
answers no rule can read (vlmkit.scoring.common.choice_judge): `judge_prompt="blink"` gives VLMEvalKit's BLINK prompt (the
catalog sets it for BLINK), "default" the default / Chinese one.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import OPTION_LETTERS, TSVDataset

CLOSING = "Please select the correct answer from the options above. \n"


def mcq_prompt(question: str, options: list[tuple[str, str]], hint: str | None = None) -> str:
    """VLMEvalKit's MCQ prompt text from its pieces."""
    prompt = f"Hint: {hint}\n" if hint is not None else ""
    prompt += f"Question: {question}\n"
    if options:
        prompt += "Options:\n" + "".join(f"{letter}. {text}\n" for letter, text in options)
        prompt += CLOSING
    return prompt


def row_options(line: dict[str, Any]) -> list[tuple[str, str]]:
    """(letter, text) for every A-Z column the row fills, in letter order."""
    return [(L, str(line[L])) for L in OPTION_LETTERS if L in line and not is_missing(line[L])]


class ImageMCQDataset(TSVDataset):
    """Image multiple choice: options in columns A, B, ...; `answer` is the letter."""

    kind: ClassVar[str] = "mcq"

    def __init__(self, name: str, *, circular: bool = False, judge_prompt: str = "default", **kwargs: Any) -> None:
        from vlmkit.scoring.common.choice_judge import JUDGE_PROMPTS

        if judge_prompt not in JUDGE_PROMPTS:
            raise ValueError(f"{name}: judge_prompt {judge_prompt!r}: choose one of {', '.join(JUDGE_PROMPTS)}")
        self.circular = bool(circular)
        self.judge_prompt = judge_prompt
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        hint = line.get("hint")
        return mcq_prompt(
            self.text(line, "question"), row_options(line), None if is_missing(hint) else str(hint)
        )

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.mcq import score_mcq

        return score_mcq(df, circular=self.circular, fuzzy=fuzzy, judge=judge, judge_prompt=self.judge_prompt)

    def scorer_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"scorer": "mcq", "circular": self.circular}
        if self.judge_prompt != "default":
            params["judge_prompt"] = self.judge_prompt
        return params
