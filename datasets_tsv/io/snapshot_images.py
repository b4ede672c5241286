"""Images that live in a benchmark's Hugging Face snapshot rather than in its TSV: with `--data-root DIR`, a row's
`image_path` (a file name or a list of them) names files under DIR/<image_subdir>, as VLMEvalKit resolves them after
downloading the snapshot. Each file must exist and none may lie outside that folder; a bad row fails alone, in one
line naming the file, the row and the field. Without a data root the TSV's own images are used as usual (base64
`image`, or `image_path` files under $LMUData/images/<name>/ or beside the TSV).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from vlmkit.core.cells import is_blank
from vlmkit.core.files import UnsafePathError, contained_path

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.io.tsv_read import DatasetError, parse_list


class SnapshotImages(TSVDataset):
    """A TSVDataset whose rows may name their images in a snapshot folder (module docstring). Subclasses call
    `_set_snapshot(data_root, image_subdir)` before TSVDataset.__init__."""

    takes_data_root: ClassVar[bool] = True
    data_root: Path | None = None
    image_subdir: str = ""

    def _set_snapshot(self, data_root: Path | str | None, image_subdir: str) -> None:
        self.data_root = Path(data_root).expanduser() if data_root is not None else None
        self.image_subdir = str(image_subdir)

    def prepare_images(self) -> None:
        if self.data_root is None:
            super().prepare_images()

    def _images_at(self, pos: int) -> list[str]:
        """With a data root, a row's files are found when the row is asked for (one bad row fails alone)."""
        if self.data_root is None:
            return super()._images_at(pos)
        return self._snapshot_files(self.line(pos))

    def _snapshot_files(self, line: dict[str, Any]) -> list[str]:
        value = line.get("image_path")
        if is_blank(value):
            return []
        text = str(value).strip()
        names = parse_list(text) if text.startswith("[") else [text]
        if names is None:
            raise DatasetError(f"{self._where(line, 'image_path')}: {text[:80]!r} is not a list of file names")
        assert self.data_root is not None
        base = self.data_root / self.image_subdir if self.image_subdir else self.data_root
        files = []
        for name in names:
            try:
                path = contained_path(base, name.strip().lstrip("/\\"))
            except UnsafePathError as exc:
                raise DatasetError(f"{self._where(line, 'image_path')}: {exc}") from None
            if not path.is_file():
                raise DatasetError(f"{self._where(line, 'image_path')}: {path} not found under --data-root {base}")
            files.append(str(path))
        return files

    def snapshot_params(self) -> dict[str, Any]:
        return {"data_root": str(self.data_root)} if self.data_root is not None else {}
