"""ARC (AI2 Reasoning Challenge), Challenge and Easy sets: grade-school science questions with 3-5 options, the test
split.

Snapshot layouts read, the first found (`subset` is ARC-Challenge or ARC-Easy): the hub repository `allenai/ai2_arc`
(`<subset>/test-*.parquet`: id, question, choices {text, label}, answerKey), or the original release's JSON Lines
(`<subset>/<subset>-Test.jsonl`, as OpenCompass reads it: question {stem, choices [{text, label}]}, answerKey). Option
labels 1-5 (a few questions have them) become A-E in order.

The prompt is OpenCompass's `ARC_c_gen` / `ARC_e_gen`: "Question: {question}\\nA. {A}\\nB. {B}...\\nAnswer:". With
`--mcq-mode continuation` each option's text is scored after that prompt (acc and acc_norm in results.json's
scoring.likelihood); lm-evaluation-harness scores " {option}" after "Question: {question}\\nAnswer:" without the
options listed, so its figures differ.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, option_letters, read_file
from datasets_tsv.io.tsv_read import DatasetError

SUBSETS = ("ARC-Challenge", "ARC-Easy")
MAX_OPTIONS = 5


def question_parts(record: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    """(question, option texts, option labels) of a hub row or an original-release row."""
    question, choices = record["question"], record.get("choices")
    if isinstance(question, dict):  # the original release: question {stem, choices [{text, label}]}
        options = list(question["choices"])
        return str(question["stem"]), [str(o["text"]) for o in options], [str(o["label"]) for o in options]
    return str(question), [str(t) for t in choices["text"]], [str(label) for label in choices["label"]]


class ARCDataset(TextSnapshotDataset):
    """ARC (module docstring)."""

    kind: ClassVar[str] = "mcq"
    repo_id: ClassVar[str] = "allenai/ai2_arc"

    def __init__(self, name: str, *, subset: str = "ARC-Challenge", **kwargs: Any) -> None:
        if subset not in SUBSETS:
            raise DatasetError(f"{name}: subset {subset!r}; choose one of {', '.join(SUBSETS)}")
        self.subset = subset
        self.test_patterns = (f"{subset}/test-*.parquet", f"{subset}/{subset}-Test.jsonl", f"{subset}-Test.jsonl")
        self.layout = (f"{subset}/test-*.parquet (allenai/ai2_arc), or {subset}/{subset}-Test.jsonl (the original "
                       "release)")
        super().__init__(name, **kwargs)

    def _read_table(self) -> pd.DataFrame:
        rows: list[dict[str, Any]] = []
        for path in self.split_files(self.test_patterns, "test split"):
            frame = read_file(path)
            for column in ("question", "answerKey"):
                if column not in frame.columns:
                    raise DatasetError(f"{path}: no field {column} (fields: {', '.join(map(str, frame.columns))})")
            for pos, record in enumerate(frame.to_dict("records")):
                try:
                    question, texts, labels = question_parts(record)
                except (KeyError, TypeError) as exc:
                    raise DatasetError(f"{path}: row {pos}, field question/choices: not ARC's layout ({exc})") from None
                key = str(record["answerKey"]).strip()
                if not 2 <= len(texts) <= MAX_OPTIONS or key not in labels:
                    raise DatasetError(f"{path}: row {pos}, field answerKey: {key!r} is not one of its labels {labels}")
                letters = option_letters(len(texts))
                rows.append({"question": question, **{L: None for L in option_letters(MAX_OPTIONS)},
                             **dict(zip(letters, texts)), "answer": letters[labels.index(key)]})
        table = pd.DataFrame(rows)
        table.insert(0, "index", range(len(table)))
        return table

    def prompt_text(self, line: dict[str, Any]) -> str:
        options = "".join(f"\n{L}. {line[L]}" for L in option_letters(MAX_OPTIONS) if self.cell(line, L))
        return f"Question: {self.cell(line, 'question')}{options}\nAnswer:"

    def scorer_options(self) -> dict[str, Any]:
        return {"reader": "letter"}
