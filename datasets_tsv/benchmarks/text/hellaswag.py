"""HellaSwag: pick the most plausible ending of a described scene (four endings), the validation split.

Snapshot layouts read, the first found: the original release's `data/hellaswag_val.jsonl` (or `hellaswag_val.jsonl`;
github rowanz/hellaswag, as OpenCompass reads it), or parquet of the hub repository `Rowan/hellaswag`
(`data/validation-*.parquet`, or its converted `default/validation/*.parquet`). Fields: activity_label, ctx_a, ctx_b,
endings (four), label (0-3).

Text as lm-evaluation-harness prepares it (`preprocess`): the context "{activity_label}: {ctx_a} {ctx_b, first letter
capitalised}" and each ending stripped, " [title]" written ". ", other [bracketed] tags removed, double spaces made
single. The prompt is OpenCompass's `hellaswag_gen`: "{context}\\nQuestion: Which ending makes the most sense?\\nA. ..
\\nD. {D}\\nYou may choose from 'A', 'B', 'C', 'D'.\\nAnswer:". With `--mcq-mode continuation` each ending's text is
scored after that prompt; acc and acc_norm (per character) are in results.json's scoring.likelihood. lm-evaluation-
harness scores the endings after the bare context instead (the run scores one prompt per row, the one generation
uses), so figures are not the same as its hellaswag.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, read_file
from datasets_tsv.io.tsv_read import DatasetError

FOUR = ("A", "B", "C", "D")


def preprocess(text: str) -> str:
    """lm-evaluation-harness's HellaSwag clean-up (module docstring)."""
    text = text.strip().replace(" [title]", ". ")
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


class HellaSwagDataset(TextSnapshotDataset):
    """HellaSwag (module docstring)."""

    kind: ClassVar[str] = "mcq"
    repo_id: ClassVar[str] = "Rowan/hellaswag"
    layout: ClassVar[str] = "data/hellaswag_val.jsonl (the original release), or data/validation-*.parquet"
    test_patterns: ClassVar[tuple[str, ...]] = ("data/hellaswag_val.jsonl", "hellaswag_val.jsonl",
                                                "data/validation-*.parquet", "default/validation/*.parquet")

    def _read_table(self) -> pd.DataFrame:
        rows: list[dict[str, Any]] = []
        for path in self.split_files(self.test_patterns, "validation split"):
            frame = read_file(path)
            for column in ("activity_label", "ctx_a", "ctx_b", "endings", "label"):
                if column not in frame.columns:
                    raise DatasetError(f"{path}: no field {column} (fields: {', '.join(map(str, frame.columns))})")
            for pos, r in enumerate(frame.to_dict("records")):
                endings = list(r["endings"])
                label = str(r["label"]).strip()
                if len(endings) != 4 or label not in ("0", "1", "2", "3"):
                    raise DatasetError(f"{path}: row {pos}: expected four endings and a label 0-3")
                context = preprocess(f"{r['activity_label']}: {r['ctx_a']} {str(r['ctx_b']).capitalize()}")
                rows.append({"question": context, **{L: preprocess(str(e)) for L, e in zip(FOUR, endings)},
                             "answer": FOUR[int(label)]})
        table = pd.DataFrame(rows)
        table.insert(0, "index", range(len(table)))
        return table

    def prompt_text(self, line: dict[str, Any]) -> str:
        options = "".join(f"\n{L}. {self.cell(line, L)}" for L in FOUR)
        return (f"{self.cell(line, 'question')}\nQuestion: Which ending makes the most sense?{options}\n"
                "You may choose from 'A', 'B', 'C', 'D'.\nAnswer:")

    def scorer_options(self) -> dict[str, Any]:
        return {"reader": "letter"}
