"""BIG-Bench Hard: 27 tasks of free-form or bracketed-letter answers, scored by exact match.

Snapshot layouts read, the first found: the original release (github suzgunmirac/BIG-Bench-Hard, as OpenCompass
reads it): `bbh/<task>.json` (`{"examples": [{"input", "target"}]}`), or OpenCompass's copy `data/<task>.json`; the
hub repository's parquet (`<task>/test-*.parquet`, or `<task>/test/0000.parquet` as `lukaemon/bbh`'s converted
branch has it; fields input, target). Rows: every task's examples, tasks in name order.

The prompt, by what the snapshot holds: with the release's chain-of-thought prompts (`cot-prompts/<task>.txt`, or
OpenCompass's `lib_prompt/<task>.txt`), OpenCompass's 3-shot CoT prompt, "Follow the given examples and answer the
question.\\n{the task's prompt file}\\n\\nQ: {input}\\nA: Let's think step by step."; without them (the hub repository
has none), lm-evaluation-harness's zero-shot form "Q: {input}\\nA:" (its `bbh_zeroshot`). info()["prompt"] says
which. Scoring: vlmkit.scoring.benchmarks.text_bbh. Generation only (kind vqa).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.benchmarks.text.snapshot import TextSnapshotDataset, read_file
from datasets_tsv.io.tsv_read import DatasetError

PROMPT_FOLDERS = ("cot-prompts", "lib_prompt")
COT = "Follow the given examples and answer the question.\n{}\n\nQ: {}\nA: Let's think step by step."
ZERO_SHOT = "Q: {}\nA:"


def task_of(path: Path) -> str:
    """A file's task: `bbh/<task>.json`, `<task>/test-0.parquet`, `<task>/test/0000.parquet`."""
    if path.suffix != ".parquet":
        return path.stem
    return path.parent.parent.name if path.parent.name == "test" else path.parent.name


class BBHDataset(TextSnapshotDataset):
    """BIG-Bench Hard (module docstring). `shots` is not an option: the prompt files decide (3 or 0)."""

    kind: ClassVar[str] = "vqa"
    repo_id: ClassVar[str] = "lukaemon/bbh"
    layout: ClassVar[str] = ("bbh/<task>.json and cot-prompts/<task>.txt (the original release), or "
                             "<task>/test-*.parquet (lukaemon/bbh)")
    test_patterns: ClassVar[tuple[str, ...]] = ("bbh/*.json", "data/*.json", "*/test-*.parquet", "*/test/*.parquet")
    rule_scorer: ClassVar[str] = "text_bbh"

    def _read_table(self) -> pd.DataFrame:
        rows: list[dict[str, Any]] = []
        for path in self.split_files(self.test_patterns, "task"):
            frame = read_file(path)
            for column in ("input", "target"):
                if column not in frame.columns:
                    raise DatasetError(f"{path}: no field {column} (fields: {', '.join(map(str, frame.columns))})")
            task = task_of(path)
            rows += [{"task": task, "question": str(r["input"]), "answer": str(r["target"])}
                     for r in frame.to_dict("records")]
        table = pd.DataFrame(rows)
        table.insert(0, "index", range(len(table)))
        self.cot_prompts = self._cot_prompts(sorted(set(table["task"])))
        return table

    def _cot_prompts(self, tasks: list[str]) -> dict[str, str]:
        """task -> its CoT prompt file's text, from the first prompt folder the snapshot has ({} when none)."""
        folder = next((self.snapshot / f for f in PROMPT_FOLDERS if (self.snapshot / f).is_dir()), None)
        if folder is None:
            return {}
        missing = [t for t in tasks if not (folder / f"{t}.txt").is_file()]
        if missing:
            raise DatasetError(f"{folder / (missing[0] + '.txt')}: missing ({len(missing)} task prompt(s) missing); "
                               f"the folder should hold one <task>.txt per task, or be removed for 0-shot")
        return {t: (folder / f"{t}.txt").read_text(encoding="utf-8") for t in tasks}

    def _shots_text(self) -> str:
        return repr(sorted(self.cot_prompts.items()))

    def prompt_text(self, line: dict[str, Any]) -> str:
        question = self.cell(line, "question")
        prompt = self.cot_prompts.get(self.cell(line, "task"))
        return COT.format(prompt, question) if prompt is not None else ZERO_SHOT.format(question)

    def info(self) -> dict[str, Any]:
        return {**super().info(), "shots": 3 if self.cot_prompts else 0,
                "prompt": "3-shot CoT (OpenCompass)" if self.cot_prompts else "0-shot (lm-evaluation-harness)"}
