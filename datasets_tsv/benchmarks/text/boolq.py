"""BoolQ: a yes/no question about a Wikipedia passage, the validation split.

Snapshot layouts read, the first found: the hub repository `google/boolq` (`data/validation-*.parquet`: question,
answer (true/false), passage), the original release's `dev.jsonl` (the same fields and a title), or SuperGLUE's
`val.jsonl` (question, passage, label).

The prompt is lm-evaluation-harness's `boolq`: "{passage}\\nQuestion: {question}?\\nAnswer:". The answer is Yes or No
(kind yorn): generation reads the reply's yes/no; `--mcq-mode logits|continuation` compares "Yes" and "No" after the
prompt (lm-evaluation-harness compares " no" and " yes"). Metric: accuracy.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, read_file
from datasets_tsv.io.tsv_read import DatasetError

TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


class BoolQDataset(TextSnapshotDataset):
    """BoolQ (module docstring)."""

    kind: ClassVar[str] = "yorn"
    repo_id: ClassVar[str] = "google/boolq"
    layout: ClassVar[str] = "data/validation-*.parquet (google/boolq), or dev.jsonl (the original release)"
    test_patterns: ClassVar[tuple[str, ...]] = ("data/validation-*.parquet", "dev.jsonl", "val.jsonl")

    def _read_table(self) -> pd.DataFrame:
        rows: list[dict[str, Any]] = []
        for path in self.split_files(self.test_patterns, "validation split"):
            frame = read_file(path)
            label = "answer" if "answer" in frame.columns else "label"
            for column in ("question", "passage", label):
                if column not in frame.columns:
                    raise DatasetError(f"{path}: no field {column} (fields: {', '.join(map(str, frame.columns))})")
            for pos, record in enumerate(frame.to_dict("records")):
                value = str(record[label]).strip().casefold()
                if value not in TRUE + FALSE:
                    raise DatasetError(f"{path}: row {pos}, field {label}: {record[label]!r} is not true or false")
                rows.append({"passage": str(record["passage"]), "question": str(record["question"]),
                             "answer": "Yes" if value in TRUE else "No"})
        table = pd.DataFrame(rows)
        table.insert(0, "index", range(len(table)))
        return table

    def prompt_text(self, line: dict[str, Any]) -> str:
        return f"{self.cell(line, 'passage')}\nQuestion: {self.cell(line, 'question')}?\nAnswer:"

    def scorer_options(self) -> dict[str, Any]:
        return {"reader": "yorn"}
