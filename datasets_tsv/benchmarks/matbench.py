"""MATBench (multimodal agentic tasks: code and search): VLMEvalKit's MATBench (vlmeval/dataset/matbench.py at
e8e78f05).

The prompt, as VLMEvalKit builds it: the row's first image, then the text of the row's third column (VLMEvalKit reads
`line[2]`, by position, whatever the column is called; the question in the published file) followed by
`\\nAnswer the question directly. The answer should be very brief.`. Scoring: vlmkit.scoring.benchmarks.matbench.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

from vlmkit.core.message import Part

from datasets_tsv.io.tsv_read import read_header
from datasets_tsv.kinds.base import DatasetError, TSVDataset
from datasets_tsv.kinds.rule_scored import OwnRuleScoring

SUFFIX = "\nAnswer the question directly. The answer should be very brief."


class MATBenchDataset(OwnRuleScoring, TSVDataset):
    """MATBench (module docstring)."""

    kind: ClassVar[str] = "vqa"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "category", "split")
    rule_scorer: ClassVar[str] = "matbench"
    prompt_columns: ClassVar[tuple[str, ...]] = ()  # the prompt is the third column, whatever its name

    @cached_property
    def _header(self) -> list[str]:
        return read_header(self.tsv_path)

    def prompt_text(self, line: dict[str, Any]) -> str:
        header = self._header
        if len(header) < 3:
            raise DatasetError(f"{self.tsv_path}: MATBench's prompt is the third column, and the file has "
                               f"{len(header)}")  # fmt: skip
        return self.text(line, header[2]) + SUFFIX

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        parts: list[Part] = [{"type": "image", "value": p} for p in self._images_at(pos)[:1]]
        parts.append({"type": "text", "value": self.prompt_text(row)})
        return parts
