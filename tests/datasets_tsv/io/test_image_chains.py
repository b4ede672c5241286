"""Image references that point at rows which themselves refer: followed to the row holding the data, in either
direction in the file; a loop of references, or a chain ending nowhere, is an error naming the row."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.io.images import decode_images
from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.yorn import ImageYORNDataset
from tests.support.tsvs import b64, files_under, image_bytes, write_tsv

RED_JPEG = image_bytes("red", "JPEG")
BLUE_PNG = image_bytes("blue", "PNG")


def row(index, image="") -> dict:
    return {"index": index, "image": image, "question": f"Question {index}?", "answer": "yes"}


def test_a_reference_to_a_reference_reaches_the_image(tmp_path: Path) -> None:
    tsv = tmp_path / "C.tsv"
    # 3 -> 2 -> 1 (data); 40 -> 30 -> 20 -> 10 (data) with the chain written backwards; 50 -> 40 (three hops)
    write_tsv(tsv, [row(1, b64(RED_JPEG)), row(2, "1"), row(3, "2"),
                    row(40, "30"), row(30, "20"), row(20, "10"), row(10, b64(BLUE_PNG)), row(50, "40")])
    folder = tmp_path / "images"
    paths = decode_images(tsv, folder)
    red, blue = [str((folder / "1.jpg").resolve())], [str((folder / "10.png").resolve())]
    assert paths == [red, red, red, blue, blue, blue, blue, blue]
    assert sorted(files_under(folder)) == ["1.jpg", "10.png"]  # no copies for the rows that refer
    assert Path(red[0]).read_bytes() == RED_JPEG and Path(blue[0]).read_bytes() == BLUE_PNG


def test_chains_in_a_dataset(lmu_root: Path) -> None:
    write_tsv(lmu_root / "CH.tsv", [row(7, "8"), row(8, "9"), row(9, b64(RED_JPEG))])
    ds = ImageYORNDataset("CH", root=lmu_root, progress=False)
    assert ds.image_paths(0) == ds.image_paths(1) == ds.image_paths(2)
    assert ds.image_paths(0)[0].endswith("9.jpg")


@pytest.mark.parametrize(
    "rows, bad_row",
    [
        ([row(0, b64(RED_JPEG)), row(1, "2"), row(2, "1")], 1),  # a loop of two
        ([row(0, b64(RED_JPEG)), row(5, "5")], 1),  # a row that refers to itself
        ([row(0, b64(RED_JPEG)), row(1, "2"), row(2, "99")], 1),  # a chain that ends at no row
        ([row(0, b64(RED_JPEG)), row(1, "2"), row(2, "3"), row(3, "2")], 1),  # into a loop it is not part of
    ],
)
def test_a_loop_or_a_dead_end_is_an_error_naming_the_row(tmp_path: Path, rows: list[dict], bad_row: int) -> None:
    tsv = tmp_path / "L.tsv"
    write_tsv(tsv, rows)
    index = rows[bad_row]["index"]
    with pytest.raises(DatasetError, match=rf"L\.tsv: row {bad_row} \(index {index}\), field image: '.+' is too "
                                           r"short to be an image and is not the index of a row that has one$"):
        decode_images(tsv, tmp_path / "images")


# --- the reference pass's other edges, called through decode_images ------------------------------------------------


def test_a_reference_is_at_most_64_characters(tmp_path: Path) -> None:
    long_index = "k" * 64  # VLMEvalKit: an `image` value this short is another row's index
    tsv = write_tsv(tmp_path / "R.tsv", [row(long_index, b64(RED_JPEG)), row(1, long_index)])
    paths = decode_images(tsv, tmp_path / "images")
    assert paths[1] == paths[0] and len(paths[0]) == 1


def test_cells_that_are_not_utf8_name_their_field(tmp_path: Path) -> None:
    header = b"index\timage\timage_path\tquestion\tanswer\n"
    good = b"0\t" + b64(RED_JPEG).encode() + b"\t\tq\tyes\n"
    for bad, field in ((b"1\xff\t0\t\tq\tyes\n", "index"), (b"1\t0\xff\t\tq\tyes\n", "image"),
                       (b"1\t0\tx\xff.png\tq\tyes\n", "image_path")):
        tsv = tmp_path / "U.tsv"
        tsv.write_bytes(header + good + bad)
        with pytest.raises(DatasetError, match=rf"U\.tsv: row 1, field {field}: not UTF-8 "):
            decode_images(tsv, tmp_path / "images")


def test_missing_columns_and_changed_rows(tmp_path: Path) -> None:
    no_image = tmp_path / "N.tsv"
    no_image.write_text("index\tquestion\n0\tq\n")
    with pytest.raises(DatasetError, match=r"N\.tsv: missing column `image` \(or `image_path`\), so the rows have no "
                                           r"images$"):
        decode_images(no_image, tmp_path / "images")
    no_index = tmp_path / "I.tsv"
    no_index.write_text(f"image\tquestion\n{b64(RED_JPEG)}\tq\n")
    with pytest.raises(DatasetError, match=r"I\.tsv: missing column `index`$"):
        decode_images(no_index, tmp_path / "images")
    tsv = write_tsv(tmp_path / "C.tsv", [row(0, b64(RED_JPEG)), row(1, "0")])
    with pytest.raises(DatasetError, match=r"C\.tsv: row 1 \(index 1\): the rows changed since the table was read$"):
        decode_images(tsv, tmp_path / "images", index_keys=["0", "7"])
    with pytest.raises(DatasetError, match=r"C\.tsv: row 1 \(index 1\): the rows changed since the table was read$"):
        decode_images(tsv, tmp_path / "images", index_keys=["0"])  # fewer keys than rows
    with pytest.raises(DatasetError, match=r"C\.tsv: 2 rows now, 3 when the table was read$"):
        decode_images(tsv, tmp_path / "images", index_keys=["0", "1", "2"])


def test_a_recorded_pass_is_replayed_for_the_same_md5(tmp_path: Path) -> None:
    tsv = write_tsv(tmp_path / "M.tsv", [row(0, b64(RED_JPEG)), row(1, "0"), row(2)])
    folder = tmp_path / "images"
    first = decode_images(tsv, folder, tsv_md5="a" * 32)
    assert first[2] == [] and first[1] == first[0]
    # the file changes on disk but the caller vouches for the same MD5: the recorded pass answers, unread
    tsv.write_text("index\timage\n9\tgarbage that is not base64 at all, and long enough not to be a reference\n")
    assert decode_images(tsv, folder, tsv_md5="a" * 32) == first


def test_a_short_list_is_a_list_never_a_reference(tmp_path: Path) -> None:
    # "[]" is as short as an index, but a list literal: an empty list of images, not a reference to a row "[]"
    tsv = write_tsv(tmp_path / "E.tsv", [row(0, b64(RED_JPEG)), row(1, "[]")])
    assert decode_images(tsv, tmp_path / "images")[1] == []
