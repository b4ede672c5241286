"""What every dataset class shares about its rows: `len`, `line(i)` and `repr`, over a pandas table `data`; and the
optional members of the run's dataset contract (vlmkit.core.contracts.Dataset) with their defaults.

TSVDataset, CustomDataset and SnapshotVideoDataset all inherit this, so a row is read (and a dataset printed) the
same way whichever file it came from, and the run reads `dataset.output_format` instead of probing for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


class TableRows:
    """Rows of `self.data` (a DataFrame with an `index` column) by position. Subclasses set `name`, `kind`, `data`,
    `file_md5` and say where the rows came from (`source_file`) and, optionally, more to show in repr
    (`_repr_extras`). The optional members of vlmkit.core.contracts.Dataset have their defaults here; a class
    that differs sets its own."""

    name: str
    kind: str
    data: pd.DataFrame
    file_md5: str
    _records: list[dict[str, Any]] | None = None

    # Optional members of the run's contract, with their defaults.
    answer_columns: tuple[str, ...] = ("answer",)  # what scoring needs; the first is the reference
    scorer_reason: str | None = None  # one line: which scorer and why (set by datasets_tsv.catalog.registry)
    output_format: str | None = None  # "ark": the run also writes Ark's output records (vlmkit.outputs.ark)
    subtitle_sampling: dict[str, float] | None = None  # Video-MME's subtitle variants: the frames they were picked at
    prompt_sampling: dict[str, float] | None = None  # the frames a prompt tells the model it sees (QBench_Video_MCQ)

    def generation_params(self, line: dict[str, Any] | int) -> dict[str, Any] | None:
        """A row's own generation parameters (max_tokens, temperature, ...); None: the run's."""
        return None

    def scoring_problem(self) -> str | None:
        """Why this dataset cannot be scored here (a scorer's missing library), said before inference; None: none."""
        return None

    def prepare_images(self) -> None:
        """Decode the dataset's images once before any row is asked (nothing to do by default); DataError for a
        dataset-level problem."""

    @property
    def source_file(self) -> Path:
        raise NotImplementedError

    def _repr_extras(self) -> tuple[str, ...]:
        return ()

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        items = (repr(self.name), *self._repr_extras(), f"rows={len(self)}", f"source={str(self.source_file)!r}")
        return f"{type(self).__name__}({', '.join(items)})"

    def line(self, i: int) -> dict[str, Any]:
        """Row i (position, not index; negative counts from the end) as a dict of plain Python values; missing
        cells are None or NaN as the table holds them."""
        if not -len(self) <= i < len(self):
            raise IndexError(f"{self.name}: row {i} out of range ({len(self)} rows)")
        if self._records is None:
            self._records = _records(self.data)
        return dict(self._records[i])


def _records(data: pd.DataFrame) -> list[dict[str, Any]]:
    """data.to_dict("records"), built column by column when every column has a numpy dtype or is text whose
    missing value is NaN (pandas' default `str`): `Series.tolist` then gives each value as to_dict does, several
    times faster than to_dict's boxing cell by cell (0.01 s instead of 0.05 s for 4,329 rows of 13 columns).
    to_dict itself otherwise (another extension dtype's missing value may differ: Int64's NA is None there)."""
    if not data.columns.is_unique or not all(map(_plain, data.dtypes)):
        return data.to_dict("records")
    columns = [data.iloc[:, j].tolist() for j in range(data.shape[1])]
    names = list(data.columns)
    return [dict(zip(names, row)) for row in zip(*columns)] if columns else [{} for _ in range(len(data))]


def _plain(dtype: Any) -> bool:
    return isinstance(dtype, np.dtype) or (
        isinstance(dtype, pd.StringDtype) and isinstance(dtype.na_value, float) and np.isnan(dtype.na_value)
    )
