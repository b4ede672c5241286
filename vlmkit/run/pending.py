"""The tasks of a run's pending rows, built as they are sent: a million pending rows hold a million small ints,
not a million prompts (issue 25's flat memory).

The runner builds every row's prompt once to find what to ask (a new row, an answer asked with another prompt, a row
whose prompt cannot be built), keeping only the positions; `PendingTasks` builds each task again when run_api takes
it (under its lock, as a request ends). Building a text MCQ prompt costs ~8 us, 2% of a row's 0.4 ms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pandas as pd

from vlmkit.core.model_calls import ModelCallError
from vlmkit.run.inference import Task

# What building one row's prompt may raise for that row alone (a bad cell, an unreadable or oversized file): the row
# gets an error record and the others go on.
PROMPT_ERRORS = (ValueError, OSError, ModelCallError)
# Rows turned into line dicts at a time while prompts are built.
LINE_CHUNK = 4096


def row_lines(rows: pd.DataFrame, positions: Sequence[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(position, row as a dict) for each position, LINE_CHUNK rows converted at a time (one conversion per chunk,
    not one Series per row; never the whole table as dicts)."""
    for start in range(0, len(positions), LINE_CHUNK):
        chunk = positions[start : start + LINE_CHUNK]
        yield from zip(chunk, rows.iloc[list(chunk)].to_dict(orient="records"))


class PendingTasks:
    """The tasks of the pending positions, built as they are taken (run_api takes the next one as a request ends):
    a million pending rows hold a million small ints here, not a million prompts. Sized, as run_api needs."""

    def __init__(self, rows: pd.DataFrame, positions: Sequence[int], make: Callable[[dict[str, Any]], Task]) -> None:
        self.rows, self.positions, self.make = rows, positions, make

    def __len__(self) -> int:
        return len(self.positions)

    def __iter__(self) -> Iterator[Task]:
        for _, line in row_lines(self.rows, self.positions):
            try:
                yield self.make(line)
            except PROMPT_ERRORS as exc:  # it was built a moment ago: a file changed under the run
                raise RuntimeError(f"row {line['index']}: its prompt was built before asking and now fails ({exc}); "
                                   "run again (every answer so far is journalled)") from exc
