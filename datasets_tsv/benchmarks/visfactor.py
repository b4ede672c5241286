"""VisFactor (and its GE, GN, GH parts; each with a `_CoT` variant): VLMEvalKit's VisFactor.

The prompt, as VLMEvalKit builds it: the row's `question` with `<br>` turned into line breaks, each
`<ADDITIONAL_i>` replaced by the i-th `;`-separated item of `additional` (its `<br>` turned into line breaks too;
a tag past the end stays), and for the CoT variants (`cot` option) `Output: Respond` replaced by `Output: Solve the
problem step-by-step. First, reason through the problem clearly. At the end, respond`; then the text is cut at each
`<IMAGE_n>` tag, which becomes the row's image n (VLMEvalKit reads the tag's last digit), in order: text and images
interleaved. Scoring: vlmkit.scoring.benchmarks.visfactor.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

COT_FROM = "Output: Respond"
COT_TO = "Output: Solve the problem step-by-step. First, reason through the problem clearly. At the end, respond"
_ADDITIONAL = re.compile(r"<ADDITIONAL_(\d+)>")
_IMAGE = re.compile(r"(<IMAGE_\d+>)")


class VisFactorDataset(TSVDataset):
    """VisFactor (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category_id", "eval_index", "additional")

    def __init__(self, name: str, *, cot: bool = False, **kwargs: Any) -> None:
        self.cot = bool(cot)
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        text = self.text(line, "question").replace("<br>", "\n")
        extra = line.get("additional")
        if not is_blank(extra):
            items = str(extra).replace("<br>", "\n").split(";")
            text = _ADDITIONAL.sub(lambda m: items[int(m.group(1))] if int(m.group(1)) < len(items) else m.group(0),
                                   text)  # fmt: skip
        if self.cot:
            text = text.replace(COT_FROM, COT_TO)
        return text

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        images = self._images_at(pos)
        parts: list[Part] = []
        for piece in (p for p in _IMAGE.split(self.prompt_text(row)) if p):
            if _IMAGE.fullmatch(piece):
                number = int(piece[-2])
                if number >= len(images):
                    raise DatasetError(f"{self._where(row, 'question')}: {piece} but the row has {len(images)} "
                                       "image(s)")  # fmt: skip
                parts.append({"type": "image", "value": images[number]})
            else:
                parts.append({"type": "text", "value": piece})
        return parts

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.visfactor import score_visfactor

        result = score_visfactor(df)
        if judge is not None:
            result.notes.append("VLMEvalKit scores VisFactor by its rules only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "visfactor", "cot": self.cot}
