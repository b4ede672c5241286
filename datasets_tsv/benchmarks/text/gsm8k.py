"""GSM8K: grade-school maths word problems, scored by exact match of the final number.

Snapshot layouts read, the first found: the hub repository `openai/gsm8k` (`main/test-*.parquet`,
`main/train-*.parquet`) or the original release (grade_school_math/data/test.jsonl and train.jsonl, as OpenCompass
reads them; also at the top). Fields: question, answer (a worked solution ending "#### N"). Rows: the test split;
`answer` holds the final number N and `solution` the worked solution.

Decision (issue 28 asks for lm-evaluation-harness's or OpenCompass's setting): lm-evaluation-harness's `gsm8k` task,
the one behind most published GSM8K figures of base models (its gsm8k.yaml, version 3): 5-shot from the train split,
each "Question: {question}\\nAnswer: {solution}" and "\\n\\n" between, then "Question: {question}\\nAnswer:". Its
solutions are step-by-step, so this is chain-of-thought few-shot in the data's own words (lm-evaluation-harness's
`gsm8k_cot` uses eight hand-written exemplars instead). lm-evaluation-harness draws the five at random with its own
seeded sampler; vlmkit takes the first five train problems, the same for every row, so that a prompt is reproducible
without that sampler. `shots` in the table's kwargs changes the number (0: the question alone). Scoring:
vlmkit.scoring.benchmarks.text_gsm8k (flexible and strict readings of the final number, as that task's two filters).
Generation only: the likelihood modes do not apply (kind vqa). A worked answer is long: give --max-tokens 256 or more
(lm-evaluation-harness's default budget is 256 new tokens).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, read_file
from datasets_tsv.io.tsv_read import DatasetError

_FINAL = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)


def split_patterns(split: str) -> tuple[str, ...]:
    return (f"main/{split}-*.parquet", f"grade_school_math/data/{split}.jsonl", f"data/{split}.jsonl",
            f"{split}.jsonl")


def read_problems(dataset: TextSnapshotDataset, split: str, what: str) -> pd.DataFrame:
    """A split's problems: question, solution, answer (the number after ####)."""
    rows: list[dict[str, Any]] = []
    for path in dataset.split_files(split_patterns(split), what):
        frame = read_file(path)
        for column in ("question", "answer"):
            if column not in frame.columns:
                raise DatasetError(f"{path}: no field {column} (fields: {', '.join(map(str, frame.columns))})")
        for pos, record in enumerate(frame.to_dict("records")):
            solution = str(record["answer"])
            final = _FINAL.search(solution)
            if final is None:
                raise DatasetError(f"{path}: row {pos}, field answer: no '#### <number>' at its end")
            rows.append({"question": str(record["question"]), "solution": solution, "answer": final.group(1)})
    return pd.DataFrame(rows)


class GSM8KDataset(TextSnapshotDataset):
    """GSM8K (module docstring)."""

    kind: ClassVar[str] = "vqa"
    repo_id: ClassVar[str] = "openai/gsm8k"
    layout: ClassVar[str] = ("main/test-*.parquet and main/train-*.parquet (openai/gsm8k), or test.jsonl and "
                             "train.jsonl (grade_school_math/data/ of the original release)")
    test_patterns: ClassVar[tuple[str, ...]] = split_patterns("test")
    rule_scorer: ClassVar[str] = "text_gsm8k"
    default_shots: ClassVar[int] = 5

    def _read_table(self) -> pd.DataFrame:
        table = read_problems(self, "test", "test split")
        table.insert(0, "index", range(len(table)))
        self.examples: list[dict[str, Any]] = []
        if self.shots:
            train = read_problems(self, "train", "train split (the few-shot examples)")
            if len(train) < self.shots:
                raise DatasetError(f"{self.name}: the train split has {len(train)} problem(s), {self.shots} shots "
                                   "asked")
            self.examples = train.head(self.shots).to_dict("records")
        return table

    def _shots_text(self) -> str:
        return repr([(e["question"], e["solution"]) for e in self.examples])

    def prompt_text(self, line: dict[str, Any]) -> str:
        shots = "".join(f"Question: {e['question']}\nAnswer: {e['solution']}\n\n" for e in self.examples)
        return f"{shots}Question: {self.cell(line, 'question')}\nAnswer:"
