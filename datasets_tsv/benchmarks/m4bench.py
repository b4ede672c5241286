"""M4Bench (State_Invariance, State_Comparison, Spatial_Perception, Instance_Comparison, Detailed_Difference):
VLMEvalKit's M4Bench class (vlmeval/dataset/m4bench.py at e8e78f05).

Each row has two images of its own columns, `image1` and `image2` (base64), with their original addresses in
`image1_path` and `image2_path`; the prompt, as VLMEvalKit builds it: the two images, then the row's `query` as it
is (the options are part of it). VLMEvalKit decodes both images when all four cells are filled, and otherwise sends
the two addresses (URLs); vlmkit does the same. The images are decoded once into `images/<image_folder>/` as
`<index>_1<ext>` and `<index>_2<ext>` (the extension from the bytes); VLMEvalKit names them by their addresses.
Scoring: vlmkit.scoring.benchmarks.m4bench (the `response` letter; the judge optional).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.cells import index_key, is_blank
from vlmkit.core.files import UnsafePathError, contained_path, write_bytes_atomic
from vlmkit.core.media import MediaError, b64_to_bytes, image_extension
from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult

from datasets_tsv.kinds.base import DatasetError, TSVDataset

IMAGE_CELLS = (("image1", "image1_path"), ("image2", "image2_path"))


class M4BenchDataset(TSVDataset):
    """Two-image M4Bench rows (module docstring)."""

    kind: ClassVar[str] = "other"
    prompt_columns: ClassVar[tuple[str, ...]] = ("query", "image1", "image2")
    answer_columns: ClassVar[tuple[str, ...]] = ("query", "response")

    def prompt_text(self, line: dict[str, Any]) -> str:
        return self.text(line, "query")

    def prepare_images(self) -> None:
        """Nothing ahead of time: each row's two images are decoded on first use (see `_images_at`)."""

    def _images_at(self, pos: int) -> list[str]:
        row = self.line(pos)
        cells = [(row.get(data), row.get(address)) for data, address in IMAGE_CELLS]
        if all(not is_blank(c) for pair in cells for c in pair):
            return [self._decoded(row, k, str(data)) for k, (data, _) in enumerate(cells, start=1)]
        addresses = [str(a) for _, a in cells if not is_blank(a)]
        if len(addresses) == 2 and all(a.startswith(("http://", "https://")) for a in addresses):
            return addresses
        raise DatasetError(f"{self._where(row, 'image1')}: both images must be given as base64 (image1, image2 with "
                           "image1_path, image2_path) or as URLs (image1_path, image2_path)")  # fmt: skip

    def _decoded(self, row: dict[str, Any], k: int, data: str) -> str:
        """The k-th image of a row as a file in the image folder (written once; an existing file of the same bytes
        is reused)."""
        try:
            raw = b64_to_bytes(data)
        except MediaError as exc:
            raise DatasetError(f"{self._where(row, f'image{k}')}: {exc}") from None
        try:
            path = contained_path(self.image_root, f"{index_key(row['index'])}_{k}{image_extension(raw)}")
        except UnsafePathError as exc:
            raise DatasetError(f"{self._where(row, 'index')}: {exc}") from None
        with self._lock:
            if not (path.is_file() and path.read_bytes() == raw):
                write_bytes_atomic(path, raw)
        return str(path)

    def _score(self, df: pd.DataFrame, *, fuzzy: bool, judge: Judge | None = None) -> EvalResult:
        from vlmkit.scoring.benchmarks.m4bench import score_m4bench

        return score_m4bench(df, judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "m4bench"}
