"""MRareBench T1 Diagnosis: a ranked differential of the 10 most likely diagnoses for a rare-disease case report,
under three input conditions that share one TSV (MRareBench_Diagnosis: the case with its findings text redacted and
the images; _FD: the findings text put back; _TO: text only, no image). Scored by rule (recall@k; with a judge,
VLMEvalKit's five-dimension judge too): vlmkit.scoring.benchmarks.mrarebench_diagnosis.

The prompt is VLMEvalKit's (MRareBenchDiagnosis.build_prompt at e8e78f05): with `images`, each image preceded by a
text part `<label>:` where the row's `figure_mapping` names its `image_path` file (as in MMRarebench); then one text:
the `context` (with `findings`, followed by the rendered `image findings` cell: each entry's `markdown`, else
`### <title>` and its `body`, repeated blocks once, joined by blank lines), `Question: <question>` when there is a
question, and the instruction (`instruction`). The condition is the catalog row's options (`findings`, `images`),
not read from the name. `image_path` files are found under `--data-root` (VLMEvalKit's $LMUData/MRareBench/diagnosis/).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.snapshot_images import SnapshotImages
from datasets_tsv.benchmarks.mmrarebench import figure_labels
from datasets_tsv.io.tsv_read import DatasetError

TOPK = 10
FINDINGS_COLUMN = "image findings"  # VLMEvalKit's column name, with its space
BASIS_WITH_IMAGES = "the clinical presentation and the medical images"
BASIS_TEXT_ONLY = "the clinical presentation"


def instruction(basis: str) -> str:
    """VLMEvalKit's instruction for a condition whose model sees `basis`."""
    return (f"You are an expert physician. Based on {basis}, list the {TOPK} most likely diagnoses, ranked from "
            f"MOST likely (1) to LEAST likely ({TOPK}). Output ONLY a numbered list, one standard clinical disease "
            'name per line (e.g. "1. Disease name"). Do not include explanations, reasoning, or extra text.')


def rendered_findings(value: Any) -> str:
    """VLMEvalKit's _render_findings of an `image findings` cell ("" when blank or not a JSON list)."""
    if is_blank(value) or not str(value).strip():
        return ""
    try:
        entries = json.loads(str(value))
    except ValueError:
        return ""
    if not isinstance(entries, list):
        return ""
    blocks: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        block = str(entry.get("markdown", "") or "").strip()
        if not block:
            title = str(entry.get("title", "") or "").strip()
            body = str(entry.get("body", "") or "").strip()
            block = (f"### {title}\n{body}" if title else body).strip()
        if block and block not in blocks:
            blocks.append(block)
    return "\n\n".join(blocks)


class MRareBenchDiagnosisDataset(SnapshotImages):
    """One T1 condition (module docstring): `findings` puts the findings text back, `images=False` sends none."""

    kind: ClassVar[str] = "vqa"
    prompt_columns: ClassVar[tuple[str, ...]] = ()
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)

    def __init__(self, name: str, *, findings: bool = False, images: bool = True,
                 data_root: Path | str | None = None, **kwargs: Any) -> None:
        self.findings, self.images = bool(findings), bool(images)
        self._image_column = False
        self._set_snapshot(data_root, "")
        super().__init__(name, **kwargs)

    def prompt_text(self, line: dict[str, Any]) -> str:
        context = "" if is_blank(line.get("context")) else str(line.get("context"))
        question = "" if is_blank(line.get("question")) else str(line.get("question"))
        if self.findings:
            found = rendered_findings(line.get(FINDINGS_COLUMN))
            if found:
                context = (context + "\n\n" + found).strip() if context else found
        parts = [context] if context else []
        if question:
            parts.append(f"Question: {question}")
        parts.append(instruction(BASIS_WITH_IMAGES if self.images else BASIS_TEXT_ONLY))
        return "\n\n".join(parts)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        parts: list[Part] = []
        if self.images:
            files = self._images_at(pos)
            for file, label in zip(files, self._labels(row, len(files))):
                if label:
                    parts.append({"type": "text", "value": f"{label}:"})
                parts.append({"type": "image", "value": file})
        parts.append({"type": "text", "value": self.prompt_text(row)})
        return parts

    def _check_header(self) -> list[str]:
        header = super()._check_header()
        self._image_column = "image" in header
        return header

    def _labels(self, row: dict[str, Any], count: int) -> list[str]:
        """Labels go with `image_path` files (VLMEvalKit names decoded base64 images `<index>--<n>.jpg`)."""
        if self._image_column and self.data_root is None:
            return [""] * count
        return figure_labels(row, count)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.mrarebench_diagnosis import score_mrarebench_diagnosis

        try:
            return score_mrarebench_diagnosis(df, judge, what=str(self.tsv_path))
        except ValueError as exc:
            raise DatasetError(str(exc)) from None

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mrarebench_diagnosis", "findings": self.findings, "images": self.images,
                **self.snapshot_params()}
