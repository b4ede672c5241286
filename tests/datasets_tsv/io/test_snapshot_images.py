"""datasets_tsv.io.snapshot_images with real files: a row's `image_path` names files under --data-root (one name
or a list), a bad row fails alone in one line, nothing outside the folder is reachable, and without a data root the
TSV's own images are used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.io.snapshot_images import SnapshotImages
from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.yorn import ImageYORNDataset
from tests.support.tsvs import b64, image_bytes, write_tsv


class SnapshotYORN(SnapshotImages, ImageYORNDataset):
    """A yes/no dataset whose images may live in a snapshot's `imgs/` folder."""

    def __init__(self, name: str, *, data_root: Path | None = None, **kwargs: Any) -> None:
        self._set_snapshot(data_root, "imgs")
        super().__init__(name, **kwargs)


def _row(index: int, image_path: str = "", image: str = "") -> dict:
    return {"index": index, "image": image, "image_path": image_path, "question": "Q?", "answer": "yes"}


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    root = tmp_path / "snap"
    (root / "imgs" / "sub").mkdir(parents=True)
    (root / "imgs" / "a.png").write_bytes(image_bytes("red", "PNG"))
    (root / "imgs" / "sub" / "b.png").write_bytes(image_bytes("blue", "PNG"))
    (root / "secret.png").write_bytes(image_bytes("green", "PNG"))
    return root


def test_rows_name_their_files_under_the_data_root(lmu_root: Path, snapshot: Path) -> None:
    write_tsv(lmu_root / "S.tsv", [_row(0, "a.png"), _row(1, "['a.png', 'sub/b.png']"), _row(2, " /a.png "),
                                   _row(3, "")])
    ds = SnapshotYORN("S", root=lmu_root, data_root=snapshot, progress=False)
    imgs = snapshot / "imgs"
    assert ds.image_paths(0) == [str(imgs / "a.png")]
    assert ds.image_paths(1) == [str(imgs / "a.png"), str(imgs / "sub" / "b.png")]
    assert ds.image_paths(2) == [str(imgs / "a.png")]  # a leading slash is the folder's root, not the disk's
    assert ds.image_paths(3) == []
    assert ds.snapshot_params() == {"data_root": str(snapshot)}
    assert not (lmu_root / "images" / "S").exists()  # nothing decoded: the snapshot's files are used in place


@pytest.mark.parametrize(
    "image_path, message",
    [
        ("missing.png", r"row 0 \(index 0\), field image_path: .*missing\.png not found under --data-root .*imgs$"),
        ("../secret.png", r"row 0 \(index 0\), field image_path: "),  # outside the snapshot's image folder
        ("[not a list", r"row 0 \(index 0\), field image_path: '\[not a list' is not a list of file names$"),
    ],
)
def test_a_bad_row_fails_alone_in_one_line(lmu_root: Path, snapshot: Path, image_path: str, message: str) -> None:
    write_tsv(lmu_root / "S.tsv", [_row(0, image_path), _row(1, "a.png")])
    ds = SnapshotYORN("S", root=lmu_root, data_root=snapshot, progress=False)
    with pytest.raises(DatasetError, match=r"S\.tsv: " + message) as err:
        ds.image_paths(0)
    assert "\n" not in str(err.value)
    assert ds.image_paths(1) == [str(snapshot / "imgs" / "a.png")]  # the next row is fine


def test_without_a_data_root_the_tsvs_images_are_used(lmu_root: Path) -> None:
    write_tsv(lmu_root / "S.tsv", [_row(0, image=b64(image_bytes("red", "JPEG")))])
    ds = SnapshotYORN("S", root=lmu_root, progress=False)
    paths = ds.image_paths(0)
    assert len(paths) == 1 and Path(paths[0]).parent == (lmu_root / "images" / "S").resolve()
    assert ds.snapshot_params() == {}
