"""MMRarebench: rare-disease medicine in four tracks (MMRarebench_Diagnosis, _Treatment, _Crossmodal, _Examination),
graded by an LLM judge on each track's rubric (vlmkit.scoring.benchmarks.mmrarebench).

The prompt is VLMEvalKit's (vlmeval/dataset/mmrarebench.py at e8e78f05): the row's images, each preceded by a text
part `<label>:` where the row's `figure_mapping` (a JSON object label -> file) names its file, then one text: the
`context` (when not blank), `Question: <question>` and the track's instruction (`INSTRUCTIONS`), joined by blank
lines. The Examination track leaves the context out (VLMEvalKit: to keep the answer from leaking) and has no labels.
Labels go with images named by `image_path` (VLMEvalKit decodes base64 `image` cells to files named `<index>--<n>.jpg`,
which no mapping names); with `--data-root` the `image_path` files are found under that folder (VLMEvalKit's
$LMUData/MMrarebench/<track>/).
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import is_blank
from vlmkit.core.message import Part
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.snapshot_images import SnapshotImages
from datasets_tsv.io.tsv_read import parse_list
from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.kinds.judged import JudgedDataset

INSTRUCTIONS = {
    "diagnosis": (
        "Based on the clinical presentation and medical images, "
        "provide your diagnosis. Output ONLY the most likely diagnosis "
        "using the standard clinical disease name. "
        "Do not include explanations or reasoning."
    ),
    "treatment": (
        "Based on the clinical presentation and medical images provided, "
        "propose a detailed treatment plan. Include specific medications, "
        "procedures, and follow-up recommendations as appropriate."
    ),
    "crossmodal": (
        "Analyze the relationship between the provided medical images and clinical information. "
        "Describe the cross-modal findings, their relationship (confirm, complement, or contrast), "
        "and the clinical significance of this relationship."
    ),
    "examination": (
        "Based on the clinical presentation and medical images, recommend the appropriate "
        "examination workup. List the key diagnostic tests that should be ordered, "
        "explain the purpose of each test, and identify any red flags that need to be ruled out."
    ),
}


def figure_labels(row: dict[str, Any], count: int) -> list[str]:
    """Each of a row's `count` images' label from its `figure_mapping` (a JSON object label -> file) by the basename
    of its `image_path` entry, as VLMEvalKit's MMRarebench and MRareBench prompts label them ("" for none)."""
    mapping, names_cell = row.get("figure_mapping"), row.get("image_path")
    if is_blank(mapping) or is_blank(names_cell):
        return [""] * count
    try:
        figures = json.loads(str(mapping))
    except ValueError:
        return [""] * count
    if not isinstance(figures, dict):
        return [""] * count
    by_name = {posixpath.basename(str(path)): str(label) for label, path in figures.items()}
    text = str(names_cell).strip()
    names = (parse_list(text) if text.startswith("[") else [text]) or []
    labels = [by_name.get(posixpath.basename(name), "") for name in names][:count]
    return labels + [""] * (count - len(labels))


class MMRarebenchDataset(SnapshotImages, JudgedDataset):
    """One MMRarebench track (`track`: diagnosis, treatment, crossmodal, examination); see the module docstring."""

    judge_scorer = "MMRarebench rubric (LLM judge)"
    answer_columns: ClassVar[tuple[str, ...]] = ("answer",)

    def __init__(self, name: str, *, track: str, data_root: Path | str | None = None, **kwargs: Any) -> None:
        if track not in INSTRUCTIONS:
            raise ValueError(f"{name}: track {track!r}; choose one of {', '.join(INSTRUCTIONS)}")
        self.track = track
        self.kind = "vqa"
        self.scorer = None
        self.question_column = "question"
        self.suffix = ""
        self.prompt_columns = ("question",)
        self._image_column = False
        self._set_snapshot(data_root, "")
        TSVDataset.__init__(self, name, **kwargs)

    def _check_header(self) -> list[str]:
        header = super()._check_header()
        self._image_column = "image" in header
        return header

    def prompt_text(self, line: dict[str, Any]) -> str:
        parts = [f"Question: {self.text(line, 'question')}", INSTRUCTIONS[self.track]]
        context = line.get("context")
        if self.track != "examination" and not is_blank(context) and str(context):
            parts.insert(0, str(context))
        return "\n\n".join(parts)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        files = self._images_at(pos)
        labels = self._labels(row, len(files))
        parts: list[Part] = []
        for file, label in zip(files, labels):
            if label:
                parts.append({"type": "text", "value": f"{label}:"})
            parts.append({"type": "image", "value": file})
        parts.append({"type": "text", "value": self.prompt_text(row)})
        return parts

    def _labels(self, row: dict[str, Any], count: int) -> list[str]:
        if self.track == "examination" or (self._image_column and self.data_root is None):
            return [""] * count
        return figure_labels(row, count)

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        from vlmkit.scoring.benchmarks.mmrarebench import score_mmrarebench

        return score_mmrarebench(df, judge, track=self.track, what=str(self.tsv_path))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mmrarebench", "track": self.track, **self.snapshot_params()}
