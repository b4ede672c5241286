"""VCR-Wiki (visual caption restoration): restore the text masked in an image.

The prompt is VLMEvalKit's: the image, then the row's `question` as it stands (the TSV carries the instruction;
VLMEvalKit's own suffix is commented out). `answer` is the list of masked texts. Scoring: vlmkit.scoring.benchmarks.vcr
(exact match and Jaccard per masked span, means over spans). `language` ("en" or "zh") is a constructor option set
by the catalog, never read from the name; `tokenizer` "rules" (default, no dependency) or "spacy" (VLMEvalKit's
spaCy pipelines, when installed).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.benchmarks.vcr_tokens import BACKENDS, LANGUAGES
from vlmkit.scoring.benchmarks.vcr_tokens import tokenizer as vcr_tokenizer

from datasets_tsv.kinds.base import TSVDataset

ZH_CHARS_NOTE = (
    "Chinese spans are scored over characters: VLMEvalKit's zh_core_web_sm segments words with a pkuseg model "
    "vlmkit does not have (tokenizer='spacy' uses it when installed)"
)
EN_RULES_NOTE = (
    "English tokens follow spaCy's English tokenizer rules without spaCy (rare special cases such as most "
    "emoticons may tokenise differently; tokenizer='spacy' uses spaCy itself when installed)"
)


class VCRDataset(TSVDataset):
    """A VCR-Wiki TSV: `question` is the whole prompt text, `answer` the list of masked texts."""

    kind: ClassVar[str] = "vqa"

    def __init__(self, name: str, *, language: str = "en", tokenizer: str = "rules", **kwargs: Any) -> None:
        if language not in LANGUAGES:
            raise ValueError(f"{name}: VCR language {language!r}; choose one of {', '.join(LANGUAGES)}")
        if tokenizer not in BACKENDS:
            raise ValueError(f"{name}: VCR tokenizer {tokenizer!r}; choose one of {', '.join(BACKENDS)}")
        if tokenizer == "spacy":
            vcr_tokenizer(language, tokenizer)  # spaCy or its pipeline missing: one line now, before any download
        self.language = language
        self.tokenizer = tokenizer
        super().__init__(name, **kwargs)
        if tokenizer == "rules":
            self.notes = (*self.notes, EN_RULES_NOTE if language == "en" else ZH_CHARS_NOTE)

    def prompt_text(self, line: dict[str, Any]) -> str:
        return self.text(line, "question")

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.vcr import score_vcr

        return score_vcr(df, language=self.language, tokenizer_backend=self.tokenizer)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "vcr", "language": self.language, "tokenizer": self.tokenizer}
