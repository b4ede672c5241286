"""datasets_tsv.io.tsv_read against a second reader: random TSVs (quoted fields holding tabs, quotes and newlines,
CRLF, blank lines, a BOM, long cells, short rows), read whole by pandas.read_csv as the reference, and streamed by
vlmkit from blocks of every size (1 byte up), so that lines and quoted fields run across block ends. Also the one-line
errors, list cells, and the shared text values of large tables (a property: equal texts are one object)."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.io.tsv_read import (
    FIELD_LIMIT,
    DatasetError,
    cell,
    csv_reader,
    iter_cells,
    iter_records,
    parse_list,
    parse_table,
    read_header,
    read_table,
    table_text,
)

HEADER = ["index", "image", "question", "answer", "note"]
PIECES = ["cat", "a dog", "", "42", "3.5", "say \"hi\"", "tab\there", "two\nlines", "café 中文", " padded ",
          "x" * 3000, "ends with space ", "\"quoted whole\"", "a\r\nb"]


def _field(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3)))


PLAIN = [p for p in PIECES if not any(c in p for c in "\"\t\n\r")]


def _encode(value: str, rng: random.Random) -> str:
    """A field as a TSV writer quotes it (always where it must, sometimes where it need not)."""
    if any(c in value for c in "\"\t\n\r") or (value and rng.random() < 0.2):
        return '"' + value.replace('"', '""') + '"'
    return value


def _random_tsv(seed: int) -> tuple[bytes, list[list[str]]]:
    """(file bytes, the rows as written: header first); some rows short, blank lines between some. Odd seeds write
    no quote at all (every line then takes the reader's fast path), some rows with an empty first field."""
    rng = random.Random(seed)
    plain = seed % 2 == 1
    newline = rng.choice(["\n", "\r\n"])
    rows = [HEADER]
    lines = ["\t".join(HEADER)]
    for i in range(rng.randint(1, 12)):
        n = len(HEADER) if rng.random() < 0.8 else rng.randint(2, len(HEADER) - 1)
        if plain:
            first = "" if rng.random() < 0.2 else str(i)
            row = [first] + ["".join(rng.choice(PLAIN) for _ in range(rng.randint(1, 3))) for _ in range(n - 1)]
            if not any(row):
                row[1] = "x"
            rows.append(row)
            lines.append("\t".join(row))
            continue
        row = [str(i)] + [_field(rng) for _ in range(n - 1)]
        if not any(row[1:]) and n < len(HEADER):
            row[1] = "x"
        rows.append(row)
        lines.append("\t".join(_encode(v, rng) for v in row))
        if rng.random() < 0.2:
            lines.append("")  # a blank line: skipped
    text = newline.join(lines) + (newline if rng.random() < 0.7 else "")
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data if rng.random() < 0.3 else data), rows


def _reference(data: bytes) -> pd.DataFrame:
    """pandas' reading of the whole file, every cell as text, a missing one ""."""
    return pd.read_csv(io.BytesIO(data), sep="\t", dtype=str, keep_default_na=False, na_filter=False,
                       encoding="utf-8-sig").fillna("")


def _blocks(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


SEEDS = range(40)
SIZES = (1, 2, 7, 100, 4096)


@pytest.mark.parametrize("seed", SEEDS)
def test_records_from_blocks_of_any_size_are_the_rows_pandas_reads(tmp_path: Path, seed: int):
    data, _ = _random_tsv(seed)
    path = tmp_path / "t.tsv"
    path.write_bytes(data)
    reference = _reference(data)
    expected = [[str(v) for v in row] for row in reference.itertuples(index=False)]
    assert read_header(path) == HEADER == list(reference.columns)
    for size in (None, *SIZES):
        header, records = iter_records(path, None if size is None else _blocks(data, size))
        got = [[f.decode("utf-8") for f in r] + [""] * (len(header) - len(r)) for r in records]
        assert header == HEADER and got == expected, f"blocks of {size}"


@pytest.mark.parametrize("seed", SEEDS)
def test_cells_cut_from_blocks_are_the_named_columns_in_order(tmp_path: Path, seed: int):
    data, _ = _random_tsv(seed)
    path = tmp_path / "t.tsv"
    reference = _reference(data)
    names = ("note", "index", "missing", "image")
    for size in SIZES:
        header, records = iter_cells(path, names, _blocks(data, size))
        got = [[f.decode("utf-8") for f in r] for r in records]
        expected = [[row[n] if n in reference.columns else "" for n in names] for _, row in reference.iterrows()]
        assert header == HEADER and got == expected, f"blocks of {size}"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_table_without_its_image_column_is_what_pandas_reads(tmp_path: Path, seed: int):
    data, _ = _random_tsv(seed)
    path = tmp_path / "t.tsv"
    path.write_bytes(data)
    text = frozenset({"question", "answer", "note"})
    ours = read_table(path, text_columns=text)
    reference = ours
    theirs = pd.read_csv(io.BytesIO(data), sep="\t", usecols=[c for c in HEADER if c != "image"], encoding="utf-8-sig",
                         dtype={c: str for c in text}, keep_default_na=False, na_values=[""])
    pd.testing.assert_frame_equal(ours, theirs)
    # skipping the image column unless told otherwise
    assert table_text(path).split("\n", 1)[0] == "index\tquestion\tanswer\tnote"
    assert list(parse_table(table_text(path, skip="note"), path).columns) == ["index", "image", "question", "answer"]
    assert list(read_table(path, skip="question").columns) == ["index", "image", "answer", "note"]
    # from blocks, the file itself not read (it is gone)
    expected = table_text(path)
    path.unlink()
    assert table_text(path, blocks=_blocks(data, 3)) == expected
    header, records = iter_records(path, _blocks(data, 64))
    assert header == HEADER and len(list(records)) == len(reference)


def test_a_trailing_tab_is_an_empty_last_field_and_spaces_stay(tmp_path: Path):
    path = tmp_path / "t.tsv"
    data = b"index\tq\ta\n1\t  spaced  \t\n2\t\"quoted \"\t \r\n"
    path.write_bytes(data)
    _, records = iter_records(path)
    assert list(records) == [[b"1", b"  spaced  ", b""], [b"2", b"quoted ", b" "]]
    _, records = iter_cells(path, ("a", "q"), _blocks(data, 5))
    assert list(records) == [[b"", b"  spaced  "], [b" ", b"quoted "]]


def test_bytes_that_are_not_utf8_come_back_as_they_were_in_a_quoted_line(tmp_path: Path):
    # the image column is never decoded: its bytes, on a line the csv module reads, are kept byte for byte
    path = tmp_path / "t.tsv"
    raw = b"\xff\xfe\x80abc"
    path.write_bytes(b"index\timage\tq\n1\t" + raw + b"\t\"a \"\"q\"\"\"\n2\t\"" + raw + b"\n" + raw + b"\"\tq\n")
    _, records = iter_records(path)
    assert list(records) == [[b"1", raw, b'a "q"'], [b"2", raw + b"\n" + raw, b"q"]]
    assert read_table(path)["q"].tolist() == ['a "q"', "q"]


def test_a_header_that_is_not_utf8_names_the_file_and_the_header(tmp_path: Path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"index\tqu\xe9stion\n1\tq\n")
    with pytest.raises(DatasetError, match=r"t\.tsv: row header, field : not UTF-8 \(invalid continuation byte at "
                                           r"byte 2\)"):
        read_header(path)


def test_blank_files_and_blank_lines(tmp_path: Path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"")
    assert read_header(path) == [] and iter_records(path)[0] == []
    path.write_bytes(b"\n\r\n\nindex\tq\n\n1\ta\n\r\n")
    assert read_header(path) == ["index", "q"]
    assert list(iter_records(path)[1]) == [[b"1", b"a"]]
    # a line holding only an empty quoted field is blank to pandas too
    path.write_bytes(b'index\tq\n""\n1\ta\n')
    assert list(iter_records(path)[1]) == [[b"1", b"a"]]


def test_too_many_fields_name_the_row_but_empty_extra_fields_do_not(tmp_path: Path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"index\tq\n0\ta\n1\tb\t\t\n2\tc\tsurplus\n")
    with pytest.raises(DatasetError, match=r"t\.tsv: row 2 has 3 fields but the header has 2"):
        table_text(path)
    path.write_bytes(b"index\tq\n0\ta\n1\tb\t\t\n")
    assert table_text(path) == "index\tq\n0\ta\n1\tb\n"


def test_a_table_pandas_cannot_read_is_one_line_naming_the_file(tmp_path: Path):
    with pytest.raises(DatasetError, match=r"t\.tsv: cannot read as a TSV"):
        parse_table("", tmp_path / "t.tsv")


def test_the_reader_takes_cells_longer_than_the_csv_modules_default(tmp_path: Path):
    before = csv.field_size_limit()
    try:
        csv.field_size_limit(1000)
        long = "y" * 5000
        assert next(csv_reader(io.StringIO(f'"{long}"\tb\n'))) == [long, "b"]
        assert csv.field_size_limit() == FIELD_LIMIT
        assert next(csv_reader(io.StringIO("a,b\n"), delimiter=",")) == ["a", "b"]
        # quoting as asked: QUOTE_NONE keeps the quotes
        assert next(csv_reader(io.StringIO('"a"\tb\n'), quoting=csv.QUOTE_NONE)) == ['"a"', "b"]
    finally:
        csv.field_size_limit(before)


def test_cells_of_short_rows_and_absent_columns_are_empty():
    record = [b"a", b"b"]
    assert [cell(record, c) for c in (0, 1, 2, None)] == [b"a", b"b", b"", b""]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('["a", "b"]', ["a", "b"]),
        ("['a', 'b c']", ["a", "b c"]),
        ("  [\"x\"]  ", ["x"]),
        ("[]", []),
        ("[1, 2]", None),
        ("['a', 2]", None),
        ("a, b", None),
        ("[unclosed", None),
        ("[" * 200 + "]" * 200, None),
        ('{"a": 1}', None),
    ],
)
def test_list_cells(text: str, expected: list[str] | None):
    assert parse_list(text) == expected


def test_repeated_texts_of_a_large_table_are_held_once_and_read_the_same(tmp_path: Path):
    rows = 2000
    options = ["red", "green", "blue", "a much longer option text"]
    lines = ["index\toption\tquestion\tcount"]
    lines += [f"{i}\t{options[i % 4]}\tquestion number {i}\t{i % 7}" for i in range(rows)]
    text = "\n".join(lines) + "\n"
    table = parse_table(text, tmp_path / "t.tsv", text_columns=frozenset({"option"}))
    reference = pd.read_csv(io.StringIO(text), sep="\t", dtype={"option": str}, keep_default_na=False, na_values=[""])
    pd.testing.assert_frame_equal(table, reference)
    # equal option texts are one object each; mostly distinct questions are left as they are
    assert len({id(v) for v in table["option"]}) == 4
    assert len({id(v) for v in table["question"]}) == rows
    # a small table is left as the parser made it
    small = parse_table("\n".join(lines[:11]) + "\n", tmp_path / "t.tsv")
    assert small["option"].tolist() == [options[i % 4] for i in range(10)]


def test_cells_of_only_absent_columns_are_empty(tmp_path: Path):
    data = b"index\tq\n1\ta\n2\tb\n"
    header, records = iter_cells(tmp_path / "t.tsv", ("missing", "other"), _blocks(data, 4))
    assert header == ["index", "q"] and list(records) == [[b"", b""], [b"", b""]]
    header, records = iter_cells(tmp_path / "t.tsv", ("q",), [])
    assert header == [] and list(records) == []


def test_an_empty_first_field_and_short_rows_on_the_fast_path(tmp_path: Path):
    data = b"index\timage\tq\n\tIMG\tfirst empty\n\t\t\n7\tIMG\n"
    _, records = iter_cells(tmp_path / "t.tsv", ("q", "index", "image"), _blocks(data, 5))
    assert list(records) == [[b"first empty", b"", b"IMG"], [b"", b"", b""], [b"", b"7", b"IMG"]]


def test_lines_of_x_and_fields_ending_in_x_are_kept_whole(tmp_path: Path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"index\nX\nXX\n")
    assert [r for r in iter_records(path)[1]] == [[b"X"], [b"XX"]]
    path.write_bytes(b"index\tq\n1\tboX\n2\t\"quoted\"X\n")
    assert [r for r in iter_records(path)[1]] == [[b"1", b"boX"], [b"2", b"quotedX"]]


def test_a_line_of_spaces_and_a_tab_is_a_row_as_pandas_reads_it(tmp_path: Path):
    path = tmp_path / "t.tsv"
    data = b"index\tq\n \t \n1\ta\n"
    path.write_bytes(data)
    assert list(iter_records(path)[1]) == [[b" ", b" "], [b"1", b"a"]]
    assert list(iter_cells(path, ("q",), [data])[1]) == [[b" "], [b"a"]]
    assert _reference(data).values.tolist() == [[" ", " "], ["1", "a"]]


def test_a_line_of_spaces_alone_is_blank_as_pandas_reads_it(tmp_path: Path):
    path = tmp_path / "t.tsv"
    data = b"index\tq\n   \r\n1\ta\n"
    path.write_bytes(data)
    assert _reference(data).values.tolist() == [["1", "a"]]
    assert list(iter_records(path)[1]) == [[b"1", b"a"]]
    assert list(iter_cells(path, ("q",), [data])[1]) == [[b"a"]]


def test_a_quoted_header_field_holding_a_line_break(tmp_path: Path):
    path = tmp_path / "t.tsv"
    data = b'index\t"an\nswer"\n1\t"007"\n2\t8\n'
    path.write_bytes(data)
    assert read_header(path) == ["index", "an\nswer"]
    assert iter_cells(path, ("an\nswer",), _blocks(data, 3))[0] == ["index", "an\nswer"]
    # the header's names decide which columns stay text
    table = read_table(path, text_columns=frozenset({"an\nswer"}))
    assert table["an\nswer"].tolist() == ["007", "8"]


def test_a_header_that_is_not_utf8_is_named_by_every_reader(tmp_path: Path):
    path = tmp_path / "t.tsv"
    data = b"index\tqu\xe9stion\n1\tq\n"
    path.write_bytes(data)
    for read in (lambda: iter_records(path), lambda: iter_records(path, [data]),
                 lambda: iter_cells(path, ("index",), [data])):
        with pytest.raises(DatasetError, match=r"t\.tsv: row header, field : not UTF-8"):
            read()


def test_texts_pandas_would_read_as_missing_stay_texts(tmp_path: Path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"index\tanswer\tnote\n1\tNA\tNone\n2\tnull\tN/A\n3\t\tnan\n")
    table = read_table(path, text_columns=frozenset({"answer"}))
    assert table["answer"].tolist()[:2] == ["NA", "null"] and pd.isna(table["answer"].tolist()[2])
    assert table["note"].tolist() == ["None", "N/A", "nan"]


def test_a_table_longer_than_the_parsers_chunks_holds_each_repeated_text_once(tmp_path: Path):
    # pandas parses 300,000 rows in several chunks and makes one object per distinct text per chunk (8 here for 4
    # texts); the table keeps one object per text, values and dtypes unchanged
    rows = 300_000
    options = ["red", "green", "blue", "a much longer option text"]
    # a mostly distinct column (left as it is) before the repeated one
    text = "index\tquestion\toption\n" + "".join(f"{i}\tq{i}\t{options[i % 4]}\n" for i in range(rows))
    table = parse_table(text, tmp_path / "t.tsv")
    reference = pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=False, na_values=[""])
    assert len({id(v) for v in reference["option"]}) > 4  # what the parser alone gives
    pd.testing.assert_frame_equal(table, reference)
    assert len({id(v) for v in table["option"]}) == 4
