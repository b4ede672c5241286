"""What every dataset class shares about its rows: `len`, `line(i)` and `repr`, over a pandas table `data`.

TSVDataset and CustomDataset both inherit this, so a row is read (and a dataset printed) the same way whichever
file it came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd


class TableRows:
    """Rows of `self.data` (a DataFrame with an `index` column) by position. Subclasses set `name`, `data` and
    say where the rows came from (`source_file`) and, optionally, more to show in repr (`_repr_extras`)."""

    name: str
    data: pd.DataFrame
    _records: list[dict[str, Any]] | None = None

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
            self._records = self.data.to_dict("records")
        return dict(self._records[i])
