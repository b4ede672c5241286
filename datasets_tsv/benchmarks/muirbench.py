"""MUIRBench: multi-image multiple choice with VLMEvalKit's own prompt and `<image>` placeholders.

The text is `{question}\\n`, then one `{L}. {text}` line per option joined by newlines, then
`\\nAnswer with the option's letter from the given choices directly.` (no Hint/Question prefix, no `Options:`);
it is split on `<image>` and the row's images are placed there in order, as in VLMEvalKit. Scoring is the plain
MCQ scorer. Choices made here:
- the i-th `<image>` takes the i-th image; placeholders beyond the row's images are dropped (VLMEvalKit's
  behaviour), and so are images no placeholder asks for (VLMEvalKit's behaviour, kept for comparable scores);
- a text without any `<image>` gets its images first (VLMEvalKit then sends no image at all);
- empty text pieces between adjacent placeholders are left out (as VLMEvalKit does).
"""

from __future__ import annotations

from typing import Any, ClassVar

from vlmkit.core.message import Part

from datasets_tsv.kinds.base import READING_NOTE
from datasets_tsv.kinds.mcq import ImageMCQDataset, row_options

PLACEHOLDER = "<image>"
CLOSING = "\nAnswer with the option's letter from the given choices directly."


def muir_prompt(question: str, options: list[tuple[str, str]]) -> str:
    """VLMEvalKit's MUIRBench prompt text from its pieces."""
    prompt = f"{question}\n"
    if options:
        prompt += "\n".join(f"{letter}. {text}" for letter, text in options) + CLOSING
    return prompt


def place_images(text: str, images: list[str]) -> list[Part]:
    """Parts with the i-th image at the i-th `<image>` of text (see the module docstring)."""
    pieces = text.split(PLACEHOLDER)
    if len(pieces) == 1:
        return [*({"type": "image", "value": p} for p in images), {"type": "text", "value": text}]
    parts: list[Part] = []
    for i, piece in enumerate(pieces):
        if 0 < i <= len(images):
            parts.append({"type": "image", "value": images[i - 1]})
        if piece:
            parts.append({"type": "text", "value": piece})
    return parts


class MUIRBenchDataset(ImageMCQDataset):
    """MUIRBench-style multi-image MCQ (never circular)."""

    notes: ClassVar[tuple[str, ...]] = (
        READING_NOTE,
        "a question without <image> placeholders gets its images first (VLMEvalKit sends it without images)",
    )

    def prompt_text(self, line: dict[str, Any]) -> str:
        return muir_prompt(self.text(line, "question"), row_options(line))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        _, row = self._row(line)
        return place_images(self.prompt_text(row), self.image_paths(row))
