"""What VLMEvalKit's scorers see of a column: its xlsx round trip, reproduced without writing a file.

VLMEvalKit (vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT) writes the predictions with pandas and xlsxwriter
(`<model>_<dataset>.xlsx`) and its scorers read them back with `pd.read_excel`. On the way:
- an empty string is not written (a blank cell); xlsxwriter cuts a string longer than 32,767 characters;
- pandas reads a blank cell, and any text among its default `na_values` (`None`, `N/A`, `NA`, `null`, `nan`, `NaN`,
  `#N/A`, `<NA>`, `-nan`, ...), as NaN, which most scorers then turn into the text `nan` with `str(x)`;
- pandas infers each column's type from all its cells: a column whose every cell reads as a number becomes numbers
  (`"3"` -> 3; with one NaN among them every cell is a float, so `"3"` -> 3.0 -> `"3.0"`), `True`/`False` texts
  become booleans.
`vlmevalkit_cells` gives the values pandas hands VLMEvalKit's scorer, `vlmevalkit_texts` what `str(x)` makes of them.
Type inference is pandas' own (the parser `read_excel` uses, with its arguments), so it follows the installed pandas;
tests/vlmkit/scoring/test_vlmevalkit_figure_vqa.py checks it against a real xlsx round trip (openpyxl).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pandas.io.parsers import TextParser

from vlmkit.core.cells import is_missing, listed

XLSX_MAX_STRING = 32767  # xlsxwriter cuts longer strings to this many characters
NAN_TEXT = "nan"


def _written(value: Any) -> Any:
    """The cell as openpyxl hands it to pandas after xlsxwriter wrote `value`: "" for a blank cell, an int for an
    integral number, the (cut) string otherwise."""
    if is_missing(value):
        return ""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number == int(number):
            return int(number)
        return number
    text = str(value)
    return text[:XLSX_MAX_STRING]


def vlmevalkit_cells(values: Sequence[Any]) -> list[Any]:
    """The values `pd.read_excel` gives back for a column holding `values` (NaN for a blank or NA-looking cell, a
    number where the whole column reads as numbers)."""
    if not values:
        return []
    rows: list[list[Any]] = [["cell"], *([_written(v)] for v in values)]
    column = TextParser(rows, header=0, skip_blank_lines=False).read()["cell"]
    return column.tolist()


def vlmevalkit_texts(values: Sequence[Any]) -> list[str]:
    """`str(x)` of each cell VLMEvalKit reads back (`nan` for a reply pandas reads as NaN)."""
    return [str(v) for v in vlmevalkit_cells(values)]


def is_nan_cell(value: Any) -> bool:
    """A cell pandas read back as NaN (VLMEvalKit's `nan`)."""
    return isinstance(value, float) and math.isnan(value)


def nan_note(rows: Sequence[Any], sane: str) -> str:
    """The note for replies VLMEvalKit reads as the text `nan` (rows: their indices); `sane` says what vlmkit does."""
    return (
        f"{len(rows)} reply/replies (empty, or a text pandas reads as NaN such as None, N/A, NA, null) are the "
        f"text 'nan' to VLMEvalKit, a quirk of its xlsx round trip; vlmkit {sane}: index {listed(list(rows))}"
    )
