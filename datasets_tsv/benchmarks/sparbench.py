"""SPAR-Bench (SparBench, SparBench_tiny): VLMEvalKit's SparBench (vlmeval/dataset/sparbench.py at e8e78f05).

The prompt: the row's images, then one text built from its `question` by the kind of its `task`
(vlmkit.scoring.benchmarks.sparbench.task_type), byte for byte as VLMEvalKit builds it:
- numeric: `\\n{question}\\nPlease answer the question using a single word or phrase.`
- multiple choice: `\\n{question}\\n{note}\\nAnswer with the option's letter from the given choices directly.`, where
  `note` says the boxes are normalised to 0-1000 for `position_matching` and `camera_motion_infer`, else is empty;
- `view_change_infer`: `\\n{question}\\n\\n`.
An unknown task is refused in one line naming the row. Scoring: vlmkit.scoring.benchmarks.sparbench.
"""

from __future__ import annotations

from typing import Any, ClassVar

from vlmkit.scoring.benchmarks.sparbench import task_type

from datasets_tsv.kinds.base import DatasetError, TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring

NA_POST = "Please answer the question using a single word or phrase."
MCQ_POST = "Answer with the option's letter from the given choices directly."
BOX_NOTE = ("The values represent the bounding box coordinates normalized to a 0-1000 scale, with the top-left corner "
            "as the origin of the image.")  # fmt: skip
BOX_TASKS = ("position_matching", "camera_motion_infer")


class SparBenchDataset(OwnRuleScoring, TSVDataset):
    """SPAR-Bench (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "task")
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "task")
    rule_scorer: ClassVar[str] = "sparbench"

    def prompt_text(self, line: dict[str, Any]) -> str:
        question = self.text(line, "question")
        task = str(line.get("task"))
        try:
            kind = task_type(task, self._where(line, "task"))
        except ValueError as exc:
            raise DatasetError(str(exc)) from None
        if kind == "NA":
            return "\n" + question + "\n" + NA_POST
        if kind == "MCQ":
            return "\n" + question + "\n" + (BOX_NOTE if task in BOX_TASKS else "") + "\n" + MCQ_POST
        return "\n" + question + "\n\n"
