"""What a table cell holds: the one definition of missing, blank, an index key and a whole number.

Every reader (TSVs, custom files, journals, scorers) asks here, so that two parts of vlmkit never disagree on
whether a cell has a value or which row an index names.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

MAX_LISTED = 20  # how many values an error or a note quotes before "... and N more"


def is_missing(value: Any) -> bool:
    """No value at all: None, NaN, pandas NA/NaT. Any string (even "") and any list or dict is a value.

    An empty prediction is an answer (scored wrong), not a failed call; use `is_blank` for "has no text".
    """
    if value is None:
        return True
    if isinstance(value, (str, bytes, list, tuple, dict, set)):
        return False
    if isinstance(value, float):
        return math.isnan(value)
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # an array-like cell is a value
        return False


def is_blank(value: Any) -> bool:
    """Missing, or a string of nothing but white space: a cell with no text in it."""
    if isinstance(value, str):
        return not value.strip()
    return is_missing(value)


def index_key(value: Any) -> str:
    """The form in which row indices are compared: `23`, `23.0`, ` 23 ` and numpy's 23 are one index; other
    strings are compared as they are, less surrounding white space."""
    if type(value) is int and -(2**53) < value < 2**53:  # the usual index, and what the float test below gives it
        return str(value)
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number == int(number):
        return str(int(number))
    return text


def whole_number(value: Any) -> int | None:
    """An int, an integral float or a string of digits (with an optional sign) as an int; None for anything else (bools included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        return int(value.strip())
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return whole_number(value.item())
    return None


def listed(values: list[Any], most: int = MAX_LISTED) -> str:
    """`a, b, c ... and 7 more`: values quoted in an error or a note, at most `most` of them."""
    shown = ", ".join(map(str, values[:most]))
    more = len(values) - most
    return shown + (f" ... and {more} more" if more > 0 else "")
