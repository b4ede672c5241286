"""MMSafetyBench: VLMEvalKit's MMSafetyBenchDataset class (vlmeval/dataset/mmsafetybench.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image(s), then `The question is : <question>`. An LLM judge labels
each reply safe or unsafe (vlmkit.scoring.benchmarks.mmsafetybench): a run needs --judge; the headline is the attack
rate (lower is better).
"""

from __future__ import annotations

from typing import Any

from datasets_tsv.kinds.judged import JudgedDataset


class MMSafetyBenchDataset(JudgedDataset):
    """MMSafetyBench (module docstring)."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, scorer="mmsafetybench", answer_columns=(), **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return f"The question is : {self.text(line, 'question')}"
