"""PerceptionBench (moonshotai/PerceptionBench): perception questions graded by an LLM judge
(vlmkit.scoring.benchmarks.perceptionbench).

VLMEvalKit downloads `PerceptionBench.jsonl` (one question per line, images as `data:` URLs). vlmkit does not
download it: `--data-root` names that file (or the folder holding it), and the table is written from it to
$LMUData/<name>.tsv (again when the jsonl changes), one row per line as VLMEvalKit reads it (`table_rows`): `index`
(the line's `index`, else its 0-based line number), `image` (the base64 of its data URLs, as a list), `question` (its
`problem`), `answer` (the reference: the `answer` of a JSON object), `hint`, `error_category`, `source_bmk`,
`source_idx`. Once written, the TSV is used without --data-root. An image that is not a `data:` URL is refused in one
line naming the jsonl line (VLMEvalKit would pass the text on as a path).

The prompt is VLMEvalKit's (it forces its own prompt on every model): the problem text cut at its `<|image_N|>`
placeholders, each replaced by the N-th image (a placeholder without such an image stays in the text), then the
images no placeholder named; a problem without text or images is one (empty) text part.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.perceptionbench import reference_answer
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.data_root_table import DataRootTable, write_rows_tsv
from datasets_tsv.io.tsv_read import DatasetError

JSONL = "PerceptionBench.jsonl"
COLUMNS = ("index", "image", "question", "answer", "hint", "error_category", "source_bmk", "source_idx")
PLACEHOLDER = re.compile(r"<\|image_(\d+)\|>")


def _base64_of(url: Any, where: str) -> str:
    text = str(url)
    if not (text.startswith("data:") and ";base64," in text):
        raise DatasetError(f"{where}: image {text[:60]!r} is not a base64 data: URL")
    return text.split(",", 1)[1]


def table_rows(jsonl: Path) -> list[dict[str, Any]]:
    """The rows VLMEvalKit reads from PerceptionBench.jsonl (module docstring)."""
    rows = []
    for number, line in enumerate(jsonl.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{jsonl}: line {number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{where}: not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{where}: not a JSON object")
        images = record.get("image") if isinstance(record.get("image"), list) else []
        answer = reference_answer(record.get("answer", ""))
        rows.append({
            "index": record.get("index", number - 1),  # VLMEvalKit: the 0-based line number, blank lines counted
            "image": json.dumps([_base64_of(url, where) for url in images]) if images else "",
            "question": str(record.get("problem", "") or ""),
            "answer": answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False),
            **{column: record.get(column, "") for column in ("hint", "error_category", "source_bmk", "source_idx")},
        })
    if not rows:
        raise DatasetError(f"{jsonl}: no questions")
    return rows


def interleaved(problem: str, images: list[str]) -> list[Part]:
    """VLMEvalKit's PerceptionBench.build_prompt on a problem text and its image files (module docstring)."""
    parts: list[Part] = []
    last, used = 0, set()
    for found in PLACEHOLDER.finditer(problem):
        n = int(found.group(1))
        if 1 <= n <= len(images):
            used.add(n - 1)
            if problem[last:found.start()]:
                parts.append({"type": "text", "value": problem[last:found.start()]})
            parts.append({"type": "image", "value": images[n - 1]})
            last = found.end()
    if problem[last:]:
        parts.append({"type": "text", "value": problem[last:]})
    parts.extend({"type": "image", "value": image} for k, image in enumerate(images) if k not in used)
    return parts or [{"type": "text", "value": problem}]


class PerceptionBenchDataset(DataRootTable):
    """PerceptionBench (module docstring)."""

    judge_scorer = "PerceptionBench grading (LLM judge)"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)
    data_root_hint: ClassVar[str] = f"with {JSONL} (from https://huggingface.co/datasets/moonshotai/PerceptionBench)"

    def write_table(self, data_root: Path, tsv: Path) -> None:
        """Write the TSV from the jsonl at (or in) data_root unless it already holds the same text."""
        jsonl = data_root / JSONL if data_root.is_dir() else data_root
        if not jsonl.is_file():
            raise DatasetError(f"--data-root {data_root}: no {JSONL} there (download it from "
                               "https://huggingface.co/datasets/moonshotai/PerceptionBench)")
        write_rows_tsv(tsv, table_rows(jsonl), COLUMNS)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        problem = "" if is_blank(row.get("question")) else str(row["question"])
        return interleaved(problem, self._images_at(pos))

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.perceptionbench import score_perceptionbench

        return score_perceptionbench(df, judge, what=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "perceptionbench", **self.data_root_params()}
