"""MMLU (Hendrycks et al.): 57 subjects of four-option questions, 5-shot from each subject's dev split.

Snapshot layouts read (`SUBJECT_LAYOUTS`), the first found:
- the original release (data.tar, as OpenCompass reads it): `data/test/<subject>_test.csv` and
  `data/dev/<subject>_dev.csv` (or `test/`, `dev/` at the top), CSV without a header: question, A, B, C, D, answer;
- the hub repository `cais/mmlu`: `<subject>/test-*.parquet`, `<subject>/dev-*.parquet` (columns question, subject,
  choices, answer as 0-3; the `all/` folder is read only when there are no subject folders).
Rows: the test split, subjects in name order, each file's rows in its order.

The prompt is lm-evaluation-harness's `mmlu` task (the Open LLM Leaderboard's 5-shot setting):
"The following are multiple choice questions (with answers) about {subject, words}.\\n\\n", then per example
"{question}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\nAnswer: {letter}\\n\\n" (the first `shots` dev rows of the same
subject), then the row itself ending "Answer:". Generation reads the letter of the reply; `--mcq-mode logits` scores
the letters A-D as the next token, which is lm-evaluation-harness's loglikelihood task. Metric: accuracy over all
rows (size-weighted, as lm-evaluation-harness's group figure) with each subject's beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, read_file
from datasets_tsv.io.tsv_read import DatasetError

FOUR = ("A", "B", "C", "D")
HEADERLESS = ("question", *FOUR, "answer")


def split_patterns(split: str) -> tuple[str, ...]:
    """Where a subject-per-file split is, in the original release's layout and the hub repository's."""
    return (f"data/{split}/*_{split}.csv", f"{split}/*_{split}.csv", f"*/{split}-*.parquet")


def subject_of(path: Path, split: str) -> str:
    """A file's subject: `abstract_algebra_test.csv` -> abstract_algebra; `abstract_algebra/test-0.parquet` ->
    abstract_algebra."""
    if path.suffix == ".parquet":
        return path.parent.name
    return path.stem.removesuffix(f"_{split}")


def hub_folders(files: list[Path]) -> list[Path]:
    """The hub layout's subject files without the combined `all/` and `auxiliary_train/` folders, unless those are
    all there is."""
    subjects = [p for p in files if p.parent.name not in ("all", "auxiliary_train")]
    return subjects or files


def four_options(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """A/B/C/D and a letter answer from the hub layout's `choices` list and 0-3 `answer`."""
    if "choices" not in frame.columns:
        return frame
    out = frame.copy()
    choices = [list(c) for c in frame["choices"]]
    for pos, options in enumerate(choices):
        if len(options) != 4:
            raise DatasetError(f"{path}: row {pos}, field choices: {len(options)} options, expected 4")
    for i, letter in enumerate(FOUR):
        out[letter] = [str(options[i]) for options in choices]
    answers = frame["answer"].tolist()
    if not all(str(a).strip() in ("0", "1", "2", "3") for a in answers):
        bad = next(pos for pos, a in enumerate(answers) if str(a).strip() not in ("0", "1", "2", "3"))
        raise DatasetError(f"{path}: row {bad}, field answer: {answers[bad]!r} is not 0-3")
    out["answer"] = [FOUR[int(str(a).strip())] for a in answers]
    return out


def read_subject_split(dataset: TextSnapshotDataset, split: str, what: str, header: bool = False,
                       columns: tuple[str, ...] = HEADERLESS) -> pd.DataFrame:
    """One split of a subject-per-file benchmark (MMLU, C-Eval) as rows: subject, question, A-D, answer letter."""
    files = dataset.split_files(split_patterns(split), what)
    if files[0].suffix == ".parquet":
        files = hub_folders(files)
    frames = []
    for path in files:
        frame = read_file(path, header=header or path.suffix != ".csv", columns=columns)
        frame = four_options(frame, path)
        missing = [c for c in ("question", *FOUR, "answer") if c not in frame.columns]
        if missing:
            raise DatasetError(f"{path}: no column {missing[0]} (columns: {', '.join(map(str, frame.columns))})")
        subject = subject_of(path, split)
        if "subject" in frame.columns and path.parent.name == "all":
            subjects = frame["subject"].astype(str).tolist()
        else:
            subjects = [subject] * len(frame)
        for pos, answer in enumerate(frame["answer"].astype(str).str.strip()):
            if answer not in FOUR:
                raise DatasetError(f"{path}: row {pos}, field answer: {answer!r} is not A, B, C or D")
        frames.append(pd.DataFrame({"subject": subjects, "question": frame["question"].astype(str).tolist(),
                                    **{c: frame[c].astype(str).tolist() for c in FOUR},
                                    "answer": frame["answer"].astype(str).str.strip().tolist()}))
    table = pd.concat(frames, ignore_index=True)
    table.insert(0, "index", range(len(table)))
    return table


def shots_by_subject(dev: pd.DataFrame, subjects: list[str], shots: int, name: str) -> dict[str, list[dict[str, Any]]]:
    """The first `shots` dev rows of each subject; one line naming a subject that has fewer."""
    out: dict[str, list[dict[str, Any]]] = {}
    for subject in dict.fromkeys(subjects):
        examples = dev[dev["subject"] == subject].head(shots).to_dict("records")
        if len(examples) < shots:
            raise DatasetError(f"{name}: subject {subject} has {len(examples)} dev example(s), {shots} shots asked "
                               "(pass fewer shots in the table's kwargs)")
        out[subject] = examples
    return out


class MMLUDataset(TextSnapshotDataset):
    """MMLU (module docstring)."""

    kind: ClassVar[str] = "mcq"
    repo_id: ClassVar[str] = "cais/mmlu"
    layout: ClassVar[str] = ("data/test/<subject>_test.csv and data/dev/<subject>_dev.csv (the original data.tar), "
                             "or <subject>/test-*.parquet and <subject>/dev-*.parquet (cais/mmlu)")
    test_patterns: ClassVar[tuple[str, ...]] = split_patterns("test")
    default_shots: ClassVar[int] = 5
    split: ClassVar[str] = "test"

    def _read_table(self) -> pd.DataFrame:
        table = read_subject_split(self, self.split, f"{self.split} split")
        self.examples = {} if self.shots == 0 else shots_by_subject(
            read_subject_split(self, "dev", "dev split (the few-shot examples)"), table["subject"].tolist(),
            self.shots, self.name)
        return table

    def _shots_text(self) -> str:
        return repr(sorted((s, [e["question"] for e in ex]) for s, ex in self.examples.items()))

    @staticmethod
    def question_block(line: dict[str, Any]) -> str:
        options = "".join(f"\n{letter}. {TextSnapshotDataset.cell(line, letter)}" for letter in FOUR)
        return f"{TextSnapshotDataset.cell(line, 'question').strip()}{options}\nAnswer:"

    def prompt_text(self, line: dict[str, Any]) -> str:
        subject = self.cell(line, "subject")
        head = f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"
        shots = "".join(f"{self.question_block(e)} {e['answer']}\n\n" for e in self.examples.get(subject, []))
        return head + shots + self.question_block(line)

    def scorer_options(self) -> dict[str, Any]:
        return {"reader": "letter", "group": "subject"}
