"""Where the decoder puts an image (`vlmkit.core.files.contained_child`, its shortcut for plain names): the same file
contained_path names, and never a place outside the image folder, a symlink in the folder included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from datasets_tsv.io.images import decode_images
from datasets_tsv.io.tsv_read import DatasetError
from vlmkit.core.files import UnsafePathError, contained_child, contained_path

from tests.support.tsvs import b64, image_bytes, write_tsv

NAMES = [
    "a.jpg", "sub/a.jpg", "new/a.jpg", "new/deeper/a.jpg", "sub/new/a.jpg", "sub/deeper/a.png", " a .jpg", "..a.jpg",
    "a..jpg", "link/a.jpg", "link", "file.jpg/x", "sub//a.jpg", "./a.jpg", "sub/../a.jpg", "../a.jpg", "/abs.jpg", "",
    ".", " .. ", "sub/.", "away/a.jpg", "away", "a\\b.jpg",
]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_contained_child_answers_as_contained_path(tmp_path, name):
    base = (tmp_path / "images").resolve()
    (base / "sub" / "deeper").mkdir(parents=True)
    (base / "file.jpg").write_bytes(b"x")
    os.symlink(base / "sub", base / "link")  # inside the folder
    os.symlink(tmp_path, base / "away")  # out of it
    try:
        expected: Path | type[UnsafePathError] = contained_path(base, name)
    except UnsafePathError:
        expected = UnsafePathError
    if expected is UnsafePathError:
        with pytest.raises(UnsafePathError):
            contained_child(base, name)
    else:
        assert contained_child(base, name) == expected


def test_an_image_path_through_a_symlink_out_of_the_folder_is_refused(lmu_root, tmp_path):
    folder = lmu_root / "images" / "Links"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, folder / "away")
    tsv = write_tsv(lmu_root / "Links.tsv", [{"index": 0, "image": b64(image_bytes()), "image_path": "away/x.jpg"}])
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field image_path: .*refusing to write outside"):
        decode_images(tsv, folder)
    assert list(outside.iterdir()) == []
