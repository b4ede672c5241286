"""The streaming TSV reader agrees with pandas.read_csv on quoting, line endings, BOM and blank lines."""

from __future__ import annotations

import pandas as pd
import pytest

from datasets_tsv.kinds.base import DatasetError
from datasets_tsv.kinds.vqa import ImageVQADataset
from datasets_tsv.io.tsv_read import iter_records, read_table

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())
TRICKY = (
    "index\timage\tquestion\tanswer\n"
    f'0\t{JPEG}\t"multi\nline ""quoted""\tquestion"\tA\n'
    f"1\t{JPEG}\ta 5\" screen, unquoted\tB\n"
    "\n"
    f'2\t{JPEG}\t"tab\tinside"\t"C"\n'
    f"3\t{JPEG}\tplain\t\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", [False, True])
def test_read_table_matches_pandas(tmp_path, newline, bom):
    path = tmp_path / "t.tsv"
    text = TRICKY.replace("\n", newline) if newline == "\r\n" else TRICKY
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    ours = read_table(path, text_columns=frozenset({"question", "answer"}))
    theirs = pd.read_csv(path, sep="\t", usecols=["index", "question", "answer"], encoding="utf-8-sig",
                         dtype={"question": str, "answer": str}, keep_default_na=False, na_values=[""])
    pd.testing.assert_frame_equal(ours, theirs)
    header, records = iter_records(path)
    assert header == ["index", "image", "question", "answer"]
    assert [r[1].decode() for r in records] == [JPEG] * 4


def test_tsv_changed_after_loading_is_noticed(lmu_root):
    write_tsv(lmu_root / "V.tsv", [{"index": i, "image": JPEG, "question": "q", "answer": "a"} for i in range(3)])
    ds = ImageVQADataset("V", root=lmu_root, progress=False)
    write_tsv(lmu_root / "V.tsv", [{"index": i, "image": JPEG, "question": "q", "answer": "a"} for i in (0, 2, 1)])
    with pytest.raises(DatasetError, match=r"row 1 \(index 2\): the rows changed"):
        ds.prepare_images()


def test_row_with_too_many_fields_is_an_error(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("index\tquestion\n0\tq\textra\n")
    with pytest.raises(DatasetError, match=r"t\.tsv: row 0 has 3 fields but the header has 2"):
        read_table(path)


def test_non_utf8_cell_names_row_and_field(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"index\tquestion\n0\tok\n1\tcaf\xe9\n")
    with pytest.raises(DatasetError, match=r"t\.tsv: row 1, field question: not UTF-8"):
        read_table(path)
