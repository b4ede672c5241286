"""Images of TSV rows: references by index, lists, image_path, decode-once, containment, broken data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.io.image_manifest import MANIFEST_NAME
from datasets_tsv.kinds.yorn import ImageYORNDataset

from tests.support.tsvs import b64, files_under, image_bytes, write_tsv

RED_JPEG = image_bytes("red", "JPEG")
BLUE_PNG = image_bytes("blue", "PNG")
GREEN_GIF = image_bytes("green", "GIF")


def dataset(root: Path, rows: list[dict], name: str = "T", **kwargs) -> ImageYORNDataset:
    write_tsv(root / f"{name}.tsv", rows)
    return ImageYORNDataset(name, root=root, progress=False, **kwargs)


def row(index, image="", **more) -> dict:
    return {"index": index, "image": image, "question": f"Question {index}?", "answer": "yes", **more}


def test_table_never_holds_base64(lmu_root):
    ds = dataset(lmu_root, [row(0, b64(RED_JPEG))])
    assert "image" not in ds.data.columns
    assert "image" not in ds.line(0)


def test_single_images_keep_their_bytes_and_get_their_suffix(lmu_root):
    ds = dataset(lmu_root, [row(0, b64(RED_JPEG)), row(1, b64(BLUE_PNG)), row(2, b64(GREEN_GIF))])
    paths = [ds.image_paths(i) for i in range(3)]
    folder = (lmu_root / "images" / "T").resolve()
    assert paths == [[str(folder / "0.jpg")], [str(folder / "1.png")], [str(folder / "2.gif")]]
    assert [Path(p[0]).read_bytes() for p in paths] == [RED_JPEG, BLUE_PNG, GREEN_GIF]  # no re-encoding


def test_short_image_value_references_another_row_even_later_in_the_file(lmu_root):
    rows = [row(1_000_005, "5"), row(5, b64(RED_JPEG)), row(2_000_005, "5")]
    ds = dataset(lmu_root, rows)
    main = ds.image_paths(1)
    assert ds.image_paths(0) == main == ds.image_paths(2) == ds.image_paths({"index": 2_000_005})
    assert list(files_under(lmu_root / "images" / "T")) == ["5.jpg"]  # one file, no copies


def test_string_indices_and_references(lmu_root):
    ds = dataset(lmu_root, [row("q-a", b64(RED_JPEG)), row("q-b", "q-a")])
    assert ds.data["index"].tolist() == ["q-a", "q-b"]
    assert ds.image_paths(1) == ds.image_paths(0) and ds.image_paths(0)[0].endswith("q-a.jpg")


def test_reference_to_a_missing_index_names_the_row(lmu_root):
    ds = dataset(lmu_root, [row(0, b64(RED_JPEG)), row(1, "99")])
    with pytest.raises(DatasetError, match=r"T\.tsv: row 1 \(index 1\), field image: '99'"):
        ds.prepare_images()


@pytest.mark.parametrize("literal", ["json", "python"])
def test_multi_image_rows(lmu_root, literal):
    images = [b64(RED_JPEG), b64(BLUE_PNG)]
    value = json.dumps(images) if literal == "json" else repr(images)
    ds = dataset(lmu_root, [row(3, value)])
    paths = ds.image_paths(0)
    assert [Path(p).name for p in paths] == ["3_0.jpg", "3_1.png"]
    assert [Path(p).read_bytes() for p in paths] == [RED_JPEG, BLUE_PNG]
    assert [p["type"] for p in ds.build_prompt(0)] == ["image", "image", "text"]


def test_image_path_names_the_files(lmu_root):
    rows = [
        row(0, b64(RED_JPEG), image_path="sub/red picture.jpg"),
        row(1, b64(BLUE_PNG), image_path="noext"),  # no suffix: it comes from the bytes
        row(2, json.dumps([b64(RED_JPEG), b64(BLUE_PNG)]), image_path=json.dumps(["m/a.jpg", "m/b.png"])),
    ]
    ds = dataset(lmu_root, rows)
    folder = lmu_root / "images" / "T"
    assert ds.image_paths(0) == [str((folder / "sub" / "red picture.jpg").resolve())]
    assert Path(ds.image_paths(1)[0]).name == "noext.png"
    assert [Path(p).read_bytes() for p in ds.image_paths(2)] == [RED_JPEG, BLUE_PNG]
    assert sorted(files_under(folder)) == ["m/a.jpg", "m/b.png", "noext.png", "sub/red picture.jpg"]


def test_image_path_count_must_match_the_images(lmu_root):
    ds = dataset(lmu_root, [row(0, json.dumps([b64(RED_JPEG), b64(BLUE_PNG)]), image_path=json.dumps(["a.jpg"]))])
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field image_path: 1 name\(s\) for 2 image"):
        ds.prepare_images()


def test_images_are_decoded_once(lmu_root):
    rows = [row(0, b64(RED_JPEG)), row(1, "0"), row(2, json.dumps([b64(BLUE_PNG), b64(RED_JPEG)]))]
    first = dataset(lmu_root, rows)
    for i in range(len(first)):
        first.build_prompt(i)
    folder = lmu_root / "images" / "T"
    before = files_under(folder)
    assert len(before) == 3
    second = ImageYORNDataset("T", root=lmu_root, progress=False)  # a fresh object, as a new run would make
    assert [second.image_paths(i) for i in range(3)] == [first.image_paths(i) for i in range(3)]
    assert files_under(folder) == before  # nothing rewritten: same files, same mtimes


def test_shared_image_folder_is_reused_across_datasets(lmu_root):
    rows = [row(0, b64(RED_JPEG)), row(1, b64(BLUE_PNG))]
    dataset(lmu_root, rows, name="Variant_EN", image_folder="Shared").prepare_images()
    before = files_under(lmu_root / "images" / "Shared")
    other = dataset(lmu_root, rows, name="Variant_CN", image_folder="Shared")
    assert other.image_paths(1) == [str((lmu_root / "images" / "Shared" / "1.png").resolve())]
    assert files_under(lmu_root / "images" / "Shared") == before
    assert not (lmu_root / "images" / "Variant_CN").exists()


def test_stale_file_of_another_size_is_replaced(lmu_root):
    folder = lmu_root / "images" / "T"
    folder.mkdir(parents=True)
    (folder / "0.jpg").write_bytes(b"left over from an older TSV")
    ds = dataset(lmu_root, [row(0, b64(RED_JPEG))])
    assert Path(ds.image_paths(0)[0]).read_bytes() == RED_JPEG


def test_rows_without_images_and_existing_files(lmu_root, tmp_path):
    outside = tmp_path / "elsewhere" / "abs.png"
    outside.parent.mkdir()
    outside.write_bytes(BLUE_PNG)
    (lmu_root / "images" / "T").mkdir(parents=True)
    (lmu_root / "images" / "T" / "rel.jpg").write_bytes(RED_JPEG)
    rows = [row(0), row(1, image_path="rel.jpg"), row(2, image_path=str(outside)), row(3, b64(RED_JPEG))]
    ds = dataset(lmu_root, rows)
    assert ds.build_prompt(0) == [{"type": "text", "value": "Question 0?"}]
    assert ds.image_paths(1) == [str((lmu_root / "images" / "T" / "rel.jpg").resolve())]
    assert ds.image_paths(2) == [str(outside)]


def test_image_path_only_row_with_missing_file_names_it(lmu_root):
    write_tsv(lmu_root / "P.tsv", [{"index": 0, "image_path": "nowhere.jpg", "question": "Q", "answer": "no"}])
    ds = ImageYORNDataset("P", root=lmu_root, progress=False)
    with pytest.raises(DatasetError, match=r"P\.tsv: row 0 \(index 0\), field image_path: .*'nowhere\.jpg'"):
        ds.prepare_images()


def test_a_tsv_without_image_columns_is_text(lmu_root):
    write_tsv(lmu_root / "N.tsv", [{"index": 0, "question": "Q", "answer": "no"}])
    ds = ImageYORNDataset("N", root=lmu_root, progress=False)
    assert ds.build_prompt(0) == [{"type": "text", "value": "Q"}]  # issue 24: text, not a missing `image` column
    assert ds.image_paths(0) == [] and not (lmu_root / "images").exists()


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"image_path": "../escape.jpg"}, "image_path"),
        ({"image_path": "sub/../../escape.jpg"}, "image_path"),
        ({"image_path": "ABSOLUTE"}, "image_path"),
        ({"index": "../escape"}, "index"),
        ({"index": "a/b"}, "index"),
    ],
)
def test_nothing_is_written_outside_the_image_folder(lmu_root, tmp_path, bad, field):
    if bad.get("image_path") == "ABSOLUTE":
        bad = {"image_path": str(tmp_path / "escape.jpg")}
    rows = [row(0, b64(RED_JPEG)), {**row(1, b64(BLUE_PNG)), **bad}]
    ds = dataset(lmu_root, rows)
    with pytest.raises(DatasetError, match=rf"T\.tsv: row 1 \(index .*\), field {field}"):
        ds.prepare_images()
    written = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    assert written <= {"LMUData/T.tsv", "LMUData/images/T/0.jpg", f"LMUData/images/T/{MANIFEST_NAME}"}


def test_broken_base64_names_file_row_and_field(lmu_root):
    ds = dataset(lmu_root, [row(10, b64(RED_JPEG)), row(11, "%%%not-base64%%%" * 10)])
    with pytest.raises(DatasetError, match=r"T\.tsv: row 1 \(index 11\), field image: not valid base64"):
        ds.prepare_images()


def test_base64_of_something_that_is_not_an_image_names_the_row(lmu_root):
    ds = dataset(lmu_root, [row(4, b64(b"just some text, long enough to not be an index reference" * 3))])
    with pytest.raises(DatasetError, match=r"row 0 \(index 4\), field image: not a readable image"):
        ds.prepare_images()


def test_broken_element_of_a_list_names_its_position(lmu_root):
    ds = dataset(lmu_root, [row(0, json.dumps([b64(RED_JPEG), "@" * 100]))])
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field image\[1\]"):
        ds.prepare_images()


def test_duplicate_index_is_refused_on_load(lmu_root):
    with pytest.raises(DatasetError, match=r"T\.tsv: row 1, field index: 7 repeats row 0"):
        dataset(lmu_root, [row(7, b64(RED_JPEG)), row(7, b64(BLUE_PNG))])
