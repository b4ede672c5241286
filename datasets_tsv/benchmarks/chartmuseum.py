"""ChartMuseum_dev, ChartMuseum_test: VLMEvalKit's ChartMuseum class (vlmeval/dataset/chartmuseum.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's first image, then `QA_PROMPT` with the question (VLMEvalKit's text,
its indentation included). Scored by an LLM judge (vlmkit.scoring.benchmarks.chartmuseum): a run needs --judge.
"""

from __future__ import annotations

from typing import Any

from vlmkit.core.message import Part

from datasets_tsv.kinds.judged import JudgedDataset

QA_PROMPT = (
    "Please answer the question using the chart image.\n\n    Question: {question}\n\n    Please first generate your "
    "reasoning process and then provide the user with the answer. Use the following format:\n\n    <think>\n    ... "
    "your thinking process here ...\n    </think>\n    <answer>\n    ... your final answer (entity(s) or number) ...\n"
    "    </answer>"
)


class ChartMuseumDataset(JudgedDataset):
    """ChartMuseum (module docstring)."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, scorer="chartmuseum", answer_columns=("question", "answer", "category"), **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return QA_PROMPT.format(question=self.text(line, "question"))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        """The first image only (VLMEvalKit sends `tgt_path[0]`), then the text."""
        pos, row = self._row(line)
        images = self._images_at(pos)[:1]
        return [*({"type": "image", "value": p} for p in images), {"type": "text", "value": self.prompt_text(row)}]
