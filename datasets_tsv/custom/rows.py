"""CustomDataset: a dataset over rows held in memory (read from a custom csv/jsonl), with the runner's protocol.

The table (`data`) has a unique `index`, the canonical columns of its format (`question`, option letters,
`answer`, `answer_status` for MCQ, `system`, `messages`, `type`/`path`, `max_tokens`, `source_index` when a
.meta.json repeated or reordered rows) and every other column of the file as it was.

Prompts (`build_prompt`):
- text MCQ: VLMEvalKit's MCQ text (datasets_tsv.kinds.mcq.mcq_prompt: `Question: ...\\nOptions:\\nA. ...\\n` and
  `Please select the correct answer from the options above. \\n`), without images - plain-text MCQ is the
  degenerate case of the image kinds;
- text QA: the question itself (OpenCompass's qa template `{question}`);
- few-shot (EvalScope `{subset}_dev.*` pool; the first N rows): each example is the same MCQ text followed by
  `Answer: {letter}\\n`, or for QA `Question: {q}\\nAnswer: {a}\\n`; examples are separated by a blank line and
  followed by a blank line, then the question (for QA in the form `Question: {q}\\nAnswer:`);
- mm_custom: the row's media parts (its `type`, one part per `path`) and then the text above;
- a row with a `system` text becomes a conversation `[system turn, user turn]`; a conversation row (`messages`)
  is given as its turns.

Scoring (`evaluate`): MCQ by datasets_tsv.custom.mcq_eval; QA by vlmkit.scoring.kinds.text_qa, or with a judge by
vlmkit.scoring.kinds.qa_judge (each reply scored 0-10 against its reference). Conversation datasets (Ark / EvalScope
conversation files) say `output_format = "ark"`: the runner then also writes Ark's output records
(vlmkit.outputs.ark, `<run_dir>/ark_output.jsonl`).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from datasets_tsv.kinds.mcq import mcq_prompt
from datasets_tsv.io.table import TableRows
from vlmkit.core.cells import index_key, is_blank
from vlmkit.judging import Judge
from vlmkit.core.message import Part, Turn, normalise_conversation
from vlmkit.scoring.result import EvalResult

from datasets_tsv.custom.fields import row_options, text_value
from datasets_tsv.custom.reading import CustomDataError

FORMATS = ("text", "conversation", "mm_custom")
DATA_TYPES = ("mcq", "qa")


class CustomDataset(TableRows):
    """Rows of a custom file as a dataset (see the module docstring). Built by `build_custom_dataset`."""

    def __init__(
        self,
        name: str,
        rows: list[dict[str, Any]],
        *,
        source: Path,
        file_md5: str,
        data_format: str,
        data_type: str,
        option_letters: tuple[str, ...] = (),
        params: list[dict[str, Any] | None] | None = None,
        few_shot_prefix: str = "",
        qa_metrics: tuple[str, ...] = ("em", "contains"),
        segmenter: str = "auto",
        details: dict[str, Any] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        if data_format not in FORMATS or data_type not in DATA_TYPES:
            raise ValueError(f"{name}: unknown format/data type {data_format!r}/{data_type!r}")
        self.name = name
        self.source = Path(source)
        self.file_md5 = file_md5
        self.format = data_format
        # "ark": the runner writes Ark's output records for this dataset (vlmkit.outputs.ark); None: no extra file
        self.output_format: str | None = "ark" if data_format == "conversation" else None
        self.data_type = data_type
        self.kind = data_type
        self.option_letters = tuple(option_letters)
        self.few_shot_prefix = few_shot_prefix
        self.qa_metrics = tuple(qa_metrics)
        self.segmenter = segmenter
        self.details = dict(details or {})
        self.notes = list(notes or [])
        self.data = _table(rows)
        keys = [index_key(v) for v in self.data["index"]]
        if len(set(keys)) != len(keys):
            raise CustomDataError(f"{self.source}: row indices are not unique")
        self._params = {k: dict(p) for k, p in zip(keys, params or [None] * len(keys)) if p}
        self._records: list[dict[str, Any]] | None = None

    # -- rows (len, line, repr: datasets_tsv.io.table) ---------------------------------------------------------------
    @property
    def source_file(self) -> Path:
        return self.source

    def _repr_extras(self) -> tuple[str, ...]:
        return (f"{self.format}/{self.data_type}",)

    def _row(self, line: dict[str, Any] | int) -> dict[str, Any]:
        if isinstance(line, (int, np.integer)) and not isinstance(line, bool):
            return self.line(int(line))
        return line

    # -- prompts -------------------------------------------------------------------------------------------------
    def prompt_text(self, line: dict[str, Any] | int) -> str:
        """The text of a row's user turn (few-shot examples included)."""
        row = self._row(line)
        question = text_value(row.get("question"))
        if question is None:
            raise CustomDataError(f"{self.source}: row with index {row.get('index')!r}, field question: empty")
        if self.data_type == "mcq":
            hint = text_value(row.get("hint"))
            body = mcq_prompt(question, row_options(row, self.option_letters), hint)
        elif self.few_shot_prefix:
            body = f"Question: {question}\nAnswer:"
        else:
            body = question
        return self.few_shot_prefix + body

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part] | list[Turn]:
        """Flat parts (media, then text) or conversation turns (see the module docstring)."""
        row = self._row(line)
        messages = row.get("messages")
        if isinstance(messages, list):
            return normalise_conversation(messages)
        parts: list[Part] = []
        paths = row.get("path")
        if self.format == "mm_custom" and isinstance(paths, list):
            parts += [{"type": row["type"], "value": str(p)} for p in paths]
        parts.append({"type": "text", "value": self.prompt_text(row)})
        system = row.get("system")
        if not is_blank(system):
            return [
                {"role": "system", "content": [{"type": "text", "value": str(system)}]},
                {"role": "user", "content": parts},
            ]
        return parts

    def generation_params(self, line: dict[str, Any] | int) -> dict[str, Any] | None:
        """Per-request parameters of a row: Ark `parameters`, its `max_tokens`, the meta's output_config."""
        row = self._row(line)
        params = self._params.get(index_key(row.get("index")))
        return dict(params) if params else None

    # -- scoring -------------------------------------------------------------------------------------------------
    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False, judge: Judge | None = None) -> EvalResult:
        """Score predictions (this table plus `prediction`). MCQ: accuracy (0..1, as VLMEvalKit), the judge reading
        the replies the rules cannot; QA: the qa_metrics x100, and with a judge each reply judged against its
        reference (vlmkit.scoring.kinds.qa_judge: `judge_score` 0..100 first). A table without `answer` is an
        inference-only dataset: an error to evaluate."""
        for column in ("index", "prediction", "answer"):
            if column not in predictions.columns:
                what = "the predictions" if column == "prediction" else str(self.source)
                raise CustomDataError(
                    f"{what}: no `{column}` column, nothing to score for {self.name} (inference only)"
                )
        if self.data_type == "mcq":
            from datasets_tsv.custom.mcq_eval import evaluate_mcq

            return evaluate_mcq(predictions, self.option_letters, fuzzy=fuzzy, judge=judge)
        if judge is not None:
            from vlmkit.scoring.kinds.qa_judge import score_qa_with_judge

            return score_qa_with_judge(predictions, judge, self.qa_metrics, segmenter=self.segmenter)
        from vlmkit.scoring.kinds.text_qa import score_text_qa

        return score_text_qa(predictions, self.qa_metrics, segmenter=self.segmenter)

    def scorer_params(self) -> dict[str, Any]:
        if self.data_type == "mcq":
            return {"scorer": "custom_mcq", "circular": False, "options": list(self.option_letters)}
        return {"scorer": "text_qa", "metrics": list(self.qa_metrics), "segmenter": self.segmenter, "scale": 100}

    def info(self) -> dict[str, Any]:
        cls = type(self)
        return {
            "name": self.name,
            "kind": self.data_type,
            "format": self.format,
            "class": f"{cls.__module__}:{cls.__qualname__}",
            "source": str(self.source),
            "md5": self.file_md5,
            "n_total": len(self),
            "has_answers": "answer" in self.data.columns,
            "scorer": self.scorer_params(),
            **self.details,
            "notes": list(self.notes),
        }


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    columns = list(dict.fromkeys(itertools.chain(["index"], *rows)))  # every key, in the order first met
    body = [[row.get(c) for c in columns] for row in rows]
    return pd.DataFrame(body, columns=columns, dtype=object)
