"""MMMU: multiple choice with images placed where the text says `<image k>`.

The MCQ prompt text (see image_mcq) is split on `<image k>` placeholders and image k-1 goes there, as in
VLMEvalKit. Choices made here:
- k may have any number of digits: `<image 10>` is the tenth image. VLMEvalKit reads a single digit, so it fails
  on rows with ten or more images; vlmkit does better.
- When the text has at least one placeholder, images it does not reference are dropped and a repeated reference
  repeats the image (VLMEvalKit's behaviour, kept for comparable scores). When it has none, the images come
  first, then the text, like every other kind.
- A placeholder naming an image the row does not have is an error naming the row (VLMEvalKit: IndexError).
- Empty text pieces between adjacent placeholders are left out (VLMEvalKit keeps empty text parts).
Open questions (no options) are scored as VLMEvalKit does: A = the answer text, B = "Other Answers", answer A; a
number is read with trailing zeros and a unit (`3.50 m` for 3.5, as VLMEvalKit reads it since `3.5` is inside it;
vlmkit needs the whole number, so `112` is not 12 there, where VLMEvalKit's substring test reads it).
Headline (MMMU_DEV_VAL): the validation split's Overall, the figure VLMEvalKit reports (its report_primary_metric:
`split=validation|Overall`), named `Overall (validation)`; the table keeps a row per split and `Overall` (dev and
validation together) stays a metric (vlmkit.scoring.kinds.mcq).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.core.message import Part
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import READING_NOTE, DatasetError
from datasets_tsv.kinds.mcq import ImageMCQDataset

PLACEHOLDER = re.compile(r"<image (\d+)>")


def interleave(text: str, images: list[str], where: str = "") -> list[Part]:
    """Parts with image k-1 at each `<image k>` of text; images first when text has no placeholder."""
    pieces = PLACEHOLDER.split(text)
    if len(pieces) == 1:
        parts: list[Part] = [{"type": "image", "value": p} for p in images]
        return [*parts, {"type": "text", "value": text}]
    parts = []
    for j, piece in enumerate(pieces):
        if j % 2 == 0:
            if piece:
                parts.append({"type": "text", "value": piece})
            continue
        k = int(piece)
        if not 1 <= k <= len(images):
            raise DatasetError(f"{where}: <image {k}> but the row has {len(images)} image(s)")
        parts.append({"type": "image", "value": images[k - 1]})
    return parts


def open_as_choice(df: pd.DataFrame) -> pd.DataFrame:
    """VLMEvalKit's MMMU_preproc: a row without option A becomes A = its answer, B = 'Other Answers', answer A."""
    open_rows = df["A"].map(is_missing) if "A" in df.columns else pd.Series(True, index=df.index)
    if not open_rows.any():
        return df
    df = df.copy()
    for column in ("A", "B"):
        if column not in df.columns:
            df[column] = pd.Series(pd.NA, index=df.index, dtype=object)
        df[column] = df[column].astype(object)
    df.loc[open_rows, "A"] = df.loc[open_rows, "answer"]
    df.loc[open_rows, "B"] = "Other Answers"
    df.loc[open_rows, "answer"] = "A"
    return df


class MMMUDataset(ImageMCQDataset):
    """MMMU-style interleaved multiple choice (never circular)."""

    kind: ClassVar[str] = "mcq"
    notes: ClassVar[tuple[str, ...]] = (
        READING_NOTE,
        "<image k> with k >= 10 is placed (VLMEvalKit reads one digit)",
        "empty text pieces between adjacent <image k> placeholders are left out",
    )

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        _, row = self._row(line)
        return interleave(self.prompt_text(row), self.image_paths(row), self._where(row, "question"))

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.mcq import score_mcq

        return score_mcq(open_as_choice(df), circular=False, fuzzy=fuzzy, judge=judge, judge_prompt=self.judge_prompt)

    def scorer_params(self) -> dict[str, Any]:
        params = {"scorer": "mcq", "circular": False, "open_questions": "as A=answer / B=Other Answers"}
        if self.judge_prompt != "default":
            params["judge_prompt"] = self.judge_prompt
        return params
