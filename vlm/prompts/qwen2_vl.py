"""The Qwen2-VL family's own prompts and per-dataset image settings, as VLMEvalKit's Qwen2VLChat has them
(vlmeval/vlm/qwen2_vl/prompt.py: Qwen2VLPromptMixin; model.py: `_prepare_content`).

Prompts (only where the preset says VLMEvalKit uses them: Qwen2-VL; config.py runs Qwen2.5-VL and Qwen2.5-Omni with
`use_custom_prompt=False`, so they keep the dataset's prompt):
- MMMU_DEV_VAL, MMMU_TEST: the row's images, then `Hint: ...` (when the row has one), `Question: ...`, the options
  and "Please select the correct answer from the options above." (never the Chinese instruction).
- every other dataset of TYPE MCQ but LEGO-Puzzles: the same text, the instruction in Chinese when the text so far
  holds a CJK character.
- Y/N: HallusionBench and POPE only (MME keeps its own): the question + " Please answer yes or no."
- VQA: all but MMVet and ChartQAPro/ChartMuseum: the question + "\\nPlease try to answer the question with short
  words or phrases if possible."
Which datasets: the mixin's `use_custom_prompt` tests VLMEvalKit's TYPE (`vlm.prompts.common.vlmeval_type`, the
catalog's `vlmevalkit_type`), so MMMU-Pro (`MCQ_MMMU_Pro`), MME-RealWorld (`MMERealWorld`), OlympiadBench
(`VQA_ex_prompt`) and BMMR keep their own prompts although vlmkit scores the first two as MCQ: on MMMU_Pro_V the
question and options stay inside the image, as the vision setting means. MMESCI forces its own prompt and video
benchmarks get none from the wrapper (`vlm.prompts.common.wrapper_is_asked`).
tests/vlm/prompts/test_prompt_owner_by_catalog.py walks the catalog against VLMEvalKit's rule.
The dataset names VLMEvalKit tests are written out below as data. Where VLMEvalKit matches a substring of the name
(`'LEGO' in dataset`), the catalog names it would match are listed instead (tests/vlm/prompts/test_prompts_qwen2_vl.py
checks each one is a catalog name and that no other catalog name holds the substring).

Image settings for all the family (whatever the prompt style): VLMEvalKit resizes OCRBench's images with
min_pixels 10*10*28*28 (and the preset's max_pixels); every other dataset gets the preset's limits.
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

MMMU_DATASETS = frozenset({"MMMU_DEV_VAL", "MMMU_TEST"})
YORN_DATASETS = frozenset({"HallusionBench", "POPE"})  # VLMEvalKit: "MME has it's own prompt"
VQA_EXCLUDED = frozenset({"MMVet", "ChartQAPro", "ChartQAPro_CoT", "ChartQAPro_PoT", "ChartMuseum"})
LEGO_DATASETS = frozenset({"LEGO", "LEGO_circular"})  # VLMEvalKit: `'LEGO' in dataset`; the catalog names it matches
DATASET_IMAGE_SETTINGS: dict[str, dict[str, int]] = {"OCRBench": {"min_pixels": 10 * 10 * 28 * 28}}

MCQ_EN = "Please select the correct answer from the options above."
MCQ_CN = "请直接回答选项字母。"
MMMU_INSTRUCTION = "Please select the correct answer from the options above. \n"
YORN_SUFFIX = " Please answer yes or no."
VQA_SUFFIX = "\nPlease try to answer the question with short words or phrases if possible."


class Qwen2VLPrompts(PromptFamily):
    name = "qwen2vl"

    def use_custom_prompt(self, info: DatasetInfo) -> bool:
        if not self.own_prompts or not wrapper_is_asked(info):
            return False
        if info.name in MMMU_DATASETS:
            return True
        kind = vlmeval_type(info)
        if kind == "MCQ":
            return info.name not in LEGO_DATASETS
        if kind == "Y/N":
            return info.name in YORN_DATASETS
        if kind == "VQA":
            return info.name not in VQA_EXCLUDED
        return False

    def build_prompt(self, line: Mapping[str, Any], info: DatasetInfo) -> list[dict[str, str]]:
        kind = vlmeval_type(info)
        mmmu = info.name in MMMU_DATASETS
        if not mmmu and kind not in ("MCQ", "Y/N", "VQA"):
            raise ValueError(f"{self.name} prompts: no prompt for dataset {info.name!r} of kind {info.kind!r} "
                             f"(VLMEvalKit type {kind})")
        question = row_question(line, info)
        images = list(info.images(line))
        if mmmu or kind == "MCQ":
            return images_then_text(images, _choice_text(line, question, mmmu=mmmu))
        return images_then_text(images, question + (YORN_SUFFIX if kind == "Y/N" else VQA_SUFFIX))

    def processor_kwargs(self, dataset: str | None) -> dict[str, Any]:
        return dict(DATASET_IMAGE_SETTINGS.get(dataset or "", {}))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "dataset_image_settings": {k: dict(v) for k, v in DATASET_IMAGE_SETTINGS.items()}}


def _choice_text(line: Mapping[str, Any], question: str, *, mmmu: bool) -> str:
    hint = row_hint(line)
    options = row_options(line)
    text = f"Hint: {hint}\n" if hint is not None else ""
    text += f"Question: {question}\n"
    if options:
        text += "Options:\n" + "".join(f"{letter}. {option}\n" for letter, option in options.items())
        text += MMMU_INSTRUCTION if mmmu else (MCQ_CN if has_cjk(text) else MCQ_EN)
    return text.rstrip()
