"""The image pass's fast paths give what the general ones give: the cells cut from a line by `iter_cells` are the
fields `iter_records` splits, a plain file name skips `contained_child` only where that would answer the same, and
`write_bytes_atomic` returns the stat of the file it wrote."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.io.image_manifest import MANIFEST_NAME
from datasets_tsv.kinds.yorn import ImageYORNDataset
from datasets_tsv.io.images import _CELLS
from datasets_tsv.io.tsv_read import cell, iter_cells, iter_records
from vlmkit.core.files import contained_child, write_bytes_atomic

from tests.support.tsvs import b64, image_bytes, write_tsv

RED_JPEG = image_bytes("red", "JPEG")
BLUE_PNG = image_bytes("blue", "PNG")
GREEN_GIF = image_bytes("green", "GIF")

# every way a line can be cut: quoted fields (one spanning lines, one with a tab), blank lines, CRLF and lone CR
# endings, a short row, a long row, empty cells, trailing tabs, a BOM, a column named twice, non-ASCII text
TRICKY = (
    "\ufeffindex\tquestion\timage\tindex\timage_path\textra\r\n"
    "0\tplain\tQUJD\t00\ta.jpg\tx\n"
    "\n"
    '1\t"quoted\nover two lines"\tREVG\t01\t\t\r\n'
    "2\tshort\r\n"
    "\r\n"
    '3\t"tab\tinside"\tR0hJ\t03\t"[""b.jpg""]"\ty\n'
    "4\t\t\t04\t\t\t\t\n"
    "6\tcaf\u00e9 \u00e0 la carte\tTU5P\t06\t\tlast\rmore\n"
    "5\tno newline at the end\tSktM\t05\tc.png\tz"
).encode()


def picked(header: list[str], records, names=_CELLS) -> list[list[bytes]]:
    columns = {name: i for i, name in enumerate(header)}
    return [[cell(record, columns.get(name)) for name in names] for record in records]


@pytest.mark.parametrize("block", [1, 3, 7, 64, 1 << 22])
@pytest.mark.parametrize("names", [_CELLS, ("image_path", "missing", "question", "extra")])
def test_iter_cells_gives_the_fields_iter_records_splits(tmp_path, block, names):
    tsv = tmp_path / "t.tsv"
    tsv.write_bytes(TRICKY)
    blocks = [TRICKY[i:i + block] for i in range(0, len(TRICKY), block)]
    header, records = iter_records(tsv)
    expected = picked(header, records, names)
    cells_header, cells = iter_cells(tsv, names, iter(blocks))
    assert cells_header == header
    assert list(cells) == expected
    assert len(expected) == 7 and expected[0][0] != b""  # the rows are all there, the blank lines skipped


def row(index, image="", **more) -> dict:
    return {"index": index, "image": image, "question": f"Question {index}?", "answer": "yes", **more}


def test_rows_cut_by_find_and_rows_read_by_csv_decode_alike(lmu_root):
    """A JSON list cell is quoted (the csv path), a Python-literal one is not (the find path); a question with a
    quote sends its row through csv too. Every file is the original bytes, shared images by index included."""
    rows = [
        row(0, b64(RED_JPEG)),
        row(1, json.dumps([b64(BLUE_PNG), b64(GREEN_GIF)])),
        row(2, str([b64(GREEN_GIF), b64(RED_JPEG)])),
        {**row(3, b64(BLUE_PNG)), "question": 'Say "cheese"?'},
        row(4, "0"),
        row(5, "2"),
    ]
    write_tsv(lmu_root / "T.tsv", rows)
    assert b'"' not in (lmu_root / "T.tsv").read_bytes().splitlines()[3]  # row 2: the find path indeed
    ds = ImageYORNDataset("T", root=lmu_root, progress=False)
    folder = (lmu_root / "images" / "T").resolve()
    expected = {
        0: [("0.jpg", RED_JPEG)],
        1: [("1_0.png", BLUE_PNG), ("1_1.gif", GREEN_GIF)],
        2: [("2_0.gif", GREEN_GIF), ("2_1.jpg", RED_JPEG)],
        3: [("3.png", BLUE_PNG)],
        4: [("0.jpg", RED_JPEG)],
        5: [("2_0.gif", GREEN_GIF), ("2_1.jpg", RED_JPEG)],
    }
    for pos, files in expected.items():
        assert ds.image_paths(pos) == [str(folder / name) for name, _ in files]
        assert [Path(p).read_bytes() for p in ds.image_paths(pos)] == [data for _, data in files]


def test_a_plain_name_that_is_a_symlink_goes_through_contained_child(lmu_root, tmp_path):
    """The pass lists the folder's symlinks once; a file name that is one is resolved (or refused) exactly as
    `contained_child` does, so nothing is written through it."""
    folder = lmu_root / "images" / "T"
    folder.mkdir(parents=True)
    (folder / "real.png").write_bytes(BLUE_PNG)
    os.symlink(folder / "real.png", folder / "1.png")  # inside the folder: resolved to its target
    write_tsv(lmu_root / "T.tsv", [row(0, b64(RED_JPEG)), row(1, b64(BLUE_PNG))])
    ds = ImageYORNDataset("T", root=lmu_root, progress=False)
    base = folder.resolve()
    assert ds.image_paths(1) == [str(contained_child(base, "1.png"))] == [str(base / "real.png")]
    assert ds.image_paths(0) == [str(contained_child(base, "0.jpg"))] == [str(base / "0.jpg")]

    outside = tmp_path / "outside.jpg"
    outside.write_bytes(b"mine")
    other = lmu_root / "images" / "U"
    other.mkdir()
    os.symlink(outside, other / "0.jpg")  # out of the folder: refused, the file there untouched
    write_tsv(lmu_root / "U.tsv", [row(0, b64(RED_JPEG))])
    with pytest.raises(DatasetError, match=r"U\.tsv: row 0 \(index 0\), field index: .*refusing to write outside"):
        ImageYORNDataset("U", root=lmu_root, progress=False).prepare_images()
    assert outside.read_bytes() == b"mine"
    assert (other / "0.jpg").is_symlink() and {p.name for p in other.iterdir()} <= {"0.jpg", MANIFEST_NAME}


def test_write_bytes_atomic_returns_the_stat_of_what_it_wrote(tmp_path):
    target = tmp_path / "new" / "deeper" / "x.bin"  # missing folders are made
    data = base64.b64decode(b64(RED_JPEG)) * 1000
    written = write_bytes_atomic(target, data)
    now = os.stat(target)
    assert target.read_bytes() == data
    assert (written.st_size, written.st_mtime_ns, written.st_ino) == (now.st_size, now.st_mtime_ns, now.st_ino)
    again = write_bytes_atomic(str(target), b"short")  # a str path too, replacing the file
    assert target.read_bytes() == b"short" and again.st_size == 5 and again.st_ino == os.stat(target).st_ino
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.bin"]  # no temporary file left
