"""A small, fast writer of one-sheet xlsx files (the VLMEvalKit predictions table).

pandas' `to_excel(engine="openpyxl")` costs ~19 µs a cell; this writer builds the sheet XML with f-strings in one
pass and zips it at deflate level 1 (~1 µs a cell with the zipping; tools/bench_xlsx.py). pandas.read_excel and
openpyxl read its files as they read pandas', and LibreOffice Calc reads every cell (tests/vlmkit/outputs/test_xlsx.py);
Excel was not at hand to try, so the layout keeps to what ECMA-376 and Excel require rather than to what some
reader happens to accept.

The package holds the parts Excel needs to open a file without repair ([Content_Types].xml first, then the
workbook, its relationships, the sheet, and a minimal styles.xml) and no others: no docProps (optional), no theme,
no shared strings (every string is an inline string, `t="inlineStr"`, as openpyxl writes them too). The bytes are
deterministic: the same table gives the same file (zip entries carry a fixed timestamp).

Cells, as pandas + openpyxl write them today unless said otherwise:
- str: an inline string in `<t xml:space="preserve">` (Excel keeps leading/trailing white space); `&`, `<`, `>`
  are escaped and a carriage return is written `&#13;` (an XML reader would turn a raw one into a line feed;
  openpyxl writes it raw, so today's file reads "a\\rb" back as "a\\nb": this one keeps it). Characters that XML 1.0
  forbids (C0 controls but tab/LF/CR, lone surrogates, U+FFFE, U+FFFF) are removed. An empty string, or one that
  is empty once cleaned, is no cell at all (openpyxl writes an empty cell: both read back as missing).
  Literal `_xHHHH_` sequences are written as they are, like openpyxl: Excel reads them as escapes, openpyxl and
  pandas do not.
  A text a spreadsheet would take as a formula (vlmkit.outputs.schema.formula_like: it begins with = + - @, a tab
  or a CR) is an inline string, which Excel never evaluates, and its cell has the quotePrefix style: what Excel
  stores for a typed leading apostrophe, so that editing the cell keeps it text. The text itself is unchanged
  (VLMEvalKit reads this file back: a reply starting with "- " stays one); csv writers add the quote character
  instead (vlmkit.outputs.schema.spreadsheet_text).
- bool (and numpy.bool_): `t="b"` 1/0. int (and numpy integers): all the digits. float (and numpy floats): repr(),
  which round-trips exactly. openpyxl writes every number as "%.16g", so today's file reads 2**53 + 1 back as
  2**53 and 0.1 + 0.2 as 0.3; this one reads back exactly in pandas/openpyxl (Excel itself keeps 15 digits).
- None, NaN, pandas NA/NaT: no cell (read back as missing). +/-inf: the strings "inf"/"-inf", as pandas writes them.
- anything else (dates, lists, dicts, Decimal...): str(value) as a string. pandas would write dates as dated
  numbers and a Decimal as a number; the predictions table holds neither.
"""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence, Sized
from pathlib import Path
from typing import Any

from vlmkit.core.cells import is_missing
from vlmkit.core.spreadsheet import FORMULA_FIRST, formula_like

MAX_ROWS = 1_048_576  # Excel's sheet size, header row included
MAX_COLUMNS = 16_384  # A..XFD
COMPRESS_LEVEL = 1  # deflate level: see tools/bench_xlsx.py for level 1 against 6

# Characters XML 1.0 does not allow (tab, LF and CR are allowed).
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_INF = math.inf
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: same table, same bytes
_SHEET_NAME_BAD = re.compile(r"[\[\]:*?/\\]")

_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

_CONTENT_TYPES = (
    _HEAD + '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    _HEAD + f'<Relationships xmlns="{_PKG_REL_NS}">'
    f'<Relationship Id="rId1" Type="{_REL_NS}/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
_WORKBOOK_RELS = (
    _HEAD + f'<Relationships xmlns="{_PKG_REL_NS}">'
    f'<Relationship Id="rId1" Type="{_REL_NS}/worksheet" Target="worksheets/sheet1.xml"/>'
    f'<Relationship Id="rId2" Type="{_REL_NS}/styles" Target="styles.xml"/>'
    "</Relationships>"
)
_QUOTED = ' s="1"'  # the cell format with quotePrefix, for formula-like text (see the module docstring)
# The smallest style sheet Excel accepts: one font, the two fills it reserves, one border; two cell formats, the
# second with quotePrefix.
_STYLES = (
    _HEAD + f'<styleSheet xmlns="{_NS}">'
    '<fonts count="1"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" quotePrefix="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    "</styleSheet>"
)


def column_letter(number: int) -> str:
    """1 -> "A", 27 -> "AA", 16384 -> "XFD"."""
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _escape(value: str) -> str:
    """Markup characters as references (a CR too: an XML reader would turn a raw one into LF)."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def _text(value: str) -> str:
    """A string as XML character data: illegal characters removed, markup escaped ("" when nothing is left)."""
    if not value.isprintable() and _ILLEGAL.search(value):  # what XML forbids is all unprintable
        value = _ILLEGAL.sub("", value)
    if "&" in value or "<" in value or ">" in value or "\r" in value:
        value = _escape(value)
    return value


def _formula_like(value: str) -> bool:
    """formula_like of the text as the cell will hold it (characters XML forbids removed)."""
    if not value.isprintable() and _ILLEGAL.search(value):
        value = _ILLEGAL.sub("", value)
    return formula_like(value)


def _other_cell(ref: str, value: Any) -> str:
    """The cell for anything but an exact str, int, float, bool or None (those are written inline by sheet_xml)."""
    if isinstance(value, str):
        quoted = _QUOTED if _formula_like(value) else ""
        text = _text(value)
        return f'<c r="{ref}"{quoted} t="inlineStr"><is><t xml:space="preserve">{text}</t></is></c>' if text else ""
    dtype = getattr(value, "dtype", None)
    kind = getattr(dtype, "kind", None) if dtype is not None and getattr(value, "ndim", None) == 0 else None
    if isinstance(value, bool) or kind == "b":
        return f'<c r="{ref}" t="b"><v>{1 if value else 0}</v></c>'
    if kind in ("i", "u") or isinstance(value, int):
        return f'<c r="{ref}"><v>{int(value)}</v></c>'
    if kind == "f" or isinstance(value, float):
        number = float(value)
        if number != number:
            return ""
        if number == _INF or number == -_INF:
            return f'<c r="{ref}" t="inlineStr"><is><t>{"inf" if number > 0 else "-inf"}</t></is></c>'
        return f'<c r="{ref}"><v>{number!r}</v></c>'
    if is_missing(value):
        return ""
    return _other_cell(ref, str(value))


def sheet_xml(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """The worksheet part, UTF-8: the header row, then one row per item of rows (each as long as columns)."""
    letters = _letters(columns)
    chunks = [b"", *_sheet_rows(columns, letters, rows)]  # chunks[0]: the head, once the dimension is known
    chunks[0] = _sheet_head(letters, len(chunks) - 2)
    chunks.append(_SHEET_TAIL)
    return b"".join(chunks)


_SHEET_TAIL = b"</sheetData></worksheet>"


def _letters(columns: Sequence[str]) -> list[str]:
    width = len(columns)
    if width > MAX_COLUMNS:
        raise ValueError(f"xlsx: {width} columns, more than Excel's {MAX_COLUMNS}")
    return [column_letter(j + 1) for j in range(width)]


def _sheet_head(letters: list[str], n_rows: int) -> bytes:
    """The worksheet's opening, whose dimension needs the number of rows below the header."""
    last = f"{letters[-1]}{n_rows + 1}" if letters else "A1"
    dimension = f"A1:{last}" if last != "A1" else "A1"
    return f'{_HEAD}<worksheet xmlns="{_NS}" xmlns:r="{_REL_NS}"><dimension ref="{dimension}"/><sheetData>'.encode()


def _sheet_rows(columns: Sequence[str], letters: list[str], rows: Iterable[Sequence[Any]]) -> Iterator[bytes]:
    """The header row, then each row of rows, each encoded on its own."""
    width = len(columns)
    header = "".join(_other_cell(f"{letter}1", str(name)) for letter, name in zip(letters, columns))
    yield f'<row r="1">{header}</row>'.encode()
    inline = '" t="inlineStr"><is><t xml:space="preserve">'
    quoted_inline = '"' + _QUOTED + inline[1:]
    first = FORMULA_FIRST
    isprintable, illegal = str.isprintable, _ILLEGAL.search
    # The common cells (exact str, int, float, bool, None) are written inline here: a function call per cell
    # would cost as much as the rest of the loop. Everything else goes through _other_cell. Each row is encoded
    # on its own: one huge str would be widened to 4 bytes a character by a single emoji and cost more to join.
    for number, row in enumerate(rows, start=2):
        if number > MAX_ROWS:
            raise ValueError(f"xlsx: more than {MAX_ROWS - 1} rows, Excel's limit with the header row")
        if len(row) != width:
            raise ValueError(f"xlsx: row {number - 1} has {len(row)} values for {width} columns")
        rn = str(number)
        cells = [f'<row r="{rn}">']
        append = cells.append
        for letter, value in zip(letters, row):
            kind = type(value)
            if kind is str:
                if not isprintable(value) and illegal(value):
                    value = _ILLEGAL.sub("", value)
                if not value:
                    continue
                lead = quoted_inline if value[0] in first and formula_like(value) else inline
                if "&" in value or "<" in value or ">" in value or "\r" in value:
                    value = _escape(value)
                append(f'<c r="{letter}{rn}{lead}{value}</t></is></c>')
            elif value is None:
                continue
            elif kind is float:
                if value - value == 0.0:  # finite: NaN - NaN and inf - inf are NaN
                    append(f'<c r="{letter}{rn}"><v>{value!r}</v></c>')
                elif value == value:
                    append(f'<c r="{letter}{rn}{inline}{"inf" if value > 0 else "-inf"}</t></is></c>')
            elif kind is int:
                append(f'<c r="{letter}{rn}"><v>{value}</v></c>')
            elif kind is bool:
                append(f'<c r="{letter}{rn}" t="b"><v>{"1" if value else "0"}</v></c>')
            else:
                cell = _other_cell(letter + rn, value)
                if cell:
                    append(cell)
        if len(cells) == 1 and width:  # nothing but missing values: one empty cell, so that readers see the row
            append(f'<c r="A{rn}"/>')
        append("</row>")
        yield "".join(cells).encode()


def _workbook_xml(sheet: str) -> str:
    if (
        not sheet or len(sheet) > 31 or _SHEET_NAME_BAD.search(sheet) or _ILLEGAL.search(sheet)
        or sheet[0] == "'" or sheet[-1] == "'"
    ):
        raise ValueError(
            f"xlsx: sheet name {sheet!r} is not allowed (1-31 characters, none of []:*?/\\, no quote at either end)"
        )
    name = _text(sheet).replace('"', "&quot;")
    return (
        f'{_HEAD}<workbook xmlns="{_NS}" xmlns:r="{_REL_NS}">'
        f'<sheets><sheet name="{name}" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )


def write_xlsx(
    path: Path, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, sheet: str = "Sheet1",
    compresslevel: int = COMPRESS_LEVEL, n_rows: int | None = None,
) -> None:
    """Write one worksheet: a header row (columns, as strings) then rows, each a sequence as long as columns.

    Cells follow the module docstring; strings are not cut to Excel's 32,767 characters here (the caller does,
    and counts them). Rows are fastest as plain Python values: `frame.to_numpy(dtype=object).tolist()` is ~8x
    quicker to produce than `frame.itertuples()`. The sheet is compressed as its rows are encoded (never held
    whole): rows may be a generator when n_rows says how many it yields (a sized rows needs no n_rows); the bytes
    are those of compressing the whole sheet at once. Raises ValueError for more than 16,384 columns, more than
    1,048,575 rows, a row of the wrong length, a count other than n_rows, or a sheet name Excel refuses. Writes
    `path` directly (the caller renames a temporary file into place); a write that fails removes what it wrote."""
    workbook = _workbook_xml(sheet)
    letters = _letters(columns)
    if n_rows is None:
        if not isinstance(rows, Sized):
            rows = list(rows)
        n_rows = len(rows)  # type: ignore[arg-type]
    if n_rows >= MAX_ROWS:
        raise ValueError(f"xlsx: more than {MAX_ROWS - 1} rows, Excel's limit with the header row")
    parts = (
        ("[Content_Types].xml", _CONTENT_TYPES.encode()),  # first: file-type sniffers look for it there
        ("_rels/.rels", _ROOT_RELS.encode()),
        ("xl/workbook.xml", workbook.encode()),
        ("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS.encode()),
        ("xl/styles.xml", _STYLES.encode()),
    )
    archive = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=compresslevel)
    try:
        with archive:
            for name, data in parts:
                archive.writestr(_entry(name), data, compresslevel=compresslevel)  # a ZipInfo would get level 6
            entry = _entry("xl/worksheets/sheet1.xml")
            _set_level(entry, compresslevel)
            big = n_rows * max(1, len(letters)) > ZIP64_CELLS  # the sheet may pass 2 GiB: a zip64 entry
            with archive.open(entry, "w", force_zip64=big) as sheet_part:
                sheet_part.write(_sheet_head(letters, n_rows))
                count = -1  # the header row is the first chunk
                for chunk in _sheet_rows(columns, letters, rows):
                    sheet_part.write(chunk)
                    count += 1
                if count != n_rows:
                    raise ValueError(f"xlsx: {count} rows written where {n_rows} were announced")
                sheet_part.write(_SHEET_TAIL)
    except BaseException:
        Path(path).unlink(missing_ok=True)  # closing wrote a directory of the parts done: no half workbook stays
        raise


ZIP64_CELLS = 20_000_000  # cells past which the sheet part is written as a zip64 entry (it may exceed 2 GiB)


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _set_level(info: zipfile.ZipInfo, level: int) -> None:
    """The deflate level of an entry written through ZipFile.open (writestr takes it as an argument)."""
    if hasattr(info, "compress_level"):  # Python 3.13+
        info.compress_level = level
    else:
        info._compresslevel = level  # type: ignore[attr-defined]
