"""Spatial457: VLMEvalKit's Spatial457 class (vlmeval/dataset/spatial457.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the level's instruction (`INSTRUCTIONS`, by the row's `category`) as a text part,
the row's image(s), the question, then `ANSWER_FORMAT` (the options are every attribute value, capitalised) asking for
a `{'Reasoning': ..., 'Answer': ...}` reply. Scoring: vlmkit.scoring.benchmarks.spatial457, by rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

from vlmkit.core.message import Part

from datasets_tsv.kinds.base import DatasetError, TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring

_LEAD = ("You are an intelligent chatbot designed to answer questions based on an image. Your task is to analyze the "
         "images, identify attributes of ")  # fmt: skip
_TAIL = "and then determine the answer to the question.\n"
INSTRUCTIONS = {
    "L1_single": _LEAD + "the objects, " + _TAIL,
    "L2_objects": _LEAD + "multiple objects, " + _TAIL,
    "L3_2d_spatial": _LEAD + "multiple objects and their spatial relationship from 2D projected camera view, " + _TAIL,
    "L4_occ": _LEAD + "multiple objects and their occlusion relationships, " + _TAIL,
    "L4_pose": _LEAD + "multiple objects and their facing direction in 3D space from the camera view, " + _TAIL,
    "L5_6d_spatial": _LEAD + "multiple objects and their spatial relationship from objects’ perspective in 3D space, "
    + _TAIL,
    "L5_collision": _LEAD + "multiple objects and their potential collision given the assumption of moving direction "
    "in 3D space, " + _TAIL,
}
ATTRIBUTES = (
    ("small", "large"),
    ("airliner", "dirtbike", "road bike", "tandem bike", "suv", "wagon", "scooter", "mountain bike", "minivan", "sedan",
     "school bus", "fighter", "chopper", "double bus", "truck", "articulated bus", "cruiser", "jet", "utility bike",
     "regular bus", "biplane"),
    ("gray", "blue", "purple", "brown", "green", "cyan", "red", "yellow"),
    ("left", "right", "front", "back"),
)  # fmt: skip
OPTIONS = ", ".join(v.capitalize() for values in ATTRIBUTES for v in values)
ANSWER_FORMAT = (
    "First, you should identify the related objects refered in the questions, including their shape, color, size; then "
    "add a brief reasoning process about the questions. Each object in the image has a shape (e.g., 'airliner'), "
    "a size (only can be 'small' or 'large'), a color (e.g. 'blue'). The size of the object is either 'small' or 'large'. The "
    "color of the object is one of the following: 'gray', 'blue', 'purple', 'brown', 'green', 'cyan', 'red', 'yellow'. "
    "The direction of the object is one of the following: 'left', 'right', 'front', 'back'.\n\nSecond, give the answer "
    "based on the reasoning process. The answer should only be (1) a phrase chosen from the following options: "
    f"{OPTIONS}, or (2) an integer [0-10] when asked for 'How many' or 'What is the number of', or (3) 'Yes' or 'No' "
    "when asked for 'Is there'. If you think there are no possible answers or the question is not clear, choose the "
    "best answer that fits the question.\n\nWrite your response into this json template: "
    "{'Reasoning': '<your reasons>', 'Answer': '<Your answer>'}"
)  # fmt: skip


class Spatial457Dataset(OwnRuleScoring, TSVDataset):
    """Spatial457 (module docstring)."""

    rule_scorer: ClassVar[str] = "spatial457"

    kind: ClassVar[str] = "vqa"
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "category")
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        level = self.text(row, "category")
        if level not in INSTRUCTIONS:
            raise DatasetError(f"{self._where(row, 'category')}: {level!r} is not one of {', '.join(INSTRUCTIONS)}")
        return [{"type": "text", "value": INSTRUCTIONS[level]},
                *({"type": "image", "value": p} for p in self._images_at(pos)),
                {"type": "text", "value": self.text(row, "question")}, {"type": "text", "value": ANSWER_FORMAT}]

