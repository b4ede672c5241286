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
judge (when given) reading what the rules cannot. With cot, each reply is first cut as VLMEvalKit's cot_postproc
does (`answer_line`): when exactly one line (stripped) starts with `Answer:`, `A` when the capital letters after
`Answer:` are all A, at least one (`Answer: A`), else the text after `Answer:` (` B`, read by the MCQ rules);
otherwise the whole reply. VLMEvalKit counts the `A` of `Answer:` itself among the line's capitals, so a line
whose answer has no capital at all (`Answer: 3`, `Answer: none`) reads as option A there; vlmkit reads the text
after `Answer:` instead (counted and noted per run).
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
COT_NOTE = (
    "chain-of-thought replies: an 'Answer:' line whose answer has no capital letter is read from its text "
    "(VLMEvalKit counts the A of 'Answer:' and reads such a line as option A)"
)


def answer_line(reply: str) -> tuple[str, bool]:
    """(what the MCQ rules read, whether VLMEvalKit's cot_postproc gives something else) for a chain-of-thought
    reply (module docstring)."""
    candidates = [line.strip() for line in reply.strip().split("\n")]
    candidates = [line for line in candidates if line.startswith("Answer:")]
    if len(candidates) != 1:
        return reply, False
    tail = candidates[0][len("Answer:"):]
    capitals = {ch for ch in tail if ch in _CAPITALS}
    vlmevalkit = "A" if capitals <= {"A"} else tail
    ours = "A" if capitals == {"A"} else tail
    return ours, ours != vlmevalkit


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
        if self.cot:
            self.notes = (*self.notes, COT_NOTE)

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

        differs = 0
        if self.cot:
            read: list[Any] = []
            for pred in df["prediction"].tolist():
                if is_missing(pred):
                    read.append(pred)
                    continue
                text, other = answer_line(str(pred))
                read.append(text)
                differs += other
            df["prediction"] = pd.Series(read, index=df.index, dtype=object)
        if self.setting == "vision":
            df["question"] = VISION_QUESTION
        result = score_mcq(open_as_choice(df), circular=False, fuzzy=fuzzy, judge=judge)
        if self.cot:
            result.per_sample["answer_read"] = df["prediction"].to_numpy()
            result.counts["cot_differs_from_vlmevalkit"] = differs
            if differs:
                result.notes.append(
                    f"{differs} chain-of-thought repl(ies) have an 'Answer:' line without a capital letter: vlmkit "
                    "read its text, VLMEvalKit reads option A"
                )
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {
            "scorer": "mmmu-pro", "circular": False, "setting": self.setting, "cot": self.cot,
            "open_questions": "as A=answer / B=Other Answers",
        }  # fmt: skip
