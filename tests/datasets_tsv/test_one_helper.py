"""One helper for one job: the dataset classes use vlmkit.core.cells for missing/blank cells, index keys and whole
numbers, and share one implementation of `line()` and `repr`."""

from __future__ import annotations

import numpy as np
import pytest

import datasets_tsv.kinds.base as base
import datasets_tsv.custom.fields as fields
import datasets_tsv.io.images as images
from datasets_tsv.kinds.base import DatasetError, TSVDataset
from datasets_tsv.custom import CustomDataError, CustomDataset, build_custom_dataset
from datasets_tsv.custom.fields import positive_int
from datasets_tsv.custom.meta import load_meta
from datasets_tsv.kinds.yorn import ImageYORNDataset
from datasets_tsv.io.table import TableRows
from vlmkit.core.cells import index_key

from tests.support.tsvs import b64, image_bytes, write_tsv


def test_no_second_copy_of_the_cell_helpers():
    assert not hasattr(base, "is_missing")
    assert images.index_key is index_key  # the one from vlmkit.core.cells, used, not redefined
    for name in ("is_blank", "listed"):
        assert not hasattr(fields, name) or getattr(fields, name).__module__ == "vlmkit.core.cells"
    assert TSVDataset.line is CustomDataset.line is TableRows.line
    assert TSVDataset.__repr__ is CustomDataset.__repr__ is TableRows.__repr__


@pytest.fixture
def tsv_dataset(lmu_root):
    write_tsv(lmu_root / "Keys.tsv", [
        {"index": i, "image": b64(image_bytes()), "question": q, "answer": "yes"}
        for i, q in [(3, "Three?"), (4, "   ")]
    ])
    return ImageYORNDataset("Keys", root=lmu_root, progress=False)


@pytest.mark.parametrize("given", [3, "3", "3.0", " 3 ", 3.0, np.int64(3)])
def test_a_row_is_found_by_every_form_of_its_index(tsv_dataset, tmp_path, given):
    assert tsv_dataset.image_paths({"index": given}) == tsv_dataset.image_paths(0)
    path = tmp_path / "rows.jsonl"
    path.write_text('{"index": 3, "question": "q", "answer": "a", "max_tokens": 7}\n')
    assert build_custom_dataset(path).generation_params({"index": given}) == {"max_tokens": 7}
    assert index_key(given) == "3"


def test_a_blank_required_text_is_missing(tsv_dataset):
    with pytest.raises(DatasetError, match=r"Keys\.tsv: row 1 \(index 4\), field question: empty"):
        tsv_dataset.build_prompt(1)


def test_both_dataset_kinds_print_alike(tsv_dataset, tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"question": "q", "answer": "a"}\n')
    assert repr(tsv_dataset) == f"ImageYORNDataset('Keys', rows=2, source={str(tsv_dataset.tsv_path)!r})"
    assert repr(build_custom_dataset(path)) == f"CustomDataset('rows', text/qa, rows=1, source={str(path)!r})"
    assert tsv_dataset.line(-1)["index"] == 4
    with pytest.raises(IndexError, match="Keys: row 2 out of range"):
        tsv_dataset.line(2)


@pytest.mark.parametrize("value, expected", [
    (5, 5), ("5", 5), (" 5 ", 5), ("+5", 5), (5.0, 5), (np.int64(5), 5),
    (0, None), ("0", None), (-2, None), (5.5, None), ("5.5", None), (True, None), ("²", None), ("five", None),
    (None, None),
])
def test_positive_int_is_built_on_whole_number(value, expected):
    assert positive_int(value) == expected
    assert positive_int(0, allow_zero=True) == 0


def test_odd_digit_characters_are_a_clear_error_not_a_crash(tmp_path):
    meta = tmp_path / "m.meta.json"
    meta.write_text('{"request_count": "²"}')  # str.isdigit() is True, int() fails: once a ValueError traceback
    with pytest.raises(CustomDataError, match=r"m\.meta\.json, field request_count: '²' is not a non-negative"):
        load_meta(meta)
    rows = tmp_path / "rows.csv"
    rows.write_text("question,answer,max_tokens\nq,a,²\n")
    with pytest.raises(CustomDataError, match=r"rows\.csv: line 2, field max_tokens: '²' is not a positive integer"):
        build_custom_dataset(rows)
