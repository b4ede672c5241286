"""MOAT: capability-integration questions checked by an LLM judge (vlmkit.scoring.benchmarks.moat).

The TSV (VLMEvalKit's MOAT.tsv) names its images by file (`images`, `outside_knowledge_images`: lists) in
MOAT_images.zip (https://huggingface.co/datasets/waltsun/MOAT/resolve/main/MOAT_images.zip, MD5
c0818a3e0a3f0bc7ee2be89ff04d73a6), which VLMEvalKit unzips to $LMUData/MOAT_images; vlmkit finds them under
`--data-root` (that unzipped folder), or $LMUData/MOAT_images without it.

The prompt is VLMEvalKit's (MOAT.build_prompt): one text, `VQA_SYSTEM_PROMPT`, a new line and the question (with
`\\nThe choices are: <choices>` when the row has choices, the list written as Python writes a list), then the images,
then `Hint:\\n<outside_knowledge_text>` when there is one, then the outside-knowledge images. VLMEvalKit shuffles each
row's choices with Python's `random`, seeded with 0 when the dataset is built, as the prompts are built; vlmkit
reproduces the order of a fresh VLMEvalKit run, which builds every prompt in row order (`shuffled_choices`): the
shuffles are drawn for all rows in that order from `random.Random(0)`, whatever order vlmkit asks them in. A resumed
or multi-process VLMEvalKit run builds its prompts in another order and so shuffles differently.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.files import UnsafePathError, contained_path
from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.moat import list_cell
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.judged import JudgedDataset

RANDOM_SEED = 0
IMAGE_FOLDER = "MOAT_images"
# VLMEvalKit's VQA_SYSTEM_PROMPT (json.dumps of its dict, default separators, ASCII)
VQA_SYSTEM_PROMPT = json.dumps({
    "task": "Answer the question presented to you truthfully.",
    "requirements": [
        "Analyze the image(s) first, then answer the question. If you are given a list of possible answers, you "
        "must choose from it.",
        'You must answer in the following json format: {"analysis": "(write your analysis here)", "answer": "(your '
        'answer)"}',
    ],
})


def shuffled_choices(cells: list[Any], seed: int = RANDOM_SEED) -> list[list[str]]:
    """Each row's choices in the order a fresh VLMEvalKit run shows them: one Random(seed) shuffling the rows' lists
    in row order (a row without choices draws nothing)."""
    rng = random.Random(seed)
    out = []
    for cell in cells:
        choices = list_cell(cell)
        if choices:
            rng.shuffle(choices)
        out.append(choices)
    return out


class MOATDataset(JudgedDataset):
    """MOAT (module docstring)."""

    takes_data_root: ClassVar[bool] = True
    judge_scorer = "MOAT verdict (LLM judge)"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "capability")

    def __init__(self, name: str, *, data_root: Path | str | None = None, **kwargs: Any) -> None:
        self.kind = "vqa"
        self.scorer = None
        self.question_column = "question"
        self.suffix = ""
        self.prompt_columns = ("question",)
        self.data_root = Path(data_root).expanduser() if data_root is not None else None
        self._choices: list[list[str]] | None = None
        self._choices_lock = threading.Lock()
        TSVDataset.__init__(self, name, **kwargs)

    @property
    def image_dir(self) -> Path:
        return self.data_root if self.data_root is not None else self.root / IMAGE_FOLDER

    def choices_of(self, pos: int) -> list[str]:
        with self._choices_lock:
            if self._choices is None:
                cells = self.data["choices"].tolist() if "choices" in self.data.columns else [None] * len(self.data)
                self._choices = shuffled_choices(cells)
        return self._choices[pos]

    def _file(self, line: dict[str, Any], field: str, name: str) -> str:
        try:
            path = contained_path(self.image_dir, name.strip().lstrip("/\\"))
        except UnsafePathError as exc:
            raise DatasetError(f"{self._where(line, field)}: {exc}") from None
        if not path.is_file():
            raise DatasetError(f"{self._where(line, field)}: {path} not found (unzip MOAT_images.zip there, or pass "
                               "--data-root to the unzipped folder)")
        return str(path)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        question = self.text(row, "question")
        choices = self.choices_of(pos)
        if choices:
            question += f"\nThe choices are: {choices}"
        parts: list[Part] = [{"type": "text", "value": VQA_SYSTEM_PROMPT + "\n" + question}]
        parts += [{"type": "image", "value": self._file(row, "images", n)} for n in list_cell(row.get("images"))]
        hint = row.get("outside_knowledge_text")
        if not is_blank(hint):
            parts.append({"type": "text", "value": "Hint:\n" + str(hint)})
        parts += [{"type": "image", "value": self._file(row, "outside_knowledge_images", n)}
                  for n in list_cell(row.get("outside_knowledge_images"))]
        return parts

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.moat import score_moat

        return score_moat(df, judge, what=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "moat", "images": str(self.image_dir)}
