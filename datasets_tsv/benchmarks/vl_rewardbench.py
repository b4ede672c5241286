"""VL-RewardBench: VLMEvalKit's VLRewardBench class (vlmeval/dataset/vl_rewardbench.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image(s), then `PROMPT_TEMPLATE` with the question and the two
responses of `response`, reversed when their total length is odd (VLMEvalKit's `random_number`). The model's
judgement is read by an LLM judge (vlmkit.scoring.benchmarks.vl_rewardbench): a run needs --judge.
"""

from __future__ import annotations

from typing import Any

from vlmkit.core.message import Part

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.judged import JudgedDataset

PROMPT_TEMPLATE = (
    "You are a highly capable multimodal AI assistant tasked with evaluating answers to visual questions.\n"
    "Please analyze the following image and question, then determine which of the two provided answers is better.\n\n"
    "Question: {query}\n\nAnswer 1: {answer_0}\n\nAnswer 2: {answer_1}\n\n"
    "Please evaluate both answers based on the following criteria:\n"
    "1. Accuracy: How well does the answer align with the visual information in the image?\n"
    "2. Completeness: Does the answer fully address all aspects of the question?\n"
    "3. Clarity: Is the answer easy to understand and well-articulated?\n"
    "4. Relevance: Does the answer directly relate to the question and the image?\n\n"
    "After your evaluation, please:\n"
    "1. Explain your reasoning for each criterion.\n"
    "2. Provide an overall judgment on which answer is better (Answer 1 or Answer 2)."  # VLMEvalKit's `\` joins
    "For example: Overall Judgment: Answer X is better.\n\n"
    "Your response should be structured and detailed, demonstrating your understanding of both the visual and textual "
    "elements of the task."
)


class VLRewardBenchDataset(JudgedDataset):
    """VL-RewardBench (module docstring)."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, scorer="vl_rewardbench", answer_columns=("response", "answer", "category"), **kwargs)
        self.prompt_columns = ("question", "response")

    def prompt_text(self, line: dict[str, Any]) -> str:
        from vlmkit.scoring.benchmarks.vl_rewardbench import responses, shown_reversed

        try:
            pair = responses(line.get("response"), f"{self.tsv_path}: index {line.get('index')}")
        except ValueError as exc:
            raise DatasetError(str(exc)) from None
        if shown_reversed(pair):
            pair = pair[::-1]
        return PROMPT_TEMPLATE.format(query=self.text(line, "question"), answer_0=pair[0], answer_1=pair[1])

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        return [*({"type": "image", "value": p} for p in self._images_at(pos)),
                {"type": "text", "value": self.prompt_text(row)}]  # fmt: skip
