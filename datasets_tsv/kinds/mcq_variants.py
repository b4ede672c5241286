"""Image multiple choice whose prompt wording or reported figures differ from the generic MCQ's, by catalog options
(nothing is keyed on the dataset's name). Rows are read and judged exactly as by ImageMCQDataset.

Prompt options (defaults give ImageMCQDataset's prompt, character for character):
- `preamble`: text before everything (MSEarthMCQ: `You are tasked with answering a multiple-choice question about
  the given input image.\\n\\n`);
- `hint`: whether a row's `hint` is shown as `Hint: {hint}\\n` (CVQA: no);
- `question_prefix`: what precedes the question (default `Question: `; MSEarthMCQ `Caption:\\n `);
- `closing`: the line after the options (default `Please select the correct answer from the options above. \\n`).
The options block (`Options:\\n` + `{L}. {text}\\n` per option) and the closing appear only when the row has options.

Report option `report` (vlmkit.scoring.kinds.mcq_reports): `acc` (the usual split/category table), `pairs` (MMVP: Overall
over question pairs, Average over rows) or `settings` (MMSci: accuracy per setting of each subject and category).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.mcq import CLOSING, ImageMCQDataset, row_options

REPORTS = {"acc": None, "pairs": ("mmvp", ("question",)), "settings": ("mmsci", ("setting", "subject", "category"))}


class PromptedMCQDataset(ImageMCQDataset):
    """Image MCQ with catalog-set prompt wording and report (module docstring)."""

    def __init__(
        self,
        name: str,
        *,
        preamble: str = "",
        hint: bool = True,
        question_prefix: str = "Question: ",
        closing: str = CLOSING,
        report: str = "acc",
        **kwargs: Any,
    ) -> None:
        if report not in REPORTS:
            raise ValueError(f"{name}: MCQ report {report!r}; choose one of {', '.join(REPORTS)}")
        if report != "acc" and kwargs.get("circular"):
            raise ValueError(f"{name}: report {report!r} applies to plain MCQ, not circular evaluation")
        self.preamble = str(preamble)
        self.hint = bool(hint)
        self.question_prefix = str(question_prefix)
        self.closing = str(closing)
        self.report = report
        if REPORTS[report]:  # evaluate() names the first one missing
            self.answer_columns = ("answer", *REPORTS[report][1])
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        prompt = self.preamble
        hint = line.get("hint")
        if self.hint and not is_missing(hint):
            prompt += f"Hint: {hint}\n"
        prompt += f"{self.question_prefix}{self.text(line, 'question')}\n"
        options = row_options(line)
        if options:
            prompt += "Options:\n" + "".join(f"{letter}. {text}\n" for letter, text in options) + self.closing
        return prompt

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.mcq_reports import paired_report, setting_report

        result = super()._score(df, fuzzy=fuzzy, judge=judge)
        if self.report == "pairs":
            return paired_report(result, df)
        if self.report == "settings":
            return setting_report(result, df)
        return result

    def scorer_params(self) -> dict[str, Any]:
        params = super().scorer_params()
        if REPORTS[self.report]:
            params["scorer"] = REPORTS[self.report][0]
        params["prompt"] = {
            "preamble": self.preamble, "hint": self.hint, "question_prefix": self.question_prefix,
            "closing": self.closing,
        }  # fmt: skip
        return params
