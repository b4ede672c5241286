"""WinoGrande (xl): fill a sentence's blank with one of two options, the validation split.

Snapshot layouts read, the first found: the hub repository `allenai/winogrande` (`winogrande_xl/validation-*.parquet`:
sentence, option1, option2, answer "1"/"2"), or the original release's `dev.jsonl` (`winogrande_1.1/dev.jsonl`, as
OpenCompass reads it).

The prompt is OpenCompass's `winogrande_gen`: "Which of the following is a good sentence:\\nA. {the sentence with
option1 in the blank}\\nB. {... option2}\\nAnswer:". The options are the two completed sentences, so `--mcq-mode
continuation` scores each completed sentence after that prompt. lm-evaluation-harness instead scores the sentence's
rest after each option's prefix (one context per option), which a run's one prompt per row cannot express: its
figures differ.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, read_file
from datasets_tsv.io.tsv_read import DatasetError


class WinoGrandeDataset(TextSnapshotDataset):
    """WinoGrande (module docstring)."""

    kind: ClassVar[str] = "mcq"
    repo_id: ClassVar[str] = "allenai/winogrande"
    layout: ClassVar[str] = ("winogrande_xl/validation-*.parquet (allenai/winogrande), or dev.jsonl "
                             "(winogrande_1.1/ of the original release)")
    test_patterns: ClassVar[tuple[str, ...]] = ("winogrande_xl/validation-*.parquet", "winogrande_1.1/dev.jsonl",
                                                "dev.jsonl")

    def _read_table(self) -> pd.DataFrame:
        rows: list[dict[str, Any]] = []
        for path in self.split_files(self.test_patterns, "validation split"):
            frame = read_file(path)
            for column in ("sentence", "option1", "option2", "answer"):
                if column not in frame.columns:
                    raise DatasetError(f"{path}: no field {column} (fields: {', '.join(map(str, frame.columns))})")
            for pos, record in enumerate(frame.to_dict("records")):
                sentence, answer = str(record["sentence"]), str(record["answer"]).strip()
                if sentence.count("_") != 1 or answer not in ("1", "2"):
                    raise DatasetError(f"{path}: row {pos}: expected one '_' in sentence and answer 1 or 2")
                rows.append({"sentence": sentence, "A": sentence.replace("_", str(record["option1"])),
                             "B": sentence.replace("_", str(record["option2"])), "answer": "AB"[int(answer) - 1]})
        table = pd.DataFrame(rows)
        table.insert(0, "index", range(len(table)))
        return table

    def prompt_text(self, line: dict[str, Any]) -> str:
        options = f"A. {self.cell(line, 'A')}\nB. {self.cell(line, 'B')}"
        return f"Which of the following is a good sentence:\n{options}\nAnswer:"

    def scorer_options(self) -> dict[str, Any]:
        return {"reader": "letter"}
