"""Multiple choice whose prompt is a TSV column, or whose Overall averages groups (CV-Bench, HR-Bench).

Two catalog options on top of the generic MCQ (image_mcq):
- `prompt_column`: the row's prompt text is that column, verbatim (CV-Bench ships its prompts in `prompt`).
- `overall_over`: Overall is the mean of the per-group accuracies over that column's values instead of the mean
  over rows (CV-Bench-2D: over `source`, as VLMEvalKit's CVBench.report_accuracy; HR-Bench: over
  `cycle_category`, VLMEvalKit's `Average` of report_acc_hrbench). The per-group accuracies are reported too,
  under the group's value; the mean over rows stays as `Overall (rows)`.
Both are options set by the catalog; nothing is keyed on the dataset's name.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.common.breakdown import split_series
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.mcq import ImageMCQDataset


class GroupedMCQDataset(ImageMCQDataset):
    """Image MCQ with a prompt column and/or a group-mean Overall (see the module docstring)."""

    def __init__(
        self, name: str, *, prompt_column: str | None = None, overall_over: str | None = None, **kwargs: Any
    ) -> None:
        self.prompt_column = prompt_column or None
        self.overall_over = overall_over or None
        if self.overall_over and kwargs.get("circular"):
            raise ValueError(f"{name}: overall_over applies to plain MCQ, not circular evaluation")
        if self.prompt_column:
            self.prompt_columns = (self.prompt_column,)
        super().__init__(name, **kwargs)
        if self.overall_over and self.overall_over not in self.data.columns:
            raise DatasetError(f"{self.tsv_path}: missing column `{self.overall_over}`, needed to score {name}")

    def prompt_text(self, line: dict[str, Any]) -> str:
        if self.prompt_column:
            return self.text(line, self.prompt_column)
        return super().prompt_text(line)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        result = super()._score(df, fuzzy=fuzzy, judge=judge)
        if not self.overall_over:
            return result
        hits = pd.Series(result.per_sample["hit"].to_numpy(dtype=float), index=df.index)
        groups = df[self.overall_over].map(lambda v: None if pd.isna(v) else str(v))
        per_group = hits.groupby(groups, dropna=True).mean()
        metrics = {"Overall": float(per_group.mean()), "Overall (rows)": result.metrics["Overall"]}
        metrics.update({str(k): float(v) for k, v in per_group.items()})
        metrics.update({k: v for k, v in result.metrics.items() if k not in metrics})
        result.metrics = metrics
        result.primary = "Overall"
        figure = result.vlmevalkit
        if figure is not None:
            theirs = pd.Series(result.per_sample["vlmevalkit_hit"].to_numpy(dtype=float), index=df.index)
            their_groups = theirs.groupby(groups, dropna=True).mean()
            their_metrics = {"Overall": float(their_groups.mean()), "Overall (rows)": figure.metrics["Overall"]}
            their_metrics.update({str(k): float(v) for k, v in their_groups.items()})
            their_metrics.update({k: v for k, v in figure.metrics.items() if k not in their_metrics})
            figure.metrics, figure.primary = their_metrics, "Overall"
        if result.table is not None:
            splits = split_series(df)
            for pos, split in enumerate(result.table["split"]):
                rows = splits == split
                result.table.loc[pos, "Overall"] = float(hits[rows].groupby(groups[rows], dropna=True).mean().mean())
        result.notes.append(
            f"Overall is the mean of the accuracies per `{self.overall_over}` ({len(per_group)} groups), as "
            "VLMEvalKit reports this benchmark; `Overall (rows)` is the mean over rows"
        )
        return result

    def scorer_params(self) -> dict[str, Any]:
        params = super().scorer_params()
        if self.prompt_column:
            params["prompt_column"] = self.prompt_column
        if self.overall_over:
            params["overall_over"] = self.overall_over
        return params
