"""CC-OCR's text-reading and key information extraction tracks (CCOCR_MultiLanOcr_*, CCOCR_MultiSceneOcr_*,
CCOCR_Kie_*): VLMEvalKit's CCOCRDataset.

The prompt is VLMEvalKit's ImageBaseDataset prompt: the row's image(s), then its `question` as it is. Scoring:
vlmkit.scoring.benchmarks.ccocr (token F1 per row, macro F1 per sub-dataset, `lan_ocr`/`scene_ocr`; KIE field F1 and
tree-edit-distance accuracy, `kie`; and `total`). The document-parsing track and the combined CCOCR file are listed in
the catalog, not built.
"""

from __future__ import annotations

from typing import ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset


class CCOCRDataset(TSVDataset):
    """CC-OCR text reading (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category", "l2-category", "split", "image_name")

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.ccocr import score_ccocr

        result = score_ccocr(df)
        if judge is not None:
            result.notes.append("VLMEvalKit scores CC-OCR by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, str]:
        return {"scorer": "ccocr"}
