"""Open-answer benchmarks scored by an LLM judge: MMVet, LLaVABench and the ShortQA family (EMMA's prompt too).

Prompts are VLMEvalKit's (see datasets_tsv.kinds.judged): MMVet and LLaVABench send the question alone; the ShortQA family
sends the question and `\\nPlease directly provide a short answer to the question. ` (`SHORTQA_SUFFIX`, the default
of `ShortQADataset`); EMMA builds its own (`EMMADataset`). The scorers, with the judge prompts beside them, are
vlmkit.scoring.benchmarks.mmvet, .llavabench and .shortqa. Without a judge, `evaluate` is refused in one line.

A scorer's complaint about a row (a missing cell, a duplicate index) names the file (`what`); JudgedDataset makes it a
one-line DatasetError.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.core.message import Part
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import OPTION_LETTERS, DatasetError
from datasets_tsv.kinds.judged import JudgedDataset
from datasets_tsv.benchmarks.mmmu import interleave

SHORTQA_SUFFIX = "\nPlease directly provide a short answer to the question. "


class MMVetDataset(JudgedDataset):
    """MMVet / MMVet_Hard: graded 0-1 by the judge; `category` holds the capabilities (e.g. `rec,ocr`)."""

    judge_scorer = "MMVet grading (LLM judge, 0-1 per answer)"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category")

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.mmvet import score_mmvet

        return score_mmvet(df, judge, what=str(self.tsv_path))


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


class ShortQADataset(JudgedDataset):
    """The ShortQA family: short answers judged right or wrong; choice rows read as MCQ; `g_index` groups circular."""

    judge_scorer = "ShortQA correctness (LLM judge)"

    def __init__(self, name: str, *, kind: str = "shortqa", suffix: str = SHORTQA_SUFFIX, **kwargs: Any) -> None:
        super().__init__(name, kind=kind, suffix=suffix, **kwargs)

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.kinds.shortqa import score_shortqa

        return score_shortqa(df, judge, what=str(self.tsv_path))


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


_IMAGE_MARK = re.compile(r"(<image_\d+>)")


def split_image_marks(text: str, images: list[str], where: str) -> list[Part]:
    """MME-SCI's `<image_k>` placement: image k at each mark, text pieces stripped, blank ones dropped; the images
    first when the text has no mark (VLMEvalKit's split_MMESCI)."""
    pieces = _IMAGE_MARK.split(text)
    if len(pieces) == 1:
        return [*({"type": "image", "value": p} for p in images), {"type": "text", "value": text}]
    parts: list[Part] = []
    for piece in pieces:
        if not piece.strip():
            continue
        mark = re.fullmatch(r"<image_(\d+)>", piece)
        if mark is None:
            parts.append({"type": "text", "value": piece.strip()})
            continue
        k = int(mark.group(1))
        if not 1 <= k <= len(images):
            raise DatasetError(f"{where}: <image_{k}> but the row has {len(images)} image(s)")
        parts.append({"type": "image", "value": images[k - 1]})
    return parts


class MMESCIDataset(ShortQADataset):
    """MME-SCI (MMESCI_*): VLMEvalKit's prompt: the question, the `options` text for a row whose `type` holds `MCQ`,
    then the language's `Final Answer` instruction (`instruction`, catalog data); `vision_only` (MMESCI_VisionOnly):
    the images and the instruction alone. A row whose `type` holds `OnlyTxt` is sent without images. Scored as the
    ShortQA family."""

    def __init__(self, name: str, *, instruction: str, vision_only: bool = False, **kwargs: Any) -> None:
        self.instruction = instruction
        self.vision_only = bool(vision_only)
        super().__init__(name, suffix="", **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        if self.vision_only:
            return self.instruction
        question = self.text(line, "question")
        if "MCQ" in str(line.get("type") or ""):
            return f"{question}\n{self.text(line, 'options')}\n{self.instruction}"
        return f"{question}\n{self.instruction}"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        _, row = self._row(line)
        text = self.prompt_text(row)
        if "OnlyTxt" in str(row.get("type") or ""):
            return [{"type": "text", "value": text}]
        images = self.image_paths(row)
        if self.vision_only:
            return [*({"type": "image", "value": p} for p in images), {"type": "text", "value": text}]
        return split_image_marks(text, images, self._where(row, "question"))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer, "prompt": "MME-SCI", "instruction": self.instruction,
                "vision_only": self.vision_only}
