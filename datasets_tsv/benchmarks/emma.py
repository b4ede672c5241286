"""EMMA / EMMA_COT: VLMEvalKit's EMMA prompt, images placed at `<image k>` as MMMU places them; scored as the
ShortQA kind (datasets_tsv.kinds.shortqa, with an LLM judge).
"""

from __future__ import annotations

from typing import Any

from vlmkit.core.cells import is_missing
from vlmkit.core.message import Part

from datasets_tsv.benchmarks.mmmu import interleave
from datasets_tsv.kinds.base import OPTION_LETTERS
from datasets_tsv.kinds.shortqa import ShortQADataset

EMMA_CHOICE_CLOSING = "Answer with the option's letter from the given choices. "
EMMA_OPEN_CLOSING = "Answer the question using a single word or phrase. "
EMMA_COT = "Please solve the problem step by step. "
EMMA_DIRECT = (
    "Please ensure that your output only contains the final answer without any additional content (such as "
    "intermediate reasoning steps)."
)


def emma_prompt(question: str, context: str | None, options: list[tuple[str, str]] | None, cot: bool) -> str:
    """VLMEvalKit's EMMA prompt: `{context}\\n\\n` (when the row has one), the question, the options as `A: text`
    lines for a choice row (type MCQ), the closing instruction, then the CoT or the direct-answer instruction."""
    if options is not None:
        listing = "".join(f"{letter}: {text}\n" for letter, text in options)
        body = f"{question}\n\n{listing}\n\n{EMMA_CHOICE_CLOSING}"
    else:
        body = f"{question}\n\n{EMMA_OPEN_CLOSING}"
    if context is not None:
        body = f"{context}\n\n{body}"
    return body + (EMMA_COT if cot else EMMA_DIRECT)


class EMMADataset(ShortQADataset):
    """EMMA / EMMA_COT (`cot=True`): VLMEvalKit's EMMA prompt (`emma_prompt`), images placed at `<image k>` as MMMU
    places them; scored as the ShortQA family."""

    def __init__(self, name: str, *, cot: bool = False, **kwargs: Any) -> None:
        self.cot = bool(cot)
        super().__init__(name, suffix="", **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        context = line.get("context")
        options = None
        if line.get("type") == "MCQ":
            options = [(L, str(line[L])) for L in OPTION_LETTERS if L in line and not is_missing(line[L])]
        return emma_prompt(self.text(line, "question"), None if is_missing(context) else str(context), options,
                           self.cot)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        _, row = self._row(line)
        return interleave(self.prompt_text(row), self.image_paths(row), self._where(row, "question"))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer, "prompt": "EMMA", "cot": self.cot}
