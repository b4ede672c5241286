"""LLaVA-1.5's own prompt, as VLMEvalKit's `LLaVA` wrapper writes it (vlmeval/vlm/llava/llava.py), for the -hf
checkpoints vlmkit runs.

Applied: for every dataset of VLMEvalKit TYPE MCQ (`DATASET_TYPE(dataset) == 'MCQ'`, MMMU included; not MMMU-Pro,
typed `MCQ_MMMU_Pro`, nor MME-RealWorld, typed `MMERealWorld`, nor LogicVista, typed VQA: see
`vlm.prompts.common.vlmeval_type`; never a video benchmark nor one that forces its own prompt), the
row's images, then one text: the hint and a newline (when the row has one), the question, `\\n{L}. {option}` per
option, and "\\nAnswer with the option's letter from the given choices directly." (in Chinese, "\\n请直接回答选项
字母。", when the text holds a CJK character); a row without options ends "\\nAnswer the question directly."
("\\n请直接回答问题。"). Other kinds keep the dataset's prompt, as in VLMEvalKit.

Not applied, because VLMEvalKit runs the original liuhaotian/llava-v1.5 code and vlmkit the llava-hf conversion:
- the llava_v1 conversation: VLMEvalKit sends "A chat between a curious human and an artificial intelligence
  assistant. The assistant gives helpful, detailed, and polite answers to the human's questions. USER: <text with
  ' <image> ' where each image is> ASSISTANT: " and stops at "</s>"; vlmkit renders the -hf checkpoint's chat
  template ("USER: <image>\\n<text> ASSISTANT:", no system sentence), images first;
- image_aspect_ratio "pad" (each image padded to a square with the processor's mean colour before CLIP's resize):
  the -hf checkpoints load CLIPImageProcessor, which resizes the shortest side and centre-crops, and has no pad
  option;
- float16 weights on CUDA: vlmkit picks the dtype itself (`--dtype`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlm.prompts.common import (
    PromptFamily,
    has_cjk,
    images_then_text,
    row_hint,
    row_options,
    row_question,
    vlmeval_type,
    wrapper_is_asked,
)
from vlmkit.core.contracts import DatasetInfo

ANSWER_LETTER_EN = "\nAnswer with the option's letter from the given choices directly."
ANSWER_LETTER_CN = "\n请直接回答选项字母。"
ANSWER_DIRECT_EN = "\nAnswer the question directly."
ANSWER_DIRECT_CN = "\n请直接回答问题。"


class LLaVAPrompts(PromptFamily):
    name = "llava"

    def use_custom_prompt(self, info: DatasetInfo) -> bool:
        return self.own_prompts and wrapper_is_asked(info) and vlmeval_type(info) == "MCQ"

    def build_prompt(self, line: Mapping[str, Any], info: DatasetInfo) -> list[dict[str, str]]:
        if vlmeval_type(info) != "MCQ":
            raise ValueError(f"{self.name} prompts: no prompt for dataset {info.name!r} of kind {info.kind!r}")
        question = row_question(line, info)
        hint = row_hint(line)
        text = f"{hint}\n{question}" if hint is not None else question
        options = row_options(line)
        text += "".join(f"\n{letter}. {option}" for letter, option in options.items())
        if options:
            text += ANSWER_LETTER_CN if has_cjk(text) else ANSWER_LETTER_EN
        else:
            text += ANSWER_DIRECT_CN if has_cjk(text) else ANSWER_DIRECT_EN
        return images_then_text(list(info.images(line)), text)
