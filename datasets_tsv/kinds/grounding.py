"""TDBench grounding (tdbench_grounding_rot0/90/180/270): VLMEvalKit's TDBenchGrounding prompt and box scorer.

The prompt, character for character: the row's images, then `\\nPlease output the coordinates of the {question} in
the image in the format [x1, y1, x2, y2]. Do not include any additional text. Respond with relative coordinates
between 0 and 1, with top left corner (0, 0), top right (1, 0) and bottom right (1, 1).` (the `question` cell names
the object; the text starts with a line break). Scoring: vlmkit.scoring.kinds.grounding, `method` centroid (VLMEvalKit's
default) or iou, a catalog option.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset

PROMPT = (
    "\nPlease output the coordinates of the {obj} in the image in the format [x1, y1, x2, y2]. Do not include any "
    "additional text. Respond with relative coordinates between 0 and 1, with top left corner (0, 0), top right "
    "(1, 0) and bottom right (1, 1)."
)


class BoxGroundingDataset(TSVDataset):
    """Relative-coordinate box grounding (module docstring)."""

    kind: ClassVar[str] = "vqa"

    def __init__(self, name: str, *, method: str = "centroid", **kwargs: Any) -> None:
        from vlmkit.scoring.kinds.grounding import METHODS

        if method not in METHODS:
            raise ValueError(f"{name}: method {method!r}; choose one of {', '.join(METHODS)}")
        self.method = method
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return PROMPT.format(obj=self.text(line, "question"))

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.kinds.grounding import score_grounding

        result = score_grounding(df, self.method)
        if judge is not None:
            result.notes.append("a judge model is not used for box grounding; the catalog's method decides")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "grounding", "method": self.method}
