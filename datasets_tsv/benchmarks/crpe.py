"""CRPE (CRPE_EXIST, CRPE_RELATION): VLMEvalKit's CRPE dataset, a VQA-type benchmark whose questions carry their own
options and instruction.

The prompt is VLMEvalKit's plain one (ImageBaseDataset.build_prompt): the row's images, then the question as it is.
Scoring: vlmkit.scoring.benchmarks.crpe (VLMEvalKit's is_correct per row, then groups of 4 consecutive rows, right when
all 4 are, as VLMEvalKit since 2025-09: accuracy per exist/subject/predicate/object and total over groups, as fractions;
the per-row accuracies under rows/; VLMEvalKit's own figure beside them).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset


class CRPEDataset(TSVDataset):
    """CRPE relation / existence probing (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category")

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.crpe import score_crpe

        result = score_crpe(df)
        if judge is not None:
            result.notes.append("VLMEvalKit scores CRPE by its rule only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "crpe"}
