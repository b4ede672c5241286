"""datasets_tsv.io.tsv_read, round 4 of mutation testing (issue 31): lines of one space or a space then text in the
cell cutter (pandas' read_csv is the reference), a read that raises no warning, text that holds undecodable bytes
(surrogateescape) coming back from parse_table as it went in, the file named when pandas finds no column, and
the sharing of repeated texts at its edges (a property: equal texts are one object, values unchanged)."""

from __future__ import annotations

import io
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.io.tsv_read import (
    DatasetError,
    _shared_texts,
    iter_cells,
    iter_records,
    parse_table,
    read_table,
)


def _pandas_rows(data: bytes) -> list[list[str]]:
    """Every record as pandas reads the TSV (all text, a missing cell "")."""
    table = pd.read_csv(io.BytesIO(data), sep="\t", dtype=str, keep_default_na=False)
    return table.values.tolist()


@pytest.mark.parametrize("line", [b" ", b"  ", b" \r"])
def test_a_line_of_one_or_more_spaces_is_blank_to_the_cell_cutter(tmp_path: Path, line: bytes) -> None:
    data = b"index\timage\n0\ta\n" + line + b"\n1\tb\n"
    assert _pandas_rows(data) == [["0", "a"], ["1", "b"]]
    cells = list(iter_cells(tmp_path / "t.tsv", ("index", "image"), [data])[1])
    assert cells == [[b"0", b"a"], [b"1", b"b"]]


@pytest.mark.parametrize("first", [b" X", b" XX", b"  X "])
def test_a_line_starting_with_a_space_then_text_is_a_record(tmp_path: Path, first: bytes) -> None:
    data = b"index\timage\n0\ta\n" + first + b"\n1\tb\n"
    assert _pandas_rows(data) == [["0", "a"], [first.decode(), ""], ["1", "b"]]
    cells = list(iter_cells(tmp_path / "t.tsv", ("index", "image"), [data])[1])
    assert cells == [[b"0", b"a"], [first, b""], [b"1", b"b"]]


def test_reading_a_file_raises_no_warning(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_bytes(b"index\tq\n0\ta\n1\tb\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        header, records = iter_records(path)
        assert (header, list(records)) == (["index", "q"], [[b"0", b"a"], [b"1", b"b"]])
        assert read_table(path)["q"].tolist() == ["a", "b"]


def test_undecodable_bytes_in_the_text_come_back_as_they_went_in(tmp_path: Path) -> None:
    # "\udcff" is how surrogateescape holds the byte 0xff that is not UTF-8: parse_table reads it back unchanged
    text = "index\tq\tnote\n1\tcaf\udce9\tplain\n2\t\udcff\udcfe\tx\n"
    table = parse_table(text, tmp_path / "t.tsv", text_columns=frozenset({"q"}))
    assert table["q"].tolist() == ["caf\udce9", "\udcff\udcfe"]
    assert table["note"].tolist() == ["plain", "x"] and table["index"].tolist() == [1, 2]


def test_an_empty_file_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "empty.tsv"
    path.write_bytes(b"")
    with pytest.raises(DatasetError, match="^" + re.escape(f"{path}: cannot read as a TSV (") + r".+\)$"):
        read_table(path)


def _fresh(values: list[str]) -> list[str]:
    """The same texts as distinct objects (as a parser makes them, one per cell)."""
    return ["".join([v[:1], v[1:]]) for v in values]


@pytest.mark.parametrize("dtype", [object, "str"])
@pytest.mark.parametrize(
    "rows, distinct",
    [(1000, 2), (1000, 500), (1001, 500), (2000, 1000), (3000, 3)],
)
def test_a_long_column_of_repeated_texts_holds_each_text_once(dtype, rows: int, distinct: int) -> None:
    values = _fresh([f"option {i % distinct}" for i in range(rows)])
    assert len({id(v) for v in values}) == rows
    table = pd.DataFrame({"n": range(rows), "text": pd.Series(values, dtype=dtype)})
    before = table.copy()
    shared = _shared_texts(table)
    pd.testing.assert_frame_equal(shared, before)  # values, dtypes, names and index unchanged
    assert len({id(v) for v in shared["text"]}) == distinct


@pytest.mark.parametrize("rows, distinct", [(1000, 501), (1001, 501), (2000, 1001)])
def test_a_mostly_distinct_column_is_left_as_it_is(rows: int, distinct: int) -> None:
    values = _fresh([f"question {i}" if i < distinct else "question 0" for i in range(rows)])
    table = pd.DataFrame({"text": pd.Series(values, dtype=object)})
    shared = _shared_texts(table)
    assert shared["text"].tolist() == values
    assert len({id(v) for v in shared["text"]}) == rows  # no work done: still one object per cell
