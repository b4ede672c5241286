"""vlmkit.scoring.common.vlmevalkit_replies: the replies as VLMEvalKit's scorer reads them back from its xlsx, on
columns worked by hand from pandas' documented reading (a blank cell and `N/A`-like texts are NaN, a column of numbers
is numbers, floats once a NaN is among them) and VLMEvalKit's failure message; plus properties the four per-reply
views must keep between them (issue 31, mutation testing)."""

from __future__ import annotations

import math

import pytest

from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_replies import (
    VLMEVALKIT_FAILURE_REPLY,
    changed_replies,
    failed_call,
    not_text,
    reads_as_nan,
    vlmevalkit_cells_of,
    vlmevalkit_replies,
)


def test_failed_call() -> None:
    assert failed_call(None) and failed_call(float("nan"))
    assert failed_call(VLMEVALKIT_FAILURE_REPLY)
    assert failed_call(f"[openai] {VLMEVALKIT_FAIL_MARKER}: timeout")  # the marker anywhere in the text
    assert not failed_call("") and not failed_call("nan") and not failed_call("Failed to obtain") and not failed_call(0)
    assert VLMEVALKIT_FAILURE_REPLY == "Failed to obtain answer via API."


def test_a_failed_call_is_written_as_text_so_numbers_stay_texts() -> None:
    # the failure message is text: the column is not read as numbers, `3` stays `3`
    assert vlmevalkit_replies(["3", None]) == ["3", None]
    assert vlmevalkit_cells_of(["3", None]) == ["3", None]
    assert not_text(["3", None]) == [False, False]
    # without it: every cell a number
    assert vlmevalkit_cells_of(["3", "4"]) == [3, 4]
    assert vlmevalkit_replies(["3", "4"]) == ["3", "4"]
    assert not_text(["3", "4"]) == [True, True] and changed_replies(["3", "4"]) == [False, False]


def test_a_blank_reply_makes_the_column_floats() -> None:
    cells = vlmevalkit_cells_of(["3", ""])
    assert cells[0] == 3.0 and isinstance(cells[0], float) and math.isnan(cells[1])
    assert vlmevalkit_replies(["3", ""]) == ["3.0", "nan"]
    assert changed_replies(["3", ""]) == [True, True]
    assert reads_as_nan(["3", ""]) == [False, True]
    assert not_text(["3", ""]) == [True, True]


def test_na_texts_and_failures_in_a_text_column() -> None:
    preds = ["yes", "N/A", f"{VLMEVALKIT_FAIL_MARKER}: 500", float("nan"), "nan", "None"]
    assert vlmevalkit_replies(preds) == ["yes", "nan", None, None, "nan", "nan"]
    assert reads_as_nan(preds) == [False, True, False, False, True, True]
    assert not_text(preds) == [False, True, False, False, True, True]
    assert changed_replies(preds) == [False, True, False, False, False, True]  # the reply `nan` reads as itself


def test_empty_column() -> None:
    for view in (vlmevalkit_cells_of, vlmevalkit_replies, reads_as_nan, not_text, changed_replies):
        assert view([]) == []


@pytest.mark.parametrize(
    "preds",
    [["1", "2.5", ""], ["a", None, "NULL", "#N/A", "  "], ["True", "False"], [1, 2.0, None], ["x" * 40000, "NA"]],
)
def test_the_views_agree(preds: list) -> None:
    cells = vlmevalkit_cells_of(preds)
    replies = vlmevalkit_replies(preds)
    nan, other, changed = reads_as_nan(preds), not_text(preds), changed_replies(preds)
    for pred, cell, reply, is_nan, is_other, is_changed in zip(preds, cells, replies, nan, other, changed):
        if failed_call(pred):
            assert cell is None and reply is None and not (is_nan or is_other or is_changed)
            continue
        assert reply == str(cell)
        assert is_nan == (isinstance(cell, float) and math.isnan(cell))
        assert is_other == (not isinstance(cell, str))
        assert not is_nan or is_other  # NaN is never text
        assert is_changed == (reply != str(pred))
