"""MME-SCI (MMESCI_*): VLMEvalKit's prompt, with the images at the question's `<image_k>` marks; scored as the
ShortQA kind (datasets_tsv.kinds.shortqa, with an LLM judge).
"""

from __future__ import annotations

import re
from typing import Any

from vlmkit.core.message import Part

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.shortqa import ShortQADataset

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
