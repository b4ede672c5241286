"""VLMEvalKit's own figure for the MCQ scorer (score_mcq) and the reports built on its per-row hits: what
VLMEvalKit (vlmkit.scoring.vlmevalkit_figure.VLMEVALKIT_COMMIT) would print for the same replies.

Per row, as its `ImageMCQDataset.evaluate_heuristic` and utils/multiple_choice.py do:
- the reply is what its xlsx round trip gives back (vlmkit.scoring.common.vlmevalkit_cells: an empty reply, `None`,
  `N/A`, `NA`, `null`, ... is read as the text `nan`; a column of numbers comes back as numbers);
- the choices are `build_choices` over the option columns as the same round trip gives them back: a cell pandas
  reads as NaN is no option, a number is its `str` (`3`, or `3.0` in a column with gaps);
- the letter is `can_infer` (vlmkit.scoring.common.choice_reading.vlmevalkit_read); `Z` (a refusal, a lone `Z`) is
  a reading, and a miss;
- with a judge, a reply its rule cannot read goes to the judge with VLMEvalKit's prompt built from that same text
  (the journal serves the asks vlmkit already made); a judge that never names an option leaves a miss here where
  VLMEvalKit draws a random letter, a failed judge call a miss too (both noted);
- right when the letter equals the `answer` cell as it is (`GT`: `(B)` or ` B` never match there);
- circular: a group is right only when every row of it is (its prefetch and row-by-row judging give the same
  verdicts; vlmkit asks the judge for the unread rows of the groups no rule-read row has already lost).
A failed call is a miss on both sides and never a difference (VLMEvalKit keeps its failure message as the reply).

The figure's metrics are the MCQ metrics (`Overall`, categories, the split headline) worked out from these hits
with the same aggregation as vlmkit's (VLMEvalKit's report_acc).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlmkit.core.cells import is_missing, listed
from vlmkit.judging import Judge
from vlmkit.scoring.common.choice_judge import (
    MCQ_TEMPERATURES,
    NO_OPTION,
    Judged,
    ask_judge,
    mcq_judge_prompt,
    read_mcq_reply,
    row_keys,
)
from vlmkit.scoring.common.choice_reading import vlmevalkit_read
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER, cell_text
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference

_UNREAD: Any = object()
_READ_POOL = 65_536  # readings kept by (reply, options) at most
NAN_NOTE = (
    "VLMEvalKit reads {n} reply(ies) as the text `nan` (its xlsx round trip turns an empty reply, `None`, `N/A`, "
    "`NA`, `null`... into NaN); vlmkit reads the reply itself: index {rows}"
)


def vlmevalkit_choices(columns: dict[str, Sequence[Any]]) -> list[dict[str, str]]:
    """VLMEvalKit's `build_choices` for every row, from the option columns (letter -> the column's cells) as its
    round trip gives them back: a cell read as NaN is no option, any other is its `str`."""
    back = _option_cells(columns)
    n = len(next(iter(back.values()))) if back else 0
    return [_choices_at(back, i) for i in range(n)]


def _option_cells(columns: dict[str, Sequence[Any]]) -> dict[str, list[Any]]:
    """Each option column as VLMEvalKit's round trip gives it back, by letter in order. Only a column's distinct
    cells make the round trip (what pandas reads a column as depends on which values it holds, not how often): an
    option column repeats a few texts over many rows, and each row then points at one of them."""
    return {letter: _round_trip_distinct(cells) for letter, cells in sorted(columns.items())}


def _round_trip_distinct(cells: Sequence[Any]) -> list[Any]:
    first: dict[Any, int] = {}  # (type, value) of each distinct cell (None: a missing one) -> its place in `distinct`
    distinct: list[Any] = []
    places = []
    for value in cells:
        key = None if is_missing(value) else (type(value), value)
        try:
            place = first.get(key)
        except TypeError:  # an unhashable cell: the whole column makes the round trip
            return vlmevalkit_cells(list(cells))
        if place is None:
            place = first[key] = len(distinct)
            distinct.append(value)
        places.append(place)
    back = vlmevalkit_cells(distinct)
    return [back[place] for place in places]


def _choices_at(back: dict[str, list[Any]], i: int) -> dict[str, str]:
    """VLMEvalKit's `build_choices` for row i of the round-tripped option columns."""
    return {letter: str(cells[i]) for letter, cells in back.items() if not is_nan_cell(cells[i])}


@dataclass
class FigureRows:
    """VLMEvalKit's reading of every row: `readings` (a letter, `Z`, or None where nothing was read or the call
    failed), `hits`, the positions of `nan` replies, and the judge's part."""

    readings: list[str | None]
    hits: np.ndarray
    nan_rows: list[int] = field(default_factory=list)
    judged: int = 0
    judge_unread: int = 0
    judge_errors: int = 0

    def notes(self, indices: Sequence[Any]) -> list[str]:
        out = []
        if self.nan_rows:
            out.append(NAN_NOTE.format(n=len(self.nan_rows), rows=listed([indices[i] for i in self.nan_rows])))
        if self.judge_unread:
            out.append(f"{self.judge_unread} row(s) the judge never matched to an option: VLMEvalKit draws a random "
                       "letter there, counted as misses here")
        if self.judge_errors:
            out.append(f"{self.judge_errors} judge call(s) failed: misses here (VLMEvalKit retries, then draws a "
                       "random letter)")
        return out


def figure_rows(
    indices: Sequence[Any],
    predictions: Sequence[Any],
    answers: Sequence[Any],
    option_columns: dict[str, Sequence[Any]],
    *,
    questions: Sequence[Any] | None = None,
    judge: Judge | None = None,
    judge_prompt: str = "default",
    asked: dict[str, Judged] | None = None,
    lost_groups: np.ndarray | None = None,
) -> FigureRows:
    """VLMEvalKit's reading and hit of every row (module docstring). `option_columns`: letter -> that column's cells;
    `asked`: the judge's verdicts by prompt from vlmkit's own reading (a prompt asked there is not asked again);
    `lost_groups`: for circular tables, the group of each row (the judge is not asked for a group a rule-read row has
    already lost); None otherwise."""
    n = len(predictions)
    failed = [is_missing(p) or VLMEVALKIT_FAIL_MARKER in str(p) for p in predictions]
    # a failed call: VLMEvalKit keeps its failure message in the column, which never reads as NaN or a number
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else p for p, f in zip(predictions, failed)])
    back_options = _option_cells(option_columns)
    readings: list[str | None] = [None] * n
    hits = np.zeros(n, dtype=bool)
    texts: list[str | None] = [None] * n
    gts = [None if is_missing(a) else str(a) for a in answers]
    nan_rows = []
    read: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}  # each distinct reply and options read once
    for i in range(n):
        if failed[i]:
            continue
        if is_nan_cell(back[i]) and str(predictions[i]) != "nan":
            nan_rows.append(i)
        texts[i] = text = str(back[i])
        options = _choices_at(back_options, i)
        key = (text, tuple(options.items()))
        letter = read.get(key, _UNREAD)
        if letter is _UNREAD:
            if len(read) >= _READ_POOL:  # distinct replies by the million: a bounded pool, the same readings
                read.clear()
            letter = read[key] = vlmevalkit_read(text, options) if options else None
        readings[i] = letter
        hits[i] = letter is not None and letter == gts[i]
    rows = FigureRows(readings, hits, nan_rows)
    if judge is None:
        return rows
    choices = {i: options for i in range(n) if texts[i] is not None and readings[i] is None
               for options in (_choices_at(back_options, i),) if options}  # worked out again: none kept a row
    ask = list(choices)
    if lost_groups is not None and ask:
        lost = {lost_groups[i] for i in range(n)
                if texts[i] is None or (readings[i] is not None and not hits[i])}  # fmt: skip
        ask = [i for i in ask if lost_groups[i] not in lost]
    if not ask:
        return rows
    keys = row_keys([indices[i] for i in ask])
    position = dict(zip(keys, ask))
    prompts = {
        key: mcq_judge_prompt(cell_text(questions[i]) if questions is not None and cell_text(questions[i]) else "",
                              choices[i], texts[i] or "", judge_prompt)
        for key, i in position.items()
    }  # fmt: skip
    known = asked or {}
    verdicts = {key: known[prompt] for key, prompt in prompts.items() if prompt in known}
    verdicts.update(ask_judge(
        judge, {key: prompt for key, prompt in prompts.items() if key not in verdicts},
        lambda key, reply: read_mcq_reply(reply, choices[position[key]]), MCQ_TEMPERATURES, no_answer=NO_OPTION,
    ))  # fmt: skip
    for key, verdict in verdicts.items():
        i = position[key]
        rows.judged += 1
        if verdict.method == "judge":
            readings[i] = verdict.value if verdict.value is not None else NO_OPTION
            hits[i] = readings[i] == gts[i]  # the judge's `Z` is a hit where the answer cell is `Z`, as in VLMEvalKit
        elif verdict.method == "judge_unread":
            rows.judge_unread += 1
        else:
            rows.judge_errors += 1
    return rows


def differences(
    indices: Sequence[Any],
    vlmkit_letters: Sequence[str | None],
    vlmkit_hits: np.ndarray,
    rows: FigureRows,
    failed: Sequence[bool],
) -> list[ReadingDifference]:
    """Every row (but failed calls) whose two readings, or whose two scores, differ; VLMEvalKit's `Z` counts as no
    letter when the readings are compared."""
    out = []
    for i, index in enumerate(indices):
        if failed[i]:
            continue
        theirs = rows.readings[i]
        same = vlmkit_letters[i] == (None if theirs == NO_OPTION else theirs)
        if same and bool(vlmkit_hits[i]) == bool(rows.hits[i]):
            continue
        out.append(ReadingDifference(index, vlmkit_letters[i], theirs, float(bool(vlmkit_hits[i])),
                                     float(bool(rows.hits[i]))))
    return out
