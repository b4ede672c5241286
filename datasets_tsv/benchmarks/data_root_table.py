"""`DataRootTable`: a judge-scored benchmark whose TSV vlmkit writes into `$LMUData/<name>.tsv` from the files
`--data-root` names (BabyVision, PerceptionBench), and reads from there on later runs without `--data-root`.

A subclass writes the TSV from the files (`write_table(data_root, tsv)`, one line naming the file and line that is
wrong) and says what `--data-root` should be (`data_root_hint`); `write_rows_tsv` writes a table only when its text
changed, so a rerun with the same files keeps the TSV (and its MD5) as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.config import lmu_data_root
from vlmkit.core.files import write_text_atomic

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.judged import JudgedDataset

__all__ = ["DataRootTable", "write_rows_tsv"]


def write_rows_tsv(tsv: Path, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
    """Write `rows` (in `columns`' order) as the TSV, unless it already holds the same text."""
    text = pd.DataFrame(rows, columns=list(columns)).to_csv(sep="\t", index=False)
    if not tsv.is_file() or tsv.read_text(encoding="utf-8") != text:
        tsv.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(tsv, text)


class DataRootTable(JudgedDataset):
    """A judged benchmark whose TSV is written from `--data-root` (module docstring)."""

    takes_data_root: ClassVar[bool] = True
    data_root_hint: ClassVar[str] = ""  # the end of "pass --data-root ...": what the folder or file should be

    def __init__(self, name: str, *, data_root: Path | str | None = None, root: Path | None = None,
                 **kwargs: Any) -> None:
        base = Path(root).expanduser() if root is not None else lmu_data_root()
        tsv = base / f"{name}.tsv"
        if data_root is not None:
            self.write_table(Path(data_root).expanduser(), tsv)
        elif not tsv.is_file():
            raise DatasetError(f"{tsv}: not found; pass --data-root {self.data_root_hint} to write it")
        self.data_root = Path(data_root).expanduser() if data_root is not None else None
        super().__init__(name, root=base, **kwargs)

    def write_table(self, data_root: Path, tsv: Path) -> None:
        """Write the TSV from the files at `data_root` (unless it already holds the same text)."""
        raise NotImplementedError

    def data_root_params(self) -> dict[str, Any]:
        """`data_root` for scorer_params, when one was given."""
        return {"data_root": str(self.data_root)} if self.data_root else {}
