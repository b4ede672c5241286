"""MMMU-Pro: MMMU with ten options (`standard`) or with the question and options inside the image (`vision`), each
answered directly or with chain-of-thought (`cot`). Both are constructor options set by the catalog
(MMMU_Pro_10c, MMMU_Pro_10c_COT, MMMU_Pro_V, MMMU_Pro_V_COT); nothing is read from the name.

Prompts (VLMEvalKit's MMMUProDataset, character for character):
- standard: `Question: {question}\\n`, then `Options:\\n` and one `{L}. {text}\\n` per option, then the instruction
  (only when the row has options); no hint. The text is split on `<image k>` like MMMU (datasets_tsv.benchmarks.mmmu).
  Instruction: `Answer directly with the option letter from the given choices. ` or, with cot,
  `Answer the following multiple-choice question. The last line of your response should be of the following
  format: 'Answer: $LETTER' (without quotes) where LETTER is one of the options. Think step by step before
  answering. ` (one line; note the closing space).
- vision: the row's single image, then `Answer the following multiple-choice question in the image. ` and
  `Answer directly with the option letter from the given choices. ` or, with cot, `The last line of your response
  should be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of the options. Think
  step by step before answering. `. The TSV needs no `question` column; the judge, which reads text only, is shown
  the question `placeholder` as VLMEvalKit shows it.

Scoring: MMMU's (open rows as A = answer / B = `Other Answers`), MCQ accuracy by vlmkit.scoring.kinds.mcq.score_mcq, the
judge (when given) reading what the rules cannot. With cot, each reply is first cut as VLMEvalKit's cot_postproc does
at vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT (`answer_line`): the text after `Answer:` on the last line
(stripped) that starts with it; when that text holds exactly one distinct capital letter, that letter; otherwise the
text itself (read by the MCQ rules); the whole reply when no line starts with `Answer:`. (Before June 2026 VLMEvalKit
counted the `A` of `Answer:` itself and read `Answer: 3` as option A; it no longer does.) vlmkit and VLMEvalKit cut
alike, so VLMEvalKit's figure (`scoring.vlmevalkit`) reads the same cut replies.
"""

from __future__ import annotations

import string
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.core.message import Part
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.mcq import row_options
from datasets_tsv.benchmarks.mmmu import MMMUDataset, interleave, open_as_choice

DIRECT = "Answer directly with the option letter from the given choices. "
COT = (
    "Answer the following multiple-choice question. The last line of your response should be of the following "
    "format: 'Answer: $LETTER' (without quotes) where LETTER is one of the options. Think step by step before "
    "answering. "
)
VISION_LEAD = "Answer the following multiple-choice question in the image. "
VISION_COT = (
    "The last line of your response should be of the following format: 'Answer: $LETTER' (without quotes) where "
    "LETTER is one of the options. Think step by step before answering. "
)
VISION_QUESTION = "placeholder"  # what VLMEvalKit's judge is shown as the question of a vision row
SETTINGS = ("standard", "vision")
_CAPITALS = frozenset(string.ascii_uppercase)


def answer_line(reply: str) -> str:
    """What the MCQ rules read of a chain-of-thought reply: VLMEvalKit's cot_postproc (module docstring)."""
    lines = [line.strip() for line in reply.strip().split("\n")]
    candidates = [line for line in lines if line.startswith("Answer:")]
    if not candidates:
        return reply
    tail = candidates[-1][len("Answer:"):]
    capitals = {ch for ch in tail if ch in _CAPITALS}
    return capitals.pop() if len(capitals) == 1 else tail


class MMMUProDataset(MMMUDataset):
    """MMMU-Pro in its standard (10 options, interleaved images) or vision (image only) setting, direct or cot."""

    kind: ClassVar[str] = "mcq"

    def __init__(self, name: str, *, setting: str = "standard", cot: bool = False, **kwargs: Any) -> None:
        if setting not in SETTINGS:
            raise ValueError(f"{name}: MMMU-Pro setting {setting!r}; choose one of {', '.join(SETTINGS)}")
        if kwargs.get("circular"):
            raise ValueError(f"{name}: MMMU-Pro is never circular")
        self.setting = setting
        self.cot = bool(cot)
        if setting == "vision":
            self.prompt_columns = ()  # the question is in the image
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        if self.setting == "vision":
            return VISION_LEAD + (VISION_COT if self.cot else DIRECT)
        prompt = f"Question: {self.text(line, 'question')}\n"
        options = row_options(line)
        if options:
            prompt += "Options:\n" + "".join(f"{letter}. {text}\n" for letter, text in options)
            prompt += COT if self.cot else DIRECT
        return prompt

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        _, row = self._row(line)
        images = self.image_paths(row)
        if self.setting == "standard":
            return interleave(self.prompt_text(row), images, self._where(row, "question"))
        if len(images) != 1:
            raise DatasetError(f"{self._where(row, 'image')}: a vision row has one image, this one has {len(images)}")
        return [{"type": "image", "value": images[0]}, {"type": "text", "value": self.prompt_text(row)}]

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.mcq import score_mcq

        if self.cot:
            cut = [pred if is_missing(pred) else answer_line(str(pred)) for pred in df["prediction"].tolist()]
            df["prediction"] = pd.Series(cut, index=df.index, dtype=object)
        if self.setting == "vision":
            df["question"] = VISION_QUESTION
        result = score_mcq(open_as_choice(df), circular=False, fuzzy=fuzzy, judge=judge)
        if self.cot:
            result.per_sample["answer_read"] = df["prediction"].to_numpy()
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {
            "scorer": "mmmu-pro", "circular": False, "setting": self.setting, "cot": self.cot,
            "open_questions": "as A=answer / B=Other Answers",
        }  # fmt: skip
