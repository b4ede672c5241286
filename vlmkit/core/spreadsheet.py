"""Which text cells a spreadsheet would run as formulas, and how vlmkit writes them so that it does not: the one rule
every csv writer (`_acc.csv`, report.csv, perf_summary.csv) and the xlsx writer share (CSV injection, OWASP)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# A spreadsheet takes a cell that begins with one of these as a formula (`=HYPERLINK(...)`, `+cmd|...`, `-2+3`,
# `@SUM(...)`; a leading tab or CR is dropped and what follows read as one). OWASP's remedy: a leading single quote.
FORMULA_FIRST = frozenset("=+-@\t\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def formula_like(text: str) -> bool:
    """A text a spreadsheet would run as a formula: it begins with = + - @, a tab or a CR, and is not a plain
    decimal number (`-0.25`, `+3`, `-1e-05` are read as the numbers they are, so they stay as they are)."""
    return bool(text) and text[0] in FORMULA_FIRST and _PLAIN_NUMBER.fullmatch(text) is None


def spreadsheet_text(value: Any) -> Any:
    """A csv cell as vlmkit writes it from data (every csv writer asks here): a formula-like text (`formula_like`)
    gets a leading single quote, which Excel, LibreOffice and Google Sheets read as "this is text" (OWASP's CSV
    injection remedy); anything else, numbers and ordinary text, is returned as it is. The xlsx writer marks such
    cells with the quotePrefix style instead, the same thing in that format, and keeps their text unchanged."""
    if isinstance(value, str):
        return "'" + value if formula_like(value) else value
    return value


def csv_line_end(cells: Iterable[Any], usual: str = "\n") -> str:
    """The line terminator for a csv holding these cells: `usual`, or "\r\n" when a text holds a carriage return.
    Python's csv writer quotes a field only for the characters of its terminator, and a spreadsheet ends the row at
    an unquoted CR: what follows would begin a row, a formula's place. Ordinary files keep their bytes."""
    return "\r\n" if any(isinstance(c, str) and "\r" in c for c in cells) else usual
