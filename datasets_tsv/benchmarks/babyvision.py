"""BabyVision: early visual abilities, checked by an LLM judge (vlmkit.scoring.benchmarks.babyvision).

VLMEvalKit reads the official zip (UniPat-AI/BabyVision `data/babyvision_data.zip`): `babyvision_data/meta_data.jsonl`
(one task per line) and its images. vlmkit does not download it: `--data-root DIR` names the unzipped
`babyvision_data` folder (or the folder holding it), and the table is written from its meta_data.jsonl to
$LMUData/<name>.tsv (again when the jsonl changes), one row per task as VLMEvalKit builds it (`table_rows`): `index`
(taskId), `image_path` (the task's image in DIR), `question`, `answer`, `ansType`, `options`, `Type`, `Subtype`. Once
written, the TSV is used without --data-root.

The prompt is VLMEvalKit's (it forces its own prompt on every model): the image, then the question: the task's
question, for a choice task `\\nChoices:\\n` and the options as `(A) ...` lines, then `\\n` and
`BOXED_INSTRUCTION`. The answer: the blank answer for a blank task, else the letter of `choiceAns`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.data_root_table import DataRootTable, write_rows_tsv
from datasets_tsv.io.tsv_read import DatasetError

BOXED_INSTRUCTION = "Think about the question and give your final answer in \\boxed{Answer} format."
META = "meta_data.jsonl"
FOLDER = "babyvision_data"
COLUMNS = ("index", "image_path", "question", "answer", "ansType", "options", "Type", "Subtype")


def _optional(value: Any) -> Any:
    """VLMEvalKit's clean_babyvision_optional: None and the text `null` are empty."""
    if value is None or (isinstance(value, str) and value.lower() == "null"):
        return ""
    return value


def task_question(item: dict[str, Any]) -> str:
    """VLMEvalKit's build_babyvision_question."""
    question = str(item["question"])
    if item["ansType"] != "blank":
        choices = "".join(f"({chr(65 + i)}) {choice}\n" for i, choice in enumerate(item.get("options") or []))
        question += "\nChoices:\n" + choices.strip()
    return question + "\n" + BOXED_INSTRUCTION


def task_answer(item: dict[str, Any]) -> str:
    """VLMEvalKit's build_babyvision_answer."""
    if item["ansType"] == "blank":
        return str(_optional(item.get("blankAns", "")))
    return chr(65 + int(item["choiceAns"]))


def table_rows(meta: Path) -> list[dict[str, Any]]:
    """The rows VLMEvalKit builds from meta_data.jsonl (module docstring); a bad line is one error naming it."""
    rows = []
    for number, line in enumerate(meta.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            rows.append({
                "index": item["taskId"], "image_path": str(meta.parent / item["image"]),
                "question": task_question(item), "answer": task_answer(item), "ansType": item["ansType"],
                "options": json.dumps(item.get("options") or [], ensure_ascii=False),
                "Type": item["type"], "Subtype": item["subtype"],
            })
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"{meta}: line {number}: not a BabyVision task ({type(exc).__name__}: {exc})") from None
    if not rows:
        raise DatasetError(f"{meta}: no tasks")
    return rows


class BabyVisionDataset(DataRootTable):
    """BabyVision (module docstring)."""

    judge_scorer = "BabyVision answer match (LLM judge)"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "Type", "Subtype")
    data_root_hint: ClassVar[str] = ("DIR, the unzipped babyvision_data folder of "
                                     "https://github.com/UniPat-AI/BabyVision (data/babyvision_data.zip),")

    def write_table(self, data_root: Path, tsv: Path) -> None:
        """Write the TSV from DIR's meta_data.jsonl unless it already holds the same text."""
        folder = data_root / FOLDER if (data_root / FOLDER / META).is_file() else data_root
        meta = folder / META
        if not meta.is_file():
            raise DatasetError(f"--data-root {data_root}: no {META} there or in {FOLDER}/ (unzip babyvision_data.zip)")
        write_rows_tsv(tsv, table_rows(meta), COLUMNS)

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.babyvision import score_babyvision

        return score_babyvision(df, judge, what=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "babyvision", **self.data_root_params()}
