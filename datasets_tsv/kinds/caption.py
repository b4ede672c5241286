"""Image captioning (COCO_VAL): VLMEvalKit's ImageCaptionDataset.

The prompt is the row's images, then its `question`; a TSV without a `question` column (COCO_VAL has none) is
asked VLMEvalKit's default text, DEFAULT_QUESTION (with its trailing space). `answer` holds the reference captions
as a list literal. Scoring: BLEU-1..4, ROUGE-L and CIDEr x100 from pycocoevalcap (vlmkit.scoring.kinds.caption), an
optional extra: without it the build and inference work and scoring stops in one line naming
`pip install 'vlmkit[captions]'` (`scoring_problem()` says so before inference, for a caller that wants to know).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

DEFAULT_QUESTION = (
    'Please describe this image in general. Directly provide the description, do not include prefix like "This '
    'image depicts". '
)


class ImageCaptionDataset(TSVDataset):
    """Image captioning: `answer` is a list of reference captions; `question` is optional."""

    kind: ClassVar[str] = "caption"
    prompt_columns: ClassVar[tuple[str, ...]] = ()

    def prompt_text(self, line: dict[str, Any]) -> str:
        if "question" not in self.data.columns:
            return DEFAULT_QUESTION
        return self.text(line, "question")

    def scoring_problem(self) -> str | None:
        """Why this dataset cannot be scored here (a column it needs, or the caption library, is missing), or None."""
        from vlmkit.scoring.kinds.caption import missing_library

        return super().scoring_problem() or missing_library()

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.caption import score_captions

        return score_captions(df, source=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {
            "scorer": "caption", "library": "pycocoevalcap", "metrics": "Bleu(4), Rouge (ROUGE_L), Cider",
            "tokenizer": "none (raw strings split on white space)",
            "default_question": "question" not in self.data.columns,
        }  # fmt: skip
