"""Issue 25, flat memory: what a loaded TSVDataset holds beside its table is a few bytes a row, not a key string, a
dict entry and an empty list a row (about 220 bytes a row before), and `evaluate` leaves the caller's table as it was
without copying it. Memory is asserted by what is held (deep sizes of the structures), never by time."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.mcq import ImageMCQDataset

from tests.support.tsvs import write_tsv

N_ROWS = 20_000
# an int64 Index: 8 bytes of values and a hash table of 16-byte buckets at most half empty (<= 32 a row); before,
# a key string, a dict entry, an empty image list and a record dict a row held ~670 bytes a row
ALLOWED_BYTES_A_ROW = 64


def _deep_size(value: Any, seen: set[int]) -> int:
    """Bytes held by a value and what it refers to (lists, tuples, dicts, sets, numpy arrays, pandas objects; an
    Index's memory_usage counts its hash table once a lookup has built it)."""
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, (pd.Index, pd.Series, pd.DataFrame)):
        usage = value.memory_usage(deep=True)
        return int(usage.sum() if hasattr(usage, "sum") else usage)
    if isinstance(value, np.ndarray):
        return value.nbytes
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(_deep_size(k, seen) + _deep_size(v, seen) for k, v in value.items())
    elif isinstance(value, (list, tuple, set, frozenset)):
        size += sum(_deep_size(v, seen) for v in value)
    return size


def _quiz(path: Path, n: int, index: Any = lambda i: i) -> Path:
    rows = [{"index": index(i), "question": f"Which colour is item {i}?", "A": "red", "B": "green", "C": "blue",
             "D": "grey", "answer": "ABCD"[i % 4]} for i in range(n)]
    return write_tsv(path, rows)


def _held_beside_table(dataset: ImageMCQDataset) -> int:
    seen = {id(dataset.data)}
    return sum(_deep_size(v, seen) for k, v in vars(dataset).items() if k not in ("data", "_lock"))


def test_a_text_dataset_holds_a_few_bytes_a_row_beside_its_table(tmp_path: Path) -> None:
    _quiz(tmp_path / "quiz.tsv", N_ROWS)
    dataset = ImageMCQDataset("quiz", root=tmp_path, progress=False)
    assert dataset.build_prompt(dataset.line(N_ROWS - 1))[-1]["value"].startswith("Question: Which colour is item")
    assert dataset.image_paths(N_ROWS // 2) == []  # a text row has no images, and no list a row says so
    held = _held_beside_table(dataset)
    assert held / N_ROWS < ALLOWED_BYTES_A_ROW, f"{held / N_ROWS:.0f} bytes a row"


def test_rows_are_found_by_any_spelling_of_an_integer_index(tmp_path: Path) -> None:
    _quiz(tmp_path / "quiz.tsv", 50, index=lambda i: 1000 + 3 * i)
    dataset = ImageMCQDataset("quiz", root=tmp_path, progress=False)
    for given, pos in ((1000, 0), (1003.0, 1), (" 1006 ", 2), ("1.009e3", 3), (np.int64(1147), 49)):
        line = {**dataset.line(pos), "index": given}
        assert dataset.build_prompt(line) == dataset.build_prompt(pos)
    for absent in (1001, "1003.5", "abc", 10**18):
        with pytest.raises(DatasetError, match="no row with index"):
            dataset.build_prompt({**dataset.line(0), "index": absent})
    with pytest.raises(DatasetError, match=r"row 2 \(index 1006\), field question: empty"):
        dataset.build_prompt({"index": 1006})


def test_text_indices_are_found_as_before(tmp_path: Path) -> None:
    _quiz(tmp_path / "quiz.tsv", 30, index=lambda i: f"q-{i}")
    dataset = ImageMCQDataset("quiz", root=tmp_path, progress=False)
    assert dataset.build_prompt({**dataset.line(7), "index": " q-7 "}) == dataset.build_prompt(7)
    with pytest.raises(DatasetError, match=r"row 4 \(index q-4\), field question: empty"):
        dataset.build_prompt({"index": "q-4"})


@pytest.mark.parametrize("index", [lambda i: i % 5 + 10 * (i // 5 == 1), lambda i: f"k{i % 5 + 10 * (i // 5 == 1)}"])
def test_a_repeated_index_names_its_row_and_the_row_it_repeats(tmp_path: Path, index: Any) -> None:
    # indices 0..4, 10..14, 0..4: row 10 (index 0 again) is the first repeat, of row 0
    _quiz(tmp_path / "quiz.tsv", 15, index=index)
    with pytest.raises(DatasetError, match=r"quiz.tsv: row 10, field index: k?0 repeats row 0$"):
        ImageMCQDataset("quiz", root=tmp_path, progress=False)


def test_evaluate_leaves_the_callers_table_unchanged(tmp_path: Path) -> None:
    _quiz(tmp_path / "quiz.tsv", 40)
    dataset = ImageMCQDataset("quiz", root=tmp_path, progress=False)
    predictions = dataset.data.copy()
    # the right letter on every third row (0, 3, ..., 39: 14 rows), the next letter elsewhere
    predictions["prediction"] = ["ABCD"[i % 4] if i % 3 == 0 else "ABCD"[(i + 1) % 4] for i in range(40)]
    before = predictions.copy(deep=True)
    result = dataset.evaluate(predictions)
    pd.testing.assert_frame_equal(predictions, before)
    assert result.counts["hits"] == 14
