"""MedQ-Bench descriptions: MedqbenchCaption_dev/_test (one image) and MedqbenchPairedDescription_dev/_test (two
images compared), graded 0-2 on four dimensions by an LLM judge (vlmkit.scoring.benchmarks.medqbench).

The prompt is VLMEvalKit's (MedqbenchCaptionDataset / MedqbenchPairedDescriptionDataset): the row's images, then its
`question`; a TSV without a `question` column gets VLMEvalKit's fixed instruction (`CAPTION_INSTRUCTION` /
`PAIRED_INSTRUCTION`, character for character). Images: base64 `image` (a list for a pair), or `image_path` file
names, found under `--data-root` (the Hugging Face snapshot jiyaoliufd/MedQ-Bench, as VLMEvalKit resolves them)
or under $LMUData/images/<name>/. VLMEvalKit also merges base64 `image_a`/`image_b` columns into the pair; vlmkit
refuses such a file in one line (write the two into `image` as a list). The reference the judge compares with is
the `description` column. There is no download: VLMEvalKit takes the TSVs from that snapshot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.snapshot_images import SnapshotImages
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.base import IMAGE_COLUMNS, TSVDataset
from datasets_tsv.kinds.judged import JudgedDataset

# VLMEvalKit's instruction for a TSV without a `question` column (medqbench_caption.py load_data)
CAPTION_INSTRUCTION = (
    "As a medical image quality assessment expert, provide a concise description focusing on "
    "low-level appearance of the image in details. Conclude with \"Overall, the quality of this "
    "image is [good/usable/reject]\". Please provide a comprehensive but concise assessment in "
    "3-5 sentences."
)
# ... and medqbench_paired_description.py load_data
PAIRED_INSTRUCTION = (
    "As a medical image quality assessment expert, provide a concise description comparing two images "
    "focusing on low-level appearance. Conclude with which image has higher quality. Please provide a "
    "comprehensive but concise assessment in 3-5 sentences."
)


class MedqbenchDescriptionDataset(SnapshotImages, JudgedDataset):
    """A MedQ-Bench description benchmark (module docstring); `paired=True` for the two-image comparison."""

    judge_scorer = "MedQ-Bench description grading (LLM judge, 0-2 on four dimensions)"
    answer_columns: ClassVar[tuple[str, ...]] = ("description",)

    def __init__(self, name: str, *, paired: bool = False, data_root: Path | str | None = None,
                 **kwargs: Any) -> None:
        self.paired = bool(paired)
        self.kind = "caption"
        self.scorer = None
        self.question_column = "question"
        self.suffix = ""
        self.prompt_columns = ()  # `question` is optional: VLMEvalKit's instruction stands in for it
        self._has_question = False
        self._set_snapshot(data_root, "")
        TSVDataset.__init__(self, name, **kwargs)

    def _check_header(self) -> list[str]:
        header = super()._check_header()
        self._has_question = "question" in header
        if not any(column in header for column in IMAGE_COLUMNS) and ("image_a" in header or "image_b" in header):
            raise DatasetError(f"{self.tsv_path}: images in `image_a`/`image_b` columns are not read by vlmkit; "
                               "put the two base64 images in `image` as a list ([\"<a>\", \"<b>\"])")
        return header

    def prompt_text(self, line: dict[str, Any]) -> str:
        if self._has_question:
            return self.text(line, "question")
        return PAIRED_INSTRUCTION if self.paired else CAPTION_INSTRUCTION

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.medqbench import score_medqbench_caption, score_medqbench_paired

        score = score_medqbench_paired if self.paired else score_medqbench_caption
        return score(df, judge, what=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "medqbench", "paired": self.paired, **self.snapshot_params()}
