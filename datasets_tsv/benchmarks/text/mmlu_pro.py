"""MMLU-Pro (TIGER-Lab): 14 categories of questions with up to ten options, 5-shot chain-of-thought.

Snapshot layout: the hub repository `TIGER-Lab/MMLU-Pro`, `data/test-*.parquet` and `data/validation-*.parquet`
(fields question_id, question, options, answer (a letter), answer_index, cot_content, category, src); JSON Lines
exports with the same fields (`data/test*.jsonl`, `data/validation*.jsonl`) are read too. Parquet needs pyarrow.

The prompt is the authors' (and lm-evaluation-harness's `mmlu_pro`): "The following are multiple choice questions
(with answers) about {category}. Think step by step and then finish your answer with \\"the answer is (X)\\" where X
is the correct letter choice.\\n\\n", then per example (the first `shots` validation rows of the same category)
"Question:\\n{question}\\nOptions:\\nA. {option}\\n...{cot_content, its leading 'A: ' written 'Answer: '}\\n\\n",
then the row: "Question:\\n{question}\\nOptions:\\nA. ...\\nAnswer: Let's think step by step.". The answer is read
as they read it: the first "answer is (X)" (vlmkit.scoring.benchmarks.text_choice, reader `answer_is`). Metric:
accuracy over the rows, each category's beside it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, option_letters, read_file
from datasets_tsv.io.tsv_read import DatasetError

HEAD = ("The following are multiple choice questions (with answers) about {}. Think step by step and then finish "
        "your answer with \"the answer is (X)\" where X is the correct letter choice.\n\n")
MAX_OPTIONS = 10


def split_patterns(split: str) -> tuple[str, ...]:
    return (f"data/{split}-*.parquet", f"data/{split}*.jsonl", f"{split}*.jsonl")


def read_questions(dataset: TextSnapshotDataset, split: str, what: str) -> pd.DataFrame:
    """A split's questions with their options spread over A-J (blank where a question has fewer)."""
    rows: list[dict[str, Any]] = []
    for path in dataset.split_files(split_patterns(split), what):
        frame = read_file(path)
        for column in ("question", "options", "answer", "category"):
            if column not in frame.columns:
                raise DatasetError(f"{path}: no field {column} (fields: {', '.join(map(str, frame.columns))})")
        for pos, record in enumerate(frame.to_dict("records")):
            options = [str(o) for o in record["options"] if str(o).strip() not in ("", "N/A")]
            if not 2 <= len(options) <= MAX_OPTIONS:
                raise DatasetError(f"{path}: row {pos}, field options: {len(options)} options, expected 2-10")
            letters = option_letters(len(options))
            answer = str(record["answer"]).strip()
            if answer not in letters:
                raise DatasetError(f"{path}: row {pos}, field answer: {answer!r} is not one of {letters}")
            row = {"category": str(record["category"]), "question": str(record["question"]),
                   **{letter: None for letter in option_letters(MAX_OPTIONS)},
                   **dict(zip(letters, options)), "answer": answer,
                   "cot_content": "" if record.get("cot_content") is None else str(record.get("cot_content"))}
            rows.append(row)
    return pd.DataFrame(rows)


class MMLUProDataset(TextSnapshotDataset):
    """MMLU-Pro (module docstring)."""

    kind: ClassVar[str] = "mcq"
    repo_id: ClassVar[str] = "TIGER-Lab/MMLU-Pro"
    layout: ClassVar[str] = "data/test-*.parquet and data/validation-*.parquet (TIGER-Lab/MMLU-Pro)"
    test_patterns: ClassVar[tuple[str, ...]] = split_patterns("test")
    default_shots: ClassVar[int] = 5

    def _read_table(self) -> pd.DataFrame:
        table = read_questions(self, "test", "test split").drop(columns=["cot_content"])
        table.insert(0, "index", range(len(table)))
        self.examples: dict[str, list[dict[str, Any]]] = {}
        if self.shots:
            validation = read_questions(self, "validation", "validation split (the few-shot examples)")
            for category in dict.fromkeys(table["category"]):
                examples = validation[validation["category"] == category].head(self.shots).to_dict("records")
                if len(examples) < self.shots:
                    raise DatasetError(f"{self.name}: category {category} has {len(examples)} validation example(s), "
                                       f"{self.shots} shots asked")
                self.examples[category] = examples
        return table

    def _shots_text(self) -> str:
        return repr(sorted((c, [e["question"] for e in ex]) for c, ex in self.examples.items()))

    @staticmethod
    def question_block(line: dict[str, Any]) -> str:
        options = "".join(f"{letter}. {line[letter]}\n" for letter in option_letters(MAX_OPTIONS)
                          if TextSnapshotDataset.cell(line, letter))
        return f"Question:\n{TextSnapshotDataset.cell(line, 'question')}\nOptions:\n{options}"

    def prompt_text(self, line: dict[str, Any]) -> str:
        category = self.cell(line, "category")
        shots = "".join(
            self.question_block(e) + e["cot_content"].replace("A: Let's think step by step.",
                                                              "Answer: Let's think step by step.") + "\n\n"
            for e in self.examples.get(category, [])
        )
        return HEAD.format(category) + shots + self.question_block(line) + "Answer: Let's think step by step."

    def scorer_options(self) -> dict[str, Any]:
        return {"reader": "answer_is", "group": "category"}
