"""`ParquetSnapshotVideo`: a video snapshot whose questions are one parquet file of the Hugging Face repository, or
the TSV VLMEvalKit writes beside it on its first run (same rows, same order), and whose videos are unpacked flat
under `video/<video>.mp4` (Video-MME, Video-TT, Video-MME-v2).

The table is read from the parquet when pandas has a parquet engine, else from the TSV (`snapshot_table
.parquet_or_tsv`); `info()["table_source"]` says which. A subclass names the two files (`parquet`, `vlmevalkit_tsv`)
and turns the table into its rows in `_rows(raw, path)`; parquet rows reach `_rows` numbered 0..n-1 (`index`) with
their `video_id` as `video`, as VLMEvalKit's TSV has them, unless the subclass reads the parquet itself
(`_parquet_rows`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.kinds.snapshot_table import parquet_or_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset

__all__ = ["ParquetSnapshotVideo"]


class ParquetSnapshotVideo(SnapshotVideoDataset):
    """A snapshot video benchmark read from its parquet or VLMEvalKit's TSV (module docstring)."""

    parquet: ClassVar[str] = ""  # the parquet, relative to the snapshot
    vlmevalkit_tsv: ClassVar[str] = ""  # the TSV VLMEvalKit writes into the snapshot
    table_source: str = ""

    def _read_table(self) -> pd.DataFrame:
        parquet = self.snapshot / self.parquet
        raw, path = parquet_or_tsv([parquet], self.snapshot / self.vlmevalkit_tsv, f"{parquet}: not found; expected "
                                   f"the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        self.table_source = self.parquet if path == parquet else self.vlmevalkit_tsv
        return self._parquet_rows(raw, path) if path == parquet else self._rows(raw, path)

    def _parquet_rows(self, raw: pd.DataFrame, path: Path) -> pd.DataFrame:
        """The parquet's rows, as `_rows` takes VLMEvalKit's TSV: numbered 0..n-1, `video_id` as `video`."""
        return self._rows(raw.rename(columns={"video_id": "video"}).assign(index=range(len(raw))), path)

    def _rows(self, raw: pd.DataFrame, path: Path) -> pd.DataFrame:
        """The dataset's rows from the table read from `path`; one line naming the file, row and field otherwise."""
        raise NotImplementedError

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "video" / f"{line['video']}.mp4"

    def info(self) -> dict[str, Any]:
        return {**super().info(), "table_source": self.table_source}
