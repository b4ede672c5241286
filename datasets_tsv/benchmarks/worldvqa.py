"""WorldVQA: VLMEvalKit's WorldVQA class (vlmeval/dataset/worldvqa.py at e8e78f05).

The prompt, as VLMEvalKit builds it: the row's image, then `DETAIL_EN` (or `DETAIL_ZH` for a row whose `language` is
`zh`) and the question. VLMEvalKit sends the image read from the row's `image_path` (nothing when the TSV has none);
vlmkit sends the row's decoded image. Graded by an LLM judge (vlmkit.scoring.benchmarks.worldvqa): a run needs
--judge.
"""

from __future__ import annotations

from typing import Any

from vlmkit.core.cells import is_blank

from datasets_tsv.kinds.judged import JudgedDataset

DETAIL_EN = "Please provide as much detail as possible in your answer.\n"
DETAIL_ZH = "请尽可能提供详细的回答。\n"


class WorldVQADataset(JudgedDataset):
    """WorldVQA (module docstring)."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, scorer="worldvqa", answer_columns=("question", "answer"), **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        language = line.get("language")
        lead = DETAIL_ZH if not is_blank(language) and str(language) == "zh" else DETAIL_EN
        return lead + self.text(line, "question")
