"""The replies as VLMEvalKit's scorer sees them, for the benchmark scorers' `VlmevalkitFigure`s.

VLMEvalKit (at vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT) writes the predictions to `<model>_<dataset>.xlsx`
and its scorer reads them back with `pd.read_excel`: an empty reply, `None`, `N/A`, `NA`, `null`, `nan`... come back
as NaN (the text `nan` to a scorer that calls str()), and a column of replies that all read as numbers comes back as
numbers (`3` -> 3, or 3.0 when a NaN is among them). The round trip itself is
vlmkit.scoring.common.vlmevalkit_cells; this module adds the benchmark scorers' convention for failed calls:

A failed call has no reply in vlmkit; the figures count it as a miss on both sides and never list it as a
difference. In the column VLMEvalKit reads, such a row holds its failure message (what its API wrappers store), a
text, so it takes part in the column's type inference as a text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vlmkit.core.cells import is_missing
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells

VLMEVALKIT_FAILURE_REPLY = "Failed to obtain answer via API."


def failed_call(prediction: Any) -> bool:
    """The row has no reply: the call failed (vlmkit's None/NaN, or VLMEvalKit's failure message in its files)."""
    return is_missing(prediction) or VLMEVALKIT_FAIL_MARKER in str(prediction)


def vlmevalkit_cells_of(predictions: Sequence[Any]) -> list[Any]:
    """The cells VLMEvalKit's scorer reads for this column of replies (failed calls: None)."""
    failed = [failed_call(p) for p in predictions]
    written = [VLMEVALKIT_FAILURE_REPLY if f else p for p, f in zip(predictions, failed)]
    return [None if f else cell for cell, f in zip(vlmevalkit_cells(written), failed)]


def vlmevalkit_replies(predictions: Sequence[Any]) -> list[str | None]:
    """str() of each cell VLMEvalKit's scorer reads (`nan` for a reply read back as NaN); None for a failed call."""
    return [None if cell is None else str(cell) for cell in vlmevalkit_cells_of(predictions)]


def reads_as_nan(predictions: Sequence[Any]) -> list[bool]:
    """Per reply: VLMEvalKit's round trip turns it into NaN."""
    return [cell is not None and is_nan_cell(cell) for cell in vlmevalkit_cells_of(predictions)]


def not_text(predictions: Sequence[Any]) -> list[bool]:
    """Per reply: VLMEvalKit's round trip hands its scorer something other than a string (NaN, a number, a
    boolean): a scorer that uses it as text without str() stops there."""
    return [cell is not None and not isinstance(cell, str) for cell in vlmevalkit_cells_of(predictions)]


def changed_replies(predictions: Sequence[Any]) -> list[bool]:
    """Per reply: the text VLMEvalKit's scorer reads is not the reply (`nan` for an empty one, `3.0` for `3`...)."""
    texts = vlmevalkit_replies(predictions)
    return [text is not None and text != str(pred) for pred, text in zip(predictions, texts)]
