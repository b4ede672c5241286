"""CC-OCR, all four tracks (CCOCR_MultiLanOcr_*, CCOCR_MultiSceneOcr_*, CCOCR_Kie_*, CCOCR_DocParsing_*, and the
combined CCOCR file): VLMEvalKit's CCOCRDataset.

The prompt is VLMEvalKit's ImageBaseDataset prompt: the row's image(s), then its `question` as it is. Scoring:
vlmkit.scoring.benchmarks.ccocr (token F1 per row, macro F1 per sub-dataset, `lan_ocr`/`scene_ocr`; KIE field F1 and
tree-edit-distance accuracy, `kie`; document parsing by edit distance and tables by TEDS, `doc_parsing`; and `total`,
the mean of the tracks present). The table rows need the optional lxml and apted (`pip install 'vlmkit[ocr]'`).
"""

from __future__ import annotations

from typing import ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import TSVDataset


class CCOCRDataset(TSVDataset):
    """CC-OCR (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category", "l2-category", "split", "image_name")

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.ccocr import score_ccocr

        result = score_ccocr(df)
        if judge is not None:
            result.notes.append("VLMEvalKit scores CC-OCR by its rules only; the judge given was not asked")
        return result

    def scoring_problem(self) -> str | None:
        """A missing column, or (for a file with table-parsing rows) the TEDS libraries not installed: said before
        inference."""
        problem = super().scoring_problem()
        if problem is None and "l2-category" in self.data.columns and (self.data["l2-category"] == "table").any():
            from vlmkit.scoring.benchmarks.ccocr_tables import missing_library

            missing = missing_library()
            return f"{self.tsv_path}: {missing}" if missing else None
        return problem

    def scorer_params(self) -> dict[str, str]:
        return {"scorer": "ccocr"}
