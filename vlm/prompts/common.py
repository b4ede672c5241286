"""What VLMEvalKit's prompt-writing wrappers share: the dataset type they test, whether they are asked at all, a
row's options and hint, the CJK test that picks a Chinese instruction, and a base class for a family (`PromptFamily`).

VLMEvalKit asks `DATASET_TYPE(name)` for the dataset's class `TYPE`. A catalog benchmark carries that TYPE as
VLMEvalKit's code gives it (the catalog's `vlmevalkit_type` column, handed over as `DatasetInfo.vlmevalkit_type`):
`MCQ_MMMU_Pro` for MMMU-Pro, `MMERealWorld`, `VQA` for LogicVista, ... A dataset without one (a user's TSV) is
typed by its kind, which maps one to one onto the types the wrappers test (`VLMEVAL_TYPES`).

VLMEvalKit asks no wrapper when the dataset class forces its own prompt (`force_use_dataset_prompt`: the catalog's
`vlmevalkit_prompt` is `dataset`), and a wrapper's prompt cannot serve a video benchmark: VLMEvalKit's video loop
calls `build_prompt(line, dataset=<the dataset object>, video_llm=...)`, which the image wrappers here (Qwen2-VL,
LLaVA) cannot take, and InternVL declines video by DATASET_MODALITY (`wrapper_is_asked`).
A cell counts as missing exactly when `pd.isna` says so in VLMEvalKit (`vlmkit.core.cells.is_missing`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from vlmkit.core.cells import is_blank, is_missing
from vlmkit.core.contracts import DatasetInfo

# vlmkit kind -> VLMEvalKit's dataset TYPE, for the types the wrappers test. Other kinds (shortqa: VLMEvalKit's
# 'Short', caption, video, multi-turn, ...) match none of them.
VLMEVAL_TYPES = {"mcq": "MCQ", "yorn": "Y/N", "vqa": "VQA"}
_CJK = re.compile("[\u4e00-\u9fff]")


def vlmeval_type(info: DatasetInfo) -> str | None:
    """VLMEvalKit's DATASET_TYPE for the dataset: the TYPE it carries (`vlmevalkit_type`, from the catalog), else
    the one its kind maps to ('MCQ', 'Y/N', 'VQA'); None for any other kind."""
    carried = getattr(info, "vlmevalkit_type", None)
    return str(carried) if carried else VLMEVAL_TYPES.get(info.kind)


def wrapper_is_asked(info: DatasetInfo) -> bool:
    """Whether VLMEvalKit lets a model wrapper write this dataset's prompt at all: not when the dataset forces its
    own (`vlmevalkit_prompt` is `dataset`), not for a video benchmark."""
    return getattr(info, "vlmevalkit_prompt", None) != "dataset" and info.kind != "video"


def row_question(line: Mapping[str, Any], info: DatasetInfo, field: str = "question") -> str:
    """A row's question text; ValueError naming the dataset, the row and the field when it is missing or blank (the
    runner then records that row as failed, as for the dataset's own prompt)."""
    value = line.get(field)
    if is_blank(value):
        raise ValueError(f"{info.name}, row index {line.get('index')}, field {field}: empty")
    return str(value)


def row_options(line: Mapping[str, Any]) -> dict[str, Any]:
    """The row's options, letter -> text, for each capital letter A..Z the row has a value in."""
    return {letter: line[letter] for letter in string.ascii_uppercase if letter in line and not is_missing(line[letter])}


def row_hint(line: Mapping[str, Any]) -> Any | None:
    """The row's hint, None when it has no `hint` column or the cell is missing."""
    value = line.get("hint")
    return None if is_missing(value) else value


def has_cjk(text: str) -> bool:
    """VLMEvalKit's cn_string: the text holds a CJK unified ideograph (U+4E00..U+9FFF)."""
    return _CJK.search(text) is not None


def images_then_text(paths: list[str], text: str) -> list[dict[str, str]]:
    """The row's images in order, then one text part: the message every family prompt here builds."""
    return [*({"type": "image", "value": p} for p in paths), {"type": "text", "value": text}]


class PromptFamily:
    """Base of a family's prompts object (`vlm.prompts`): it holds the preset's values and answers the questions the
    runner and the local model ask; a family overrides what it changes.

    values: the preset's values (min_pixels, max_pixels, max_new_tokens, ...).
    own_prompts: False where VLMEvalKit runs this wrapper with `use_custom_prompt=False` (the preset's
        vlmeval_prompt is `dataset`): no prompt of its own, the per-dataset processor settings still apply.
    """

    name = ""

    def __init__(self, values: Mapping[str, Any] | None = None, *, own_prompts: bool = True) -> None:
        self.values = dict(values or {})
        self.own_prompts = bool(own_prompts)

    def use_custom_prompt(self, info: DatasetInfo) -> bool:
        return False

    def build_prompt(self, line: Mapping[str, Any], info: DatasetInfo) -> list[dict[str, str]]:
        raise NotImplementedError(f"{type(self).__name__} writes no prompt for {info.name}")

    def processor_kwargs(self, dataset: str | None) -> dict[str, Any]:
        """Image-processor settings for generating on that dataset (by name, as VLMEvalKit keys them); {}: none."""
        return {}

    def describe(self) -> dict[str, Any]:
        """What results.json records of the family."""
        return {"name": self.name, "own_prompts": self.own_prompts}
