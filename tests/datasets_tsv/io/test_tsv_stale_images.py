"""Decoded images are reused only when they were decoded from the same content: a rewritten TSV whose new picture
has the old one's byte size is served the new picture, with its new answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.io.image_manifest import MANIFEST_NAME
from datasets_tsv.kinds.yorn import ImageYORNDataset

from tests.support.tsvs import b64, files_under, image_bytes, write_tsv


def same_size_pair(fmt: str) -> tuple[bytes, bytes]:
    """Two different pictures whose files have the same number of bytes (solid 64x64: JPEG 693 bytes each with
    this Pillow; BMP of equal dimensions always)."""
    red, blue = image_bytes("red", fmt, (64, 64)), image_bytes("blue", fmt, (64, 64))
    assert red != blue and len(red) == len(blue)  # the premise: a size check cannot tell them apart
    return red, blue


def build(root: Path, picture: bytes, answer: str, name: str = "Colours") -> ImageYORNDataset:
    write_tsv(root / f"{name}.tsv", [{"index": 0, "image": b64(picture), "question": "Is it red?", "answer": answer}])
    return ImageYORNDataset(name, root=root, progress=False)


@pytest.mark.parametrize("fmt", ["JPEG", "BMP"])
def test_rewritten_tsv_with_a_same_size_picture_serves_the_new_picture(lmu_root, fmt):
    red, blue = same_size_pair(fmt)
    first = build(lmu_root, red, "yes")
    [path] = first.image_paths(0)
    assert Path(path).read_bytes() == red
    second = build(lmu_root, blue, "no")  # the same index, a new picture of the same size, a new answer
    assert second.image_paths(0) == [path]
    assert Path(path).read_bytes() == blue
    assert second.line(0)["answer"] == "no"
    third = build(lmu_root, red, "yes")  # and back again
    assert Path(third.image_paths(0)[0]).read_bytes() == red


def test_unchanged_tsv_reuses_every_file_and_leaves_the_manifest_alone(lmu_root):
    red, _ = same_size_pair("BMP")
    build(lmu_root, red, "yes").prepare_images()
    folder = lmu_root / "images" / "Colours"
    before = files_under(folder, manifest=True)
    assert MANIFEST_NAME in before
    build(lmu_root, red, "yes").prepare_images()
    assert files_under(folder, manifest=True) == before  # nothing rewritten, not even the manifest


def test_file_without_a_record_is_rewritten(lmu_root):
    """A folder decoded by an older vlmkit (or VLMEvalKit) has no manifest: a same-size file there is not trusted."""
    red, blue = same_size_pair("BMP")
    folder = lmu_root / "images" / "Colours"
    folder.mkdir(parents=True)
    (folder / "0.bmp").write_bytes(red)
    ds = build(lmu_root, blue, "no")
    assert Path(ds.image_paths(0)[0]).read_bytes() == blue


def test_file_replaced_by_hand_is_rewritten(lmu_root):
    red, blue = same_size_pair("BMP")
    [path] = build(lmu_root, red, "yes").image_paths(0)
    Path(path).write_bytes(blue)  # same size; the manifest still says "decoded from the red picture"
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert Path(build(lmu_root, red, "yes").image_paths(0)[0]).read_bytes() == red


@pytest.mark.parametrize("damage", ["not json at all", '{"version": 99, "files": {}}', '{"version": 1, "files": []}'])
def test_unreadable_manifest_means_rewrite_never_a_crash(lmu_root, damage):
    red, blue = same_size_pair("BMP")
    build(lmu_root, red, "yes").prepare_images()
    (lmu_root / "images" / "Colours" / MANIFEST_NAME).write_text(damage)
    assert Path(build(lmu_root, blue, "no").image_paths(0)[0]).read_bytes() == blue
    manifest = json.loads((lmu_root / "images" / "Colours" / MANIFEST_NAME).read_text())
    assert manifest["version"] == 1 and list(manifest["files"]) == ["0.bmp"]


def test_datasets_sharing_a_folder_get_their_own_pictures(lmu_root):
    red, blue = same_size_pair("BMP")
    write_tsv(lmu_root / "EN.tsv", [{"index": 0, "image": b64(red), "question": "Red?", "answer": "yes"}])
    write_tsv(lmu_root / "CN.tsv", [{"index": 0, "image": b64(blue), "question": "Red?", "answer": "no"}])
    for name, picture in [("EN", red), ("CN", blue), ("EN", red)]:
        ds = ImageYORNDataset(name, root=lmu_root, progress=False, image_folder="Shared")
        assert Path(ds.image_paths(0)[0]).read_bytes() == picture


def test_two_pictures_under_one_file_name_is_an_error_naming_both_rows(lmu_root):
    red, blue = same_size_pair("BMP")
    write_tsv(lmu_root / "Dup.tsv", [
        {"index": 0, "image": b64(red), "image_path": "same.bmp", "question": "Red?", "answer": "yes"},
        {"index": 1, "image": b64(blue), "image_path": "same.bmp", "question": "Red?", "answer": "no"},
    ])
    ds = ImageYORNDataset("Dup", root=lmu_root, progress=False)
    with pytest.raises(DatasetError, match=r"Dup\.tsv: row 1 \(index 1\), field image: .*same\.bmp, where row 0"):
        ds.prepare_images()


def test_one_picture_under_one_file_name_twice_is_fine(lmu_root):
    red, _ = same_size_pair("BMP")
    write_tsv(lmu_root / "Twice.tsv", [
        {"index": i, "image": b64(red), "image_path": "same.bmp", "question": "Red?", "answer": "yes"} for i in (0, 1)
    ])
    ds = ImageYORNDataset("Twice", root=lmu_root, progress=False)
    assert ds.image_paths(0) == ds.image_paths(1)
