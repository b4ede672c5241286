"""VLMEvalKit's EASI spatial multiple-choice benchmarks (SITE-Bench images, EmbSpatial-Bench, MMSI-Bench without
circular evaluation, MindCube, OmniSpatial, SpatialViz-Bench, STARE, ViewSpatial-Bench, ERIQ): one class, the
benchmark's differences are catalog options (nothing is keyed on the dataset's name):

- `prompt`: the prompt style (datasets_tsv.benchmarks.spatial_prompts.STYLES: site, mmsi, spatialviz, spatialviz_cot,
  omnispatial, omnispatial_default, omnispatial_zeroshot_cot, omnispatial_manual_cot, viewspatial, stare, stare_cot,
  column).
- `question_column`: the column the style takes as the question (default `question`; MindCube `input_prompt`,
  ERIQ `question_raw` with style `column`).
- `interleave`: where the row's images go. `none`: all images, then the text. `between`: the text is split at each
  `<image>` and the k-th image goes after the k-th piece, pieces stripped, as VLMEvalKit's SITE/MindCube/ERIQ
  `build_msgs` (a text without `<image>`: images first, then the text). `after`: STARE's, the k-th image after the
  k-th piece, the last piece included. Images beyond the pieces are left out, as in VLMEvalKit.
- `groups`, `group_prefix`, `caa`, `report`: the scorer's breakdown columns and whether their figures are named
  `{column}.{value}_accuracy`, SITE's class-adjusted accuracy, STARE's F1/macro (vlmkit.scoring.benchmarks.spatial_mcq).
- `image_subdir`: with `--data-root DIR` (the benchmark's Hugging Face snapshot, unpacked), the rows' `image_path`
  values are files under DIR/image_subdir (datasets_tsv.io.snapshot_images).

Scoring is by VLMEvalKit's rules only (its spatial_bench scorer no longer asks a judge); a judge, when given, is not
asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.core.message import Part
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.snapshot_images import SnapshotImages
from datasets_tsv.benchmarks.spatial_prompts import STYLE_COLUMNS, STYLES
from datasets_tsv.io.tsv_read import DatasetError

INTERLEAVE = ("none", "between", "after")
NO_JUDGE_NOTE = "VLMEvalKit's spatial_bench scorer reads answers by rule only; the judge given was not asked"


class SpatialMCQDataset(SnapshotImages):
    """An EASI spatial MCQ benchmark (module docstring)."""

    kind: ClassVar[str] = "mcq"

    def __init__(
        self,
        name: str,
        *,
        prompt: str = "site",
        question_column: str = "question",
        interleave: str = "none",
        groups: list[str] | tuple[str, ...] = ("category",),
        caa: bool = False,
        report: str = "acc",
        group_prefix: bool | None = None,
        image_subdir: str = "",
        data_root: Path | str | None = None,
        **kwargs: Any,
    ) -> None:
        from vlmkit.scoring.benchmarks.spatial_mcq import REPORTS

        if prompt not in STYLES:
            raise ValueError(f"{name}: prompt {prompt!r}; choose one of {', '.join(STYLES)}")
        if interleave not in INTERLEAVE:
            raise ValueError(f"{name}: interleave {interleave!r}; choose one of {', '.join(INTERLEAVE)}")
        if report not in REPORTS:
            raise ValueError(f"{name}: report {report!r}; choose one of {', '.join(REPORTS)}")
        if isinstance(groups, str) or not all(isinstance(g, str) and g for g in groups):
            raise ValueError(f"{name}: groups must be a list of column names")
        self.prompt = prompt
        self.question_column = str(question_column)
        self.interleave = interleave
        self.groups = tuple(groups)
        self.caa = bool(caa)
        self.report = report
        self.group_prefix = None if group_prefix is None else bool(group_prefix)
        self._set_snapshot(data_root, image_subdir)
        self.prompt_columns = (self.question_column, *STYLE_COLUMNS.get(prompt, ()))
        super().__init__(name, **kwargs)

    # -- prompts ---------------------------------------------------------------------------------------------------
    def _listed_options(self, line: dict[str, Any]) -> list[str] | None:
        from vlmkit.scoring.benchmarks.spatial_mcq import parse_option_list

        if "options" not in STYLE_COLUMNS.get(self.prompt, ()):
            return None
        got = parse_option_list(line.get("options"))
        if got is None:
            raise DatasetError(f"{self._where(line, 'options')}: not a list of option texts")
        return got

    def _text(self, line: dict[str, Any], images: int) -> str:
        question = self.text(line, self.question_column)
        return STYLES[self.prompt](line, question, self._listed_options(line), images)

    def prompt_text(self, line: dict[str, Any]) -> str:
        """The prompt's text, `<image>` marks left in place (build_prompt puts the images there)."""
        pos, row = self._row(line)
        return self._text(row, len(self._images_at(pos)))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        pos, row = self._row(line)
        images = self._images_at(pos)
        text = self._text(row, len(images))
        if self.interleave == "none" or (self.interleave == "between" and "<image>" not in text):
            parts: list[Part] = [{"type": "image", "value": p} for p in images]
            parts.append({"type": "text", "value": text.strip() if self.interleave == "between" else text})
            return parts
        pieces = text.split("<image>")
        parts = []
        for i, piece in enumerate(pieces):
            if piece.strip():
                parts.append({"type": "text", "value": piece.strip()})
            if i < len(images) and (self.interleave == "after" or i != len(pieces) - 1):
                parts.append({"type": "image", "value": images[i]})
        return parts

    # -- scoring ---------------------------------------------------------------------------------------------------
    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.spatial_mcq import score_spatial_mcq

        result = score_spatial_mcq(
            df, groups=self.groups, caa=self.caa, report=self.report, group_prefix=self.group_prefix
        )
        if judge is not None:
            result.notes.append(NO_JUDGE_NOTE)
        return result

    def scorer_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"scorer": "spatial_mcq", "prompt": self.prompt, "groups": list(self.groups)}
        if self.caa:
            params["caa"] = True
        if self.report != "acc":
            params["report"] = self.report
        if self.group_prefix is not None:
            params["group_prefix"] = self.group_prefix
        params.update(self.snapshot_params())
        return params
