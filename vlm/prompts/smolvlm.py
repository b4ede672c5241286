"""SmolVLM's own prompts, as VLMEvalKit's SmolVLM wrapper writes them (vlmeval/vlm/smolvlm.py, class SmolVLM).

VLMEvalKit's SmolVLM keeps the benchmark's prompt (`use_custom_prompt` is BaseModel's: False) and then, in
`generate_inner`, rewrites it by the dataset's exact name into a raw `<|im_start|>User:...<end_of_utterance>\\n
Assistant:` string (no chat template): MMBench/CCBench, MMMU, MathVista, ChartQA, DocVQA, TextVQA each get their own
text; MME, MMVet, OCRVQA, InfoVQA and OCRBench get "Give a very brief answer.", HallusionBench "Answer yes or no.",
MMStar/SEEDBench/AI2D/ScienceQA the "pure MCQ" rewording. vlmkit returns the rewritten text as parts, so SmolVLM's
chat template (`User:` + `<image>` per image part + text, then `<end_of_utterance>\\nAssistant:`) renders the same
string. The benchmark prompts it starts from are VLMEvalKit's (ImageMCQDataset's MCQ block, ImageVQADataset's
short-answer line, MMMU's `<image k>` split), rebuilt here because a model never sees the dataset object.

Names are matched exactly, as VLMEvalKit does, and only catalog names are listed (datasets_tsv/catalog/catalog.tsv; the
test checks). Other benchmarks keep the dataset's prompt (`use_custom_prompt` is False); VLMEvalKit would strip
each text part of it (build_prompt_default), which vlmkit does not.

What vlmkit cannot do the same (recorded in the preset's notes):
- VLMEvalKit ends the MMBench, pure-MCQ and (when options A. and B. appear) MMMU/MathVista prompts with
  `Assistant: Answer:`, a prefilled start of the answer. vlmkit's message format has no assistant prefill, so the
  model is asked at `Assistant:`; `assistant_prefill(parts, info)` gives the text VLMEvalKit adds, for a runner
  that can prefill.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vlm.prompts.common import PromptFamily, images_then_text, row_hint, row_options
from vlmkit.core.cells import is_blank
from vlmkit.core.message import Part
from vlmkit.core.contracts import DatasetInfo

MCQ_CLOSING = "Please select the correct answer from the options above. \n"
SHORT_ANSWER = "\nAnswer the question using a single word or phrase."
PLACEHOLDER = re.compile(r"<image (\d+)>")

MMBENCH = frozenset({
    "MMBench_DEV_EN", "MMBench_TEST_EN", "MMBench_DEV_CN", "MMBench_TEST_CN", "MMBench", "MMBench_CN",
    "MMBench_DEV_EN_V11", "MMBench_DEV_CN_V11", "MMBench_TEST_EN_V11", "MMBench_TEST_CN_V11", "MMBench_V11",
    "MMBench_CN_V11", "CCBench",
})  # fmt: skip
MMMU = frozenset({"MMMU_DEV_VAL", "MMMU_TEST"})
MATHVISTA = frozenset({"MathVista_MINI"})
CHARTQA = frozenset({"ChartQA_TEST"})
DOCVQA = frozenset({"DocVQA_VAL", "DocVQA_TEST"})
TEXTVQA = frozenset({"TextVQA_VAL"})  # VLMEvalKit also names TextVQA_TEST, which the catalog does not have
BRIEF = frozenset({"MME", "MMVet", "OCRVQA_TEST", "OCRVQA_TESTCORE", "InfoVQA_VAL", "InfoVQA_TEST", "OCRBench"})
YES_NO = frozenset({"HallusionBench"})
PURE_MCQ = frozenset({"MMStar", "SEEDBench_IMG", "AI2D_TEST", "ScienceQA_VAL", "ScienceQA_TEST"})
# The benchmarks above whose VLMEvalKit prompt (ImageVQADataset) ends with the short-answer line; the others'
# prompt is the question alone (MME, HallusionBench, MMVet, OCRBench, MathVista).
SHORT_ANSWER_PROMPT = frozenset({
    "ChartQA_TEST", "DocVQA_VAL", "DocVQA_TEST", "TextVQA_VAL", "OCRVQA_TEST", "OCRVQA_TESTCORE", "InfoVQA_VAL",
    "InfoVQA_TEST",
})  # fmt: skip

CHARTQA_INSTRUCTIONS = (
    "For the question below, follow the following instructions:\n"
    "-The answer should contain as few words as possible.\n"
    "-Don\u2019t paraphrase or reformat the text you see in the image.\n"
    "-Answer a binary question with Yes or No.\n"
    "-When asked to give a numerical value, provide a number like 2 instead of Two.\n"
    "-If the final answer has two or more items, provide it in the list format like [1, 2].\n"
    "-When asked to give a ratio, give out the decimal value like 0.25 instead of 1:4.\n"
    "-When asked to give a percentage, give out the whole value like 17 instead of decimal like 0.17%.\n"
    "-Don\u2019t include any units in the answer.\n"
    "-Do not include any full stops at the end of the answer.\n"
    "-Try to include the full label from the graph when asked about an entity.\n"
    "Question: "
)
DOCVQA_INSTRUCTIONS = (
    "Give a short and terse answer to the following question. "
    "Do not paraphrase or reformat the text you see in the image. Do not include any full stops. "
    "Just give the answer without additional explanation. Question: "
)
TEXTVQA_INSTRUCTIONS = (
    "Answer the following question about the image using as few words as possible. "
    "Follow these additional instructions:\n"
    "-Always answer a binary question with Yes or No.\n"
    "-When asked what time it is, reply with the time seen in the image.\n"
    "-Do not put any full stops at the end of the answer.\n"
    "-Do not put quotation marks around the answer.\n"
    "-An answer with one or two words is favorable.\n"
    "-Do not apply common sense knowledge. The answer can be found in the image.\n"
    "Question: "
)
BRIEF_SUFFIX = "\nGive a very brief answer."
YES_NO_SUFFIX = "\nAnswer yes or no."
PREFILL = " Answer:"

# replace_mapping of each build_prompt_* (applied in this order)
MMBENCH_REPLACE = (
    ("\nOptions:", "\nChoices:"),
    ("Please select the correct answer from the options above.", "Answer with a letter."),
)
PURE_MCQ_REPLACE = (
    ("\nOptions:", "\nChoices:"),
    ("Please select the correct answer from the options above.", "Answer with the letter."),
)
MMMU_REPLACE = (
    ("Question:", ""),
    ("Please select the correct answer from the options above.", "Answer with the letter."),
    ("\nOptions:", "\nChoices:"),
)
MATHVISTA_REPLACE = (
    *((f"({letter}) ", f"{letter}. ") for letter in "ABCDEFGH"),
    ("\nOptions:", "\nChoices:"),
    ("Hint: ", ""),
)

CUSTOM = MMBENCH | MMMU | MATHVISTA | CHARTQA | DOCVQA | TEXTVQA | BRIEF | YES_NO | PURE_MCQ


def _cell(line: Mapping[str, Any], field: str, info: DatasetInfo) -> str:
    value = line.get(field)
    if is_blank(value):
        raise ValueError(f"{info.name}, index {line.get('index')}: field {field!r} is empty")
    return str(value)


def _replace(text: str, mapping: tuple[tuple[str, str], ...]) -> str:
    for old, new in mapping:
        text = text.replace(old, new)
    return text


def mcq_text(line: Mapping[str, Any], info: DatasetInfo) -> str:
    """VLMEvalKit's MCQ prompt (ImageMCQDataset.build_prompt), the text SmolVLM starts from."""
    hint = row_hint(line)
    text = "" if hint is None else f"Hint: {hint}\n"
    text += f"Question: {_cell(line, 'question', info)}\n"
    options = row_options(line)
    if options:
        text += "Options:\n" + "".join(f"{letter}. {option}\n" for letter, option in options.items()) + MCQ_CLOSING
    return text


def _mmbench_instruction(text: str) -> str:
    """build_prompt_mmbench's text: reworded, and a hint moved after the question."""
    text = _replace(text.strip(), MMBENCH_REPLACE)
    if text.startswith("Hint:"):
        hint, _, question = text.partition("\nQuestion:")
        question, _, choices = question.partition("\nChoices:")
        text = "Question:" + question + "\n" + hint + "\nChoices:" + choices
    return text


def _mmmu_parts(text: str, images: list[str], info: DatasetInfo, index: Any) -> list[Part]:
    """build_prompt_mmmu over MMMU's split message: `Question: ` + `<image k>:` + image line per image, then the
    texts reworded with ` <image k> ` where each image stood."""
    pieces = PLACEHOLDER.split(text)
    segments: list[tuple[str, str]] = []  # ("text", value) / ("image", path), MMMU's split of the MCQ prompt
    if len(pieces) == 1:
        segments = [("image", p) for p in images] + [("text", text)]
    else:
        for j, piece in enumerate(pieces):
            if j % 2 == 0:
                segments.append(("text", piece))
                continue
            k = int(piece)
            if not 1 <= k <= len(images):
                raise ValueError(f"{info.name}, index {index}: <image {k}> but the row has {len(images)} image(s)")
            segments.append(("image", images[k - 1]))
    shown = [value for kind, value in segments if kind == "image"]
    parts: list[Part] = []
    lead = "Question: "
    for k, image in enumerate(shown, 1):
        parts += [{"type": "text", "value": f"{lead}<image {k}>:"}, {"type": "image", "value": image}]
        lead = "\n"
    body, counter = lead, 1
    for kind, value in segments:
        if kind == "image":
            body += f" <image {counter}> "
            counter += 1
        else:
            body += _replace(value.strip(), MMMU_REPLACE).strip()
    return [*parts, {"type": "text", "value": body}]


class SmolVLMPrompts(PromptFamily):
    """VLMEvalKit's SmolVLM prompts for the benchmarks it names (SmolVLM-256M/500M/Instruct)."""

    name = "smolvlm"

    def use_custom_prompt(self, info: DatasetInfo) -> bool:
        return self.own_prompts and info.name in CUSTOM

    def build_prompt(self, line: Mapping[str, Any], info: DatasetInfo) -> list[Part]:
        name, images = info.name, list(info.images(line))
        if name in MMMU:
            return _mmmu_parts(mcq_text(line, info), images, info, line.get("index"))
        if name in MMBENCH:
            return images_then_text(images, _mmbench_instruction(mcq_text(line, info)))
        if name in PURE_MCQ:
            text = _replace(mcq_text(line, info).strip(), PURE_MCQ_REPLACE)
            return images_then_text(images, text)
        question = _cell(line, "question", info)
        if name in SHORT_ANSWER_PROMPT:
            question += SHORT_ANSWER
        question = question.strip()
        if name in MATHVISTA:
            text = _replace(question, MATHVISTA_REPLACE).strip()
        elif name in CHARTQA:
            text = CHARTQA_INSTRUCTIONS + question
        elif name in DOCVQA:
            text = DOCVQA_INSTRUCTIONS + question
        elif name in TEXTVQA:
            text = TEXTVQA_INSTRUCTIONS + question
        elif name in BRIEF:
            text = question + BRIEF_SUFFIX
        elif name in YES_NO:
            text = question + YES_NO_SUFFIX
        else:
            raise ValueError(f"{name}: SmolVLM has no prompt of its own for this benchmark")
        return images_then_text(images, text)

    def assistant_prefill(self, parts: list[Part], info: DatasetInfo) -> str:
        """The text VLMEvalKit puts after `Assistant:` before the model answers ('' for none): ` Answer:` for
        MMBench and the pure-MCQ benchmarks, and for MMMU/MathVista when the prompt shows options A. and B."""
        if info.name in MMBENCH or info.name in PURE_MCQ:
            return PREFILL
        if info.name in MMMU or info.name in MATHVISTA:
            text = "".join(p["value"] for p in parts if p["type"] == "text")
            return PREFILL if "A." in text and "B." in text else ""
        return ""
