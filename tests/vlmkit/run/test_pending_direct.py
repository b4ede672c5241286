"""vlmkit.run.pending: pending rows turned into tasks only as they are taken, in the order of their positions, across
chunk boundaries; a prompt that fails when built again names its row."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.run.inference import Task
from vlmkit.run.pending import LINE_CHUNK, PendingTasks, row_lines


def _rows(n: int) -> pd.DataFrame:
    return pd.DataFrame({"index": [f"r{i}" for i in range(n)], "question": [f"q{i}" for i in range(n)]})


def test_row_lines_give_each_position_its_row_across_chunks():
    n = LINE_CHUNK * 2 + 5
    rows = _rows(n)
    positions = list(range(n - 1, -1, -3))  # out of order, more than two chunks' worth
    got = list(row_lines(rows, positions))
    assert [p for p, _ in got] == positions
    assert all(line == {"index": f"r{p}", "question": f"q{p}"} for p, line in got)
    assert list(row_lines(rows, [])) == []


def test_tasks_are_built_as_they_are_taken():
    built: list[str] = []

    def make(line: dict) -> Task:
        built.append(line["index"])
        return Task(line["index"], [{"type": "text", "value": line["question"]}])

    pending = PendingTasks(_rows(10), [7, 2, 9], make)
    assert len(pending) == 3 and built == []
    tasks = iter(pending)
    assert next(tasks).index == "r7" and built == ["r7"]
    assert [t.index for t in tasks] == ["r2", "r9"]


@pytest.mark.parametrize("error", [ValueError("bad cell"), OSError("gone"), FileNotFoundError("moved")])
def test_a_prompt_failing_when_built_again_names_its_row(error: Exception):
    def make(line: dict) -> Task:
        if line["index"] == "r3":
            raise error
        return Task(line["index"], [])

    with pytest.raises(RuntimeError, match=r"^row r3: its prompt was built before asking and now fails") as info:
        list(PendingTasks(_rows(5), [1, 3, 4], make))
    assert info.value.__cause__ is error


def test_other_errors_are_not_taken_for_a_changed_file():
    def make(line: dict) -> Task:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        list(PendingTasks(_rows(2), [0], make))
