"""InternVL3's own prompts and tiles per benchmark, as VLMEvalKit's InternVLChat builds them (version V2.0).

Read from vlmeval/vlm/internvl/internvl_chat.py (`use_custom_prompt`, `build_prompt`, `set_max_num`,
`generate_v2`) and vlmeval/vlm/internvl/utils.py (`build_multi_choice_prompt`, `reorganize_prompt`,
`dynamic_preprocess`). vlmeval/config.py builds every InternVL3 size with `version="V2.0"` and nothing else: no MPO
prompt, `cot_prompt_version="v1"`; the chain-of-thought texts appear only when the environment sets USE_COT=1, so
they are not here.

VLMEvalKit decides by the dataset's TYPE and by substrings of its name. Here the type is VLMEvalKit's own TYPE where
the dataset carries it (the catalog's `vlmevalkit_type`; `vlm.prompts.common.vlmeval_type`), else its kind's (`mcq`
-> MCQ, `yorn` -> Y/N, `vqa` -> VQA); any other TYPE (MCQ_MMMU_Pro, BMMR, VQA_ex_prompt, Short, ...) gets the question
alone. Every name test is a lookup in the frozensets below, which list the catalog names
(datasets_tsv/catalog/catalog.tsv) VLMEvalKit's substrings match. A dataset outside the catalog gets the rules of its
kind. tests/vlm/prompts/test_prompts_internvl.py recomputes each set from the catalog with VLMEvalKit's substring
lists written down there. Datasets that force their own prompt (MMESCI) and video benchmarks get none
(`vlm.prompts.common.wrapper_is_asked`).

The message: InternVLChat writes `<image>\\n` before the text for one image and `Image-1: <image>\\nImage-2:
<image>\\n...` for several (MUIRBench: the `<image>` tags of its text become `<Image-k>`). The -hf chat template
renders an image part as `<IMG_CONTEXT>\\n`, so the parts `Image-1: `, image, ..., text render the same text.

Tiles: `processor_kwargs(dataset)` gives the image processor VLMEvalKit's `max_num` for the benchmark (6; 12, 18
or 24 for the chart, document, OCR and MMMU benchmarks listed below) with dynamic tiling and the thumbnail on, as
`load_image` always tiles. Differences that remain (recorded in the preset's notes):
- VLMEvalKit caps the tiles of a request with several images at 64 // images (`total_max_num`); the hook knows
  the benchmark, not the request, so that cap is not applied (it bites only on requests of more than 5 images for
  12 tiles, 10 for 6).
- MMMU (and MMMU-Pro, whose names hold 'MMMU'): VLMEvalKit doubles the first image's size (bilinear) before tiling;
  vlmkit does not.
- BMMR: VLMEvalKit raises max_new_tokens to at least 8196; prompts cannot say that (the preset's 4096 stays).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vlm.prompts.common import PromptFamily, has_cjk, row_hint, row_options, vlmeval_type, wrapper_is_asked
from vlmkit.core.cells import is_blank
from vlmkit.core.message import Part
from vlmkit.core.contracts import DatasetInfo

DEFAULT_TILES = 6

# -- which benchmarks keep the dataset's prompt ------------------------------------------------------------------
# `dataset in [...]` (the six physics sets; SSI_Bench, not in the catalog, is below), listinstr(['MMDU',
# 'MME-RealWorld', 'MME-RealWorld-CN', 'WeMath_COT', 'MMAlignBench', 'ChartQAPro', 'ChartMuseum', 'MMSIVideo_U50',
# 'MMSIVideo_SC']), and MCQ names containing 'LEGO'; video benchmarks (kind `video`) keep theirs too.
DATASET_PROMPT = frozenset({
    "atomic_dataset", "electro_dataset", "mechanics_dataset", "optics_dataset", "quantum_dataset",
    "statistics_dataset", "MMDU", "MME-RealWorld", "MME-RealWorld-CN", "MME-RealWorld-Lite", "WeMath_COT",
    "LEGO", "LEGO_circular", "ChartMuseum_dev", "ChartMuseum_test", "ChartQAPro", "ChartQAPro_CoT", "ChartQAPro_PoT",
    "MMAlignBench",
})  # fmt: skip
NO_CUSTOM_KINDS = frozenset({"video", "multi-turn"})
NAMED_DATASET_PROMPT = frozenset({"SSI_Bench"})  # `dataset in ["SSI_Bench"]`: an exact name, catalog or not

# -- Y/N ---------------------------------------------------------------------------------------------------------
YORN_SHORT = frozenset({"MME"})  # listinstr(['MME'])
YORN_YES_NO = frozenset({"HallusionBench", "AMBER"})  # listinstr(['HallusionBench', 'AMBER'])

# -- VQA ---------------------------------------------------------------------------------------------------------
VQA_DETAIL = frozenset({"LLaVABench", "LLaVABench_KO", "WildVision"})  # listinstr(['LLaVABench', 'WildVision'])
# listinstr(['MathVerse']) after the short-answer list: the question alone, with one phrase softened.
VQA_MATHVERSE = frozenset({
    "MathVerse_MINI", "MathVerse_MINI_Vision_Only", "MathVerse_MINI_Vision_Only_cot", "MathVerse_MINI_Vision_Dominant",
    "MathVerse_MINI_Vision_Intensive", "MathVerse_MINI_Text_Lite", "MathVerse_MINI_Text_Dominant",
})  # fmt: skip
# listinstr(['MathVista', 'MathVision', 'VCR', 'MTVQA', 'MMVet', 'MMDU', 'CRPE', 'MIA-Bench', 'MM-Math', 'DynaMath',
# 'QSpatial', 'WeMath', 'LogicVista', 'MM-IFEval', 'ChartMimic', 'MMReason']): the question alone. Every other VQA
# benchmark (the OCR/document list included) gets the short-answer line.
VQA_PLAIN = frozenset({
    "MathVista_MINI", "MathVision", "MathVision_MINI", "MTVQA_TEST", "MMVet", "MMVet_Hard", "CRPE_EXIST",
    "CRPE_RELATION", "QSpatial_plus", "QSpatial_scannet", "LogicVista", "MMReason_testmini",
    "VCR_EN_EASY_500", "VCR_EN_EASY_100", "VCR_EN_EASY_ALL", "VCR_EN_HARD_500", "VCR_EN_HARD_100", "VCR_EN_HARD_ALL",
    "VCR_ZH_EASY_500", "VCR_ZH_EASY_100", "VCR_ZH_EASY_ALL", "VCR_ZH_HARD_500", "VCR_ZH_HARD_100", "VCR_ZH_HARD_ALL",
    "DynaMath", "DynaMath_noprompt", "MIA-Bench", "MM-IFEval", "MM-Math", "ChartMimic_v1_customized",
    "ChartMimic_v1_direct", "ChartMimic_v2_customized", "ChartMimic_v2_customized_1800", "ChartMimic_v2_customized_600",
    "ChartMimic_v2_direct", "ChartMimic_v2_direct_1800", "ChartMimic_v2_direct_600",
})  # fmt: skip

# -- message shape -----------------------------------------------------------------------------------------------
MUIRBENCH = frozenset({"MUIRBench"})  # listinstr(['MUIRBench']) in reorganize_prompt

# -- tiles per image (set_max_num) -------------------------------------------------------------------------------
# res_12: ['ChartQA_TEST', 'MMMU_DEV_VAL', 'MMMU_TEST', 'MME-RealWorld', 'VCR_EN', 'VCR_ZH', 'OCRVQA', 'BMMR']
TILES_12 = frozenset({
    "ChartQA_TEST", "MMMU_DEV_VAL", "MMMU_TEST", "MME-RealWorld", "MME-RealWorld-CN", "MME-RealWorld-Lite",
    "OCRVQA_TEST", "OCRVQA_TESTCORE", "BMMR", "BMMR_mini",
    "VCR_EN_EASY_500", "VCR_EN_EASY_100", "VCR_EN_EASY_ALL", "VCR_EN_HARD_500", "VCR_EN_HARD_100", "VCR_EN_HARD_ALL",
    "VCR_ZH_EASY_500", "VCR_ZH_EASY_100", "VCR_ZH_EASY_ALL", "VCR_ZH_HARD_500", "VCR_ZH_HARD_100", "VCR_ZH_HARD_ALL",
})  # fmt: skip
# res_18: ['DocVQA_VAL', 'DocVQA_TEST', 'DUDE', 'MMLongBench_DOC', 'SLIDEVQA']
TILES_18 = frozenset({
    "DocVQA_VAL", "DocVQA_TEST", "DUDE", "DUDE_MINI", "MMLongBench_DOC", "SLIDEVQA", "SLIDEVQA_MINI",
})  # fmt: skip
# res_24: ['InfoVQA_VAL', 'InfoVQA_TEST', 'OCRBench', 'HRBench4K', 'HRBench8K']
TILES_24 = frozenset({
    "InfoVQA_VAL", "InfoVQA_TEST", "OCRBench", "OCRBench_MINI", "OCRBench_v2", "OCRBench_v2_MINI", "HRBench4K",
    "HRBench8K", "OceanOCRBench", "olmOCRBench",
})  # fmt: skip

MCQ_SUFFIX = "\nAnswer with the option's letter from the given choices directly."
MCQ_SUFFIX_CN = "\n请直接回答选项字母。"
OPEN_SUFFIX = "\nAnswer the question directly."
OPEN_SUFFIX_CN = "\n请直接回答问题。"
SHORT_ANSWER = "\nAnswer the question using a single word or phrase."
YORN_SHORT_SUFFIX = " Answer the question using a single word or phrase."
YORN_YES_NO_SUFFIX = " Please answer yes or no. Answer the question using a single word or phrase."
DETAIL_SUFFIX = "\nAnswer this question in detail."
MATHVERSE_FROM, MATHVERSE_TO = "please directly answer the question and", "please"


def tiles_for(dataset: str | None) -> int:
    """VLMEvalKit's max_num (tiles per image, thumbnail not counted) for a benchmark."""
    if dataset in TILES_12:
        return 12
    if dataset in TILES_18:
        return 18
    if dataset in TILES_24:
        return 24
    return DEFAULT_TILES


def _cell(line: Mapping[str, Any], field: str, info: DatasetInfo) -> str:
    value = line.get(field)
    if is_blank(value):
        raise ValueError(f"{info.name}, index {line.get('index')}: field {field!r} is empty")
    return str(value)


def multi_choice_text(line: Mapping[str, Any], info: DatasetInfo) -> str:
    """build_multi_choice_prompt: hint line, question, `L. option` lines, then the answer instruction (Chinese when
    the text has a CJK character)."""
    question = _cell(line, "question", info)
    hint = row_hint(line)
    if hint is not None:
        question = f"{hint}\n{question}"
    options = row_options(line)
    prompt = question + "".join(f"\n{letter}. {text}" for letter, text in options.items())
    chinese = has_cjk(prompt)
    if options:
        return prompt + (MCQ_SUFFIX_CN if chinese else MCQ_SUFFIX)
    return prompt + (OPEN_SUFFIX_CN if chinese else OPEN_SUFFIX)


def prompt_text(line: Mapping[str, Any], info: DatasetInfo) -> str:
    """The text InternVLChat.build_prompt writes for a row (before the images are placed)."""
    kind = vlmeval_type(info)
    if kind == "MCQ":
        return multi_choice_text(line, info)
    question = _cell(line, "question", info)
    if kind == "Y/N":
        if info.name in YORN_SHORT:
            return question + YORN_SHORT_SUFFIX
        if info.name in YORN_YES_NO:
            return question + YORN_YES_NO_SUFFIX
        return question
    if kind == "VQA":
        if info.name in VQA_DETAIL:
            return question + DETAIL_SUFFIX
        if info.name in VQA_MATHVERSE:
            return question.replace(MATHVERSE_FROM, MATHVERSE_TO)
        if info.name in VQA_PLAIN:
            return question
        return question + SHORT_ANSWER
    return question


def place_images(text: str, images: list[str], info: DatasetInfo) -> list[Part]:
    """reorganize_prompt as parts: one image before the text; several as `Image-k: ` + image lines first."""
    if info.name in MUIRBENCH:
        text = text.replace(" ".join(["<image>"] * len(images)), "")
        for k in range(1, len(images) + 1):
            text = text.replace("<image>", f"<Image-{k}>", 1)
    elif len(images) == 1:
        return [{"type": "image", "value": images[0]}, {"type": "text", "value": text}]
    parts: list[Part] = []
    for k, image in enumerate(images, 1):
        parts += [{"type": "text", "value": f"Image-{k}: "}, {"type": "image", "value": image}]
    return [*parts, {"type": "text", "value": text}]


class InternVLPrompts(PromptFamily):
    """VLMEvalKit's InternVLChat prompts (V2.0, as config.py runs InternVL3) and tiles per benchmark."""

    name = "internvl"

    def use_custom_prompt(self, info: DatasetInfo) -> bool:
        return (self.own_prompts and wrapper_is_asked(info) and info.name not in DATASET_PROMPT
                and info.name not in NAMED_DATASET_PROMPT and info.kind not in NO_CUSTOM_KINDS)

    def build_prompt(self, line: Mapping[str, Any], info: DatasetInfo) -> list[Part]:
        return place_images(prompt_text(line, info), list(info.images(line)), info)

    def processor_kwargs(self, dataset: str | None) -> dict[str, Any]:
        """Image-processor kwargs for the benchmark's calls: dynamic tiling to VLMEvalKit's max_num, thumbnail on."""
        return {"crop_to_patches": True, "min_patches": 1, "max_patches": tiles_for(dataset)}
