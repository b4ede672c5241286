"""vlmkit.outputs.xlsx against real readers: pandas.read_excel, openpyxl (normal and read-only) and ElementTree."""

from __future__ import annotations

import csv
import decimal
import itertools
import json
import math
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

from vlmkit.outputs.xlsx import column_letter, write_xlsx

LONG = ("0123456789abcdef" * 2048)[:32_767]
STRINGS = [
    "plain", "unicode é ß Ω", "中文 問題 答え", "emoji 🐱👍🏽", "<&>\"'", "  leading and trailing  ", "line\nbreak\n",
    "tab\there", LONG, "A", "007", "_x0041_ stays", "N/A", "   ",
]
PARTS = ["[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/styles.xml",
         "xl/worksheets/sheet1.xml"]  # fmt: skip


def _frame() -> pd.DataFrame:
    """Values that both writers store the same way (see the tests below for where they differ)."""
    n = len(STRINGS)
    floats = [0.1, 1e-300, 1 / 3, -2.5, 1e16, float("nan"), 123456.789, -0.0, 7.0, 1e-5, 2.0**-1074, 3.0, 0.5, 1e300]
    return pd.DataFrame({
        "index": np.arange(n, dtype=np.int64) * 1_000_003,
        "question": STRINGS,
        "prediction": [None, "B", "", float("nan"), *STRINGS[4:]],
        "score": floats[:n],
        "hit": [bool(i % 2) for i in range(n)],
        "mixed": [1, "x", 2.5, None, True, float("inf"), float("-inf"), np.int64(5), np.float64(0.25), "y", pd.NA,
                  np.bool_(False), 0, -7][:n],
    })


def _write_ours(path: Path, frame: pd.DataFrame) -> Path:
    write_xlsx(path, [str(c) for c in frame.columns], frame.to_numpy(dtype=object).tolist())
    return path


def test_pandas_reads_back_what_it_reads_from_pandas_own_file(tmp_path: Path) -> None:
    frame = _frame()
    frame.to_excel(tmp_path / "pandas.xlsx", index=False, engine="openpyxl")
    _write_ours(tmp_path / "ours.xlsx", frame)
    theirs = pd.read_excel(tmp_path / "pandas.xlsx")
    ours = pd.read_excel(tmp_path / "ours.xlsx")
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    # and what it reads is the table: exact floats, the 32,767-character cell whole, blanks/None/NaN missing
    assert ours["score"].tolist()[:5] == [0.1, 1e-300, 1 / 3, -2.5, 1e16]
    assert ours.loc[8, "question"] == LONG
    assert ours.loc[3, "question"] == "emoji 🐱👍🏽"
    assert ours.loc[5, "question"] == "  leading and trailing  "
    assert ours["prediction"].isna().tolist()[:4] == [True, False, True, True]
    assert ours["mixed"].tolist()[5:7] == ["inf", "-inf"]
    assert ours["index"].dtype == np.int64 and ours["hit"].dtype == bool


def test_numbers_round_trip_exactly_where_openpyxl_rounds_to_16_digits(tmp_path: Path) -> None:
    # openpyxl writes every number as "%.16g": 2**53 + 1 comes back as 2**53 and 0.1 + 0.2 as 0.3 from today's
    # file. vlmkit writes the digits of an int and repr() of a float, which read back exactly.
    frame = pd.DataFrame({"big": [2**53 + 1, 2**62 + 3], "f": [0.1 + 0.2, 1 - 2**-53]})
    frame.to_excel(tmp_path / "pandas.xlsx", index=False, engine="openpyxl")
    theirs = pd.read_excel(tmp_path / "pandas.xlsx")
    assert theirs["big"].tolist()[0] == 2**53 and theirs["f"].tolist()[0] == 0.3
    ours = pd.read_excel(_write_ours(tmp_path / "ours.xlsx", frame))
    pd.testing.assert_frame_equal(ours, frame, check_exact=True)
    sheet = openpyxl.load_workbook(tmp_path / "ours.xlsx").active
    assert [c.value for c in sheet["A"]][1:] == [2**53 + 1, 2**62 + 3]


def test_carriage_returns_are_kept(tmp_path: Path) -> None:
    # A raw CR in XML text is read as LF (openpyxl's own writer loses it that way unless lxml is installed); vlmkit
    # writes it as a character reference, so it comes back whatever parser reads the file.
    frame = pd.DataFrame({"text": ["a\rb", "c\r\nd"]})
    raw = _write_ours(tmp_path / "cr.xlsx", frame)
    with zipfile.ZipFile(raw) as book:
        sheet = book.read("xl/worksheets/sheet1.xml")
    assert b"\r" not in sheet and b"&#13;" in sheet
    assert pd.read_excel(_write_ours(tmp_path / "cr.xlsx", frame))["text"].tolist() == ["a\rb", "c\r\nd"]


@pytest.mark.parametrize("read_only", [False, True])
def test_openpyxl_reads_every_cell_and_the_sheet_size(tmp_path: Path, read_only: bool) -> None:
    frame = _frame()
    path = _write_ours(tmp_path / "ours.xlsx", frame)
    book = openpyxl.load_workbook(path, read_only=read_only)
    sheet = book["Sheet1"]
    assert book.sheetnames == ["Sheet1"]
    assert (sheet.max_row, sheet.max_column) == (len(frame) + 1, frame.shape[1])
    got = [list(row) for row in sheet.iter_rows(values_only=True)]
    book.close()
    assert got[0] == list(frame.columns)
    missing = {None, ""}
    for values, (_, row) in zip(got[1:], frame.iterrows()):
        for value, expected in zip(values, row.tolist()):
            if expected is None or expected is pd.NA or (isinstance(expected, float) and math.isnan(expected)):
                assert value is None
            elif isinstance(expected, str) and expected in missing:
                assert value is None
            elif isinstance(expected, float) and math.isinf(expected):
                assert value == ("inf" if expected > 0 else "-inf")
            elif isinstance(expected, (bool, np.bool_)):
                assert value is bool(expected)
            else:
                assert value == expected and type(value) is type(expected.item() if hasattr(expected, "item")
                                                                 else expected)


def test_other_values_are_written_as_their_text(tmp_path: Path) -> None:
    values = [pd.Timestamp("2024-01-02 03:04:05"), [1, "a"], {"k": 1}, decimal.Decimal("1.10"), np.str_("np text"),
              pd.NaT, np.float32(0.5), np.uint8(200), np.datetime64("NaT")]  # fmt: skip
    write_xlsx(tmp_path / "other.xlsx", [f"c{i}" for i in range(len(values))], [values])
    row = [c.value for c in openpyxl.load_workbook(tmp_path / "other.xlsx").active[2]]
    assert row == ["2024-01-02 03:04:05", "[1, 'a']", "{'k': 1}", "1.10", "np text", None, 0.5, 200, None]


def test_illegal_characters_are_removed_and_the_file_still_loads(tmp_path: Path) -> None:
    dirty = "a\x00b\x08c\x0bd\x0ce\x1ff\ud800g\udfffh\ufffei\uffffj"
    path = tmp_path / "dirty.xlsx"
    write_xlsx(path, ["text", "he\x01ader", "only"], [[dirty, "x\x1b<y>", "\x01\x02"], ["ok\tok\n", 1, 2]])
    sheet = openpyxl.load_workbook(path).active
    assert [c.value for c in sheet[1]] == ["text", "header", "only"]
    assert [c.value for c in sheet[2]] == ["abcdefghij", "x<y>", None]  # nothing left of the last: no cell
    assert [c.value for c in sheet[3]] == ["ok\tok\n", 1, 2]
    with zipfile.ZipFile(path) as archive:
        ET.fromstring(archive.read("xl/worksheets/sheet1.xml"))
    frame = pd.read_excel(path)
    assert frame["text"].tolist() == ["abcdefghij", "ok\tok\n"]


@pytest.mark.parametrize("read_only", [False, True])
def test_rows_of_nothing_but_missing_values_are_still_rows(tmp_path: Path, read_only: bool) -> None:
    frame = pd.DataFrame({"a": [1.0, np.nan, 2.0, np.nan], "b": ["x", None, "y", None]})
    frame.to_excel(tmp_path / "pandas.xlsx", index=False, engine="openpyxl")
    path = _write_ours(tmp_path / "ours.xlsx", frame)
    pd.testing.assert_frame_equal(pd.read_excel(path), pd.read_excel(tmp_path / "pandas.xlsx"))
    sheet = openpyxl.load_workbook(path, read_only=read_only).active
    assert (sheet.max_row, sheet.max_column) == (5, 2)
    assert [list(r) for r in sheet.iter_rows(min_row=4, values_only=True)] == [[2, "y"], [None, None]]


def test_no_rows_gives_a_header_only_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.xlsx"
    write_xlsx(path, ["index", "prediction"], [])
    frame = pd.read_excel(path)
    assert list(frame.columns) == ["index", "prediction"] and len(frame) == 0
    sheet = openpyxl.load_workbook(path, read_only=True).active
    assert (sheet.max_row, sheet.max_column) == (1, 2)


def test_package_parts_parse_and_point_at_each_other(tmp_path: Path) -> None:
    path = tmp_path / "parts.xlsx"
    write_xlsx(path, ["a", "b", "c", "d"], ([i, str(i), i / 2, i % 2 == 0] for i in range(2000)), sheet="Res & <1>")
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == PARTS  # [Content_Types].xml first, as file-type sniffers expect
        assert archive.testzip() is None
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}
        trees = {name: ET.fromstring(archive.read(name)) for name in PARTS}
    ns = {"ct": "http://schemas.openxmlformats.org/package/2006/content-types",
          "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
          "m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}  # fmt: skip
    overrides = {e.get("PartName") for e in trees["[Content_Types].xml"].findall("ct:Override", ns)}
    assert overrides == {"/xl/workbook.xml", "/xl/worksheets/sheet1.xml", "/xl/styles.xml"}
    root_targets = [e.get("Target") for e in trees["_rels/.rels"].findall("rel:Relationship", ns)]
    assert root_targets == ["xl/workbook.xml"]
    book_targets = {e.get("Target") for e in trees["xl/_rels/workbook.xml.rels"].findall("rel:Relationship", ns)}
    assert {f"xl/{t}" for t in book_targets} == {"xl/worksheets/sheet1.xml", "xl/styles.xml"}
    sheet = trees["xl/worksheets/sheet1.xml"]
    assert sheet.find("m:dimension", ns).get("ref") == "A1:D2001"
    rows = sheet.findall("m:sheetData/m:row", ns)
    assert len(rows) == 2001 and rows[-1].get("r") == "2001"
    assert [c.get("r") for c in rows[7]] == ["A8", "B8", "C8", "D8"]
    assert trees["xl/workbook.xml"].find("m:sheets/m:sheet", ns).get("name") == "Res & <1>"
    assert openpyxl.load_workbook(path).sheetnames == ["Res & <1>"]


def test_same_table_same_bytes(tmp_path: Path) -> None:
    frame = _frame()
    first = _write_ours(tmp_path / "one.xlsx", frame).read_bytes()
    assert _write_ours(tmp_path / "two.xlsx", frame).read_bytes() == first


def test_column_letters() -> None:
    assert [column_letter(n) for n in (1, 26, 27, 52, 53, 702, 703, 16_384)] == [
        "A", "Z", "AA", "AZ", "BA", "ZZ", "AAA", "XFD"]


def test_limits_refuse_clearly_and_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.xlsx"
    with pytest.raises(ValueError, match="row 2 has 1 values for 2 columns"):
        write_xlsx(path, ["a", "b"], [[1, 2], [3]])
    with pytest.raises(ValueError, match="16385 columns"):
        write_xlsx(path, [f"c{i}" for i in range(16_385)], [])
    with pytest.raises(ValueError, match="more than 1048575 rows"):
        write_xlsx(path, [], itertools.repeat((), 1_048_576))
    for name in ("", "a" * 32, "a/b", "x[1]", "'quoted'"):
        with pytest.raises(ValueError, match="sheet name"):
            write_xlsx(path, ["a"], [[1]], sheet=name)
    assert not path.exists()


def test_widest_sheet_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "wide.xlsx"
    write_xlsx(path, [f"c{i}" for i in range(16_384)], [list(range(16_384))])
    sheet = openpyxl.load_workbook(path, read_only=True).active
    assert (sheet.max_row, sheet.max_column) == (2, 16_384)
    assert sheet["XFD2"].value == 16_383


def test_a_failed_write_leaves_no_file(tmp_path: Path) -> None:
    """The sheet is compressed as its rows come: a failure half way through it (here the rows' source, as a full
    disk would be) removes the half-written workbook."""

    def rows():
        yield [1]
        raise OSError(28, "No space left on device")

    path = tmp_path / "full.xlsx"
    with pytest.raises(OSError, match="No space"):
        write_xlsx(path, ["a"], rows(), n_rows=2)
    assert not path.exists()
    with pytest.raises(ValueError, match="3 were announced"):  # a source shorter than it said: no file either
        write_xlsx(path, ["a"], iter([[1], [2]]), n_rows=3)
    assert not path.exists()
    with pytest.raises(IsADirectoryError):
        write_xlsx(tmp_path, ["a"], [[1]])
    assert tmp_path.is_dir()


def test_streamed_sheet_is_the_same_file_as_compressing_the_whole_sheet_at_once(tmp_path: Path) -> None:
    """write_xlsx compresses the sheet as its rows are encoded; the bytes must be those of the earlier writer, which
    built the whole sheet (sheet_xml) and compressed it in one call (written here again as that second way)."""
    from vlmkit.outputs import xlsx as x

    columns = ["index", "question", "prediction", "score"]
    rows = [[i, f"q {i} <&> 北京" + ("=1+1" if i % 5 == 0 else ""), None if i % 7 == 0 else "ABCD"[i % 4], i / 3]
            for i in range(20000)]
    streamed = tmp_path / "streamed.xlsx"
    x.write_xlsx(streamed, columns, iter(rows), n_rows=len(rows))
    whole = tmp_path / "whole.xlsx"
    parts = [("[Content_Types].xml", x._CONTENT_TYPES.encode()), ("_rels/.rels", x._ROOT_RELS.encode()),
             ("xl/workbook.xml", x._workbook_xml("Sheet1").encode()),
             ("xl/_rels/workbook.xml.rels", x._WORKBOOK_RELS.encode()), ("xl/styles.xml", x._STYLES.encode()),
             ("xl/worksheets/sheet1.xml", x.sheet_xml(columns, rows))]
    with zipfile.ZipFile(whole, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, data in parts:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data, compresslevel=1)
    assert streamed.read_bytes() == whole.read_bytes()
    frame = pd.read_excel(streamed)
    assert len(frame) == 20000 and frame["question"][5] == "q 5 <&> 北京=1+1" and pd.isna(frame["prediction"][7])


def test_prediction_table_cuts_long_cells_writes_lists_as_json_and_reads_back(tmp_path: Path):
    from vlmkit.outputs.tables import EXCEL_CELL_LIMIT, write_prediction_table

    long = "x" * (EXCEL_CELL_LIMIT + 5)
    table = pd.DataFrame({
        "index": [1, 2, 3],
        "question": ["a\x01b <c>", long, "plain"],
        "image_path": [["/a.jpg", "/b.jpg"], "/c.jpg", None],
        "score": [0.5, float("nan"), 2.0],
        "prediction": ["A", None, long],
    })
    path = tmp_path / "m_D.xlsx"
    assert write_prediction_table(path, table) == 2  # two cells cut, each counted
    back = pd.read_excel(path)
    assert list(back.columns) == list(table.columns)
    assert back["index"].tolist() == [1, 2, 3]
    assert back.loc[0, "question"] == "ab <c>"  # XML-forbidden control character removed, markup kept
    assert back.loc[1, "question"].endswith("…[truncated]") and len(back.loc[1, "question"]) <= EXCEL_CELL_LIMIT
    assert json.loads(back.loc[0, "image_path"]) == ["/a.jpg", "/b.jpg"]  # JSON, not a Python repr
    assert pd.isna(back.loc[2, "image_path"]) and pd.isna(back.loc[1, "score"]) and pd.isna(back.loc[1, "prediction"])
    assert back.loc[2, "score"] == 2.0 and back.loc[0, "prediction"] == "A"
    assert not list(tmp_path.glob(".*tmp*"))  # written beside and renamed into place


SOFFICE = shutil.which("soffice")


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) not installed: apt-get install -y --no-install-recommends libreoffice-calc-nogui")
def test_libreoffice_calc_reads_every_cell(tmp_path: Path):
    """A real spreadsheet program, not a Python reader: Calc opens the file and its CSV export holds every value."""
    rows = [[1, "a <b> & c", 0.1, True, "A"], [2, "北京 😀\nline2", None, False, None], [3, "plain", 2.5, True, "C"]]
    path = tmp_path / "t.xlsx"
    write_xlsx(path, ["index", "question", "score", "ok", "prediction"], rows)
    subprocess.run([SOFFICE, f"-env:UserInstallation=file://{tmp_path}/profile", "--headless", "--convert-to",
                    "csv:Text - txt - csv (StarCalc):44,34,76", "--outdir", str(tmp_path / "out"), str(path)],
                   check=True, capture_output=True, timeout=180)
    with open(tmp_path / "out" / "t.csv", encoding="utf-8", newline="") as handle:
        got = list(csv.reader(handle))
    assert got == [["index", "question", "score", "ok", "prediction"], ["1", "a <b> & c", "0.1", "TRUE", "A"],
                   ["2", "北京 😀\nline2", "", "FALSE", ""], ["3", "plain", "2.5", "TRUE", "C"]]
