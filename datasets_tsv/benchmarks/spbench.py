"""SPBench (SPBench-MV, SPBench-SI; `cot` for their _CoT names): VLMEvalKit's SPBench (vlmeval/dataset/spbench.py at
e8e78f05), prompts from the SpatialLadder code base.

The prompt: the row's images, then one text. The question is the row's `question`, followed by `\\nOptions:\\n` and
the `candidates` (a list literal; a text that is not one is a single option) joined by line breaks when there are
any; then the template's pre-prompt (`Question: {question}\\n`, or with `cot` the thinking template), a line break
and the post-prompt of the row's task: multiple choice for `object_rel_direction`/`object_rel_distance`, a number
for the other question types (vlmkit.scoring.benchmarks.spbench.task_type). A blank `candidates` cell means no
options (VLMEvalKit's join fails on it).

Images: the TSV names them in `image_path`, files of the benchmark's Hugging Face snapshot (hongxingli/SPBench, its
zip files unpacked); give that folder with `--data-root` (datasets_tsv.io.snapshot_images). A TSV that carries its
images is used as it is. Scoring: vlmkit.scoring.benchmarks.spbench (by VLMEvalKit's rules; a judge is not asked).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, ClassVar

from vlmkit.core.cells import is_blank
from vlmkit.scoring.benchmarks.spbench import task_type

from datasets_tsv.io.snapshot_images import SnapshotImages
from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.rule_scored import OwnRuleScoring

THINKING = (
    "Question: {question}\n"
    "Please think about this question as if you were a human pondering deeply. "
    "Engage in an internal dialogue using expressions such as 'let me think', 'wait', 'Hmm', 'oh, I see', "
    "'let's break it down', etc, or other natural language thought expressions "
    "It's encouraged to include self-reflection or verification in the reasoning process. \n"
)
TEMPLATES = {
    False: {
        "pre": "Question: {question}\n",
        "MCQ": "Please answer with the option's letter from the given choices (e.g., A, B, etc.) directly.",
        "NA": "Please answer the question using a numerical value (e.g., 42 or 3.1) directly.",
    },
    True: {
        "pre": THINKING,
        "MCQ": "Please provide your detailed reasoning between the <think> </think> tags, and then answer the question "
               "with the option's letter from the given choices (e.g., A, B, etc.) within the <answer> </answer> tags.",
        "NA": "Please provide your detailed reasoning between the <think> </think> tags, and then answer the question "
              "with a numerical value (e.g., 42 or 3.1) within the <answer> </answer> tags.",
    },
}  # fmt: skip


def candidate_list(value: Any) -> list[str]:
    """The options of a `candidates` cell: a list literal's items; a text that is no literal is one option."""
    if is_blank(value):
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    text = str(value)
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return [text] if text.strip() else []
    if parsed is None:
        return []
    if isinstance(parsed, (list, tuple)):
        return [str(v) for v in parsed]
    return [str(parsed)]


class SPBenchDataset(OwnRuleScoring, SnapshotImages):
    """SPBench (module docstring)."""

    kind: ClassVar[str] = "mcq"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question_type")
    prompt_columns: ClassVar[tuple[str, ...]] = ("question", "question_type")
    rule_scorer: ClassVar[str] = "spbench"

    def __init__(self, name: str, *, cot: bool = False, image_subdir: str = "",
                 data_root: Path | str | None = None, **kwargs: Any) -> None:  # fmt: skip
        self.cot = bool(cot)
        self._set_snapshot(data_root, image_subdir)
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        question = self.text(line, "question")
        options = candidate_list(line.get("candidates"))
        if options:
            question += "\nOptions:\n" + "\n".join(options)
        try:
            kind = task_type(str(line.get("question_type")), self._where(line, "question_type"))
        except ValueError as exc:
            raise DatasetError(str(exc)) from None
        template = TEMPLATES[self.cot]
        return template["pre"].format(question=question) + "\n" + template[kind]
