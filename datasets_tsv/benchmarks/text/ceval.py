"""C-Eval: 52 subjects of Chinese exam questions with four options, 5-shot from each subject's dev split.

The val split is evaluated (its answers are public; the test split's are withheld for the authors' leaderboard), as
OpenCompass does by default. Snapshot layouts read, the first found:
- the release zip (ceval-exam.zip, as OpenCompass reads it): `val/<subject>_val.csv`, `dev/<subject>_dev.csv`, CSV
  with a header: id, question, A, B, C, D, answer, explanation;
- the hub repository `ceval/ceval-exam`: `<subject>/val-*.parquet`, `<subject>/dev-*.parquet`, the same columns.
A `subject_mapping.json` in the snapshot (`{"subject": ["English", "中文", "category"]}`, as the release has it) gives
each subject's Chinese name; without it the subject's English words are used.

The prompt is the authors' (C-Eval's evaluator code): "以下是中国关于{科目}考试的单项选择题，请选出其中的正确答案。\\n\\n",
then per dev example "{question}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\n答案：{letter}\\n\\n", then the row ending
"\\n答案：". Metric: accuracy over the rows, each subject's beside it.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.mmlu import FOUR, read_subject_split, shots_by_subject, split_patterns
from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset
from datasets_tsv.io.tsv_read import DatasetError

HEAD = "以下是中国关于{}考试的单项选择题，请选出其中的正确答案。\n\n"


class CEvalDataset(TextSnapshotDataset):
    """C-Eval (module docstring)."""

    kind: ClassVar[str] = "mcq"
    repo_id: ClassVar[str] = "ceval/ceval-exam"
    layout: ClassVar[str] = ("val/<subject>_val.csv and dev/<subject>_dev.csv (ceval-exam.zip unpacked), or "
                             "<subject>/val-*.parquet and <subject>/dev-*.parquet (ceval/ceval-exam)")
    test_patterns: ClassVar[tuple[str, ...]] = split_patterns("val")
    default_shots: ClassVar[int] = 5

    def _read_table(self) -> pd.DataFrame:
        table = read_subject_split(self, "val", "val split", header=True)
        self.examples = {} if self.shots == 0 else shots_by_subject(
            read_subject_split(self, "dev", "dev split (the few-shot examples)", header=True),
            table["subject"].tolist(), self.shots, self.name)
        self.subject_names = self._subject_names()
        return table

    def _subject_names(self) -> dict[str, str]:
        path = self.snapshot / "subject_mapping.json"
        if not path.is_file():
            return {}
        try:
            mapping = json.loads(path.read_text(encoding="utf-8"))
            return {subject: str(names[1]) for subject, names in mapping.items()}
        except (ValueError, TypeError, IndexError, AttributeError) as exc:
            raise DatasetError(f"{path}: expected {{subject: [English, Chinese, category]}} ({exc})") from None

    def _shots_text(self) -> str:
        return repr(sorted((s, [e["question"] for e in ex]) for s, ex in self.examples.items()))

    @staticmethod
    def question_block(line: dict[str, Any]) -> str:
        options = "".join(f"\n{letter}. {TextSnapshotDataset.cell(line, letter)}" for letter in FOUR)
        return f"{TextSnapshotDataset.cell(line, 'question')}{options}\n答案："

    def prompt_text(self, line: dict[str, Any]) -> str:
        subject = self.cell(line, "subject")
        head = HEAD.format(self.subject_names.get(subject, subject.replace("_", " ")))
        shots = "".join(f"{self.question_block(e)}{e['answer']}\n\n" for e in self.examples.get(subject, []))
        return head + shots + self.question_block(line)

    def scorer_options(self) -> dict[str, Any]:
        return {"reader": "letter", "group": "subject"}
