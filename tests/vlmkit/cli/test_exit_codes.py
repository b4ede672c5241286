"""vlmkit.cli.exit_codes: the worst of several outcomes decides a run's exit code, in the documented order
(ok < samples failed < bad input < stopped < interrupted), and the help's table lists each code once."""

from __future__ import annotations

import pytest

from vlmkit.cli.exit_codes import BAD_INPUT, FOR_STATUS, INTERRUPTED, OK, SAMPLES_FAILED, STOPPED, TABLE, epilog, worst


def test_the_codes() -> None:
    assert (OK, BAD_INPUT, SAMPLES_FAILED, STOPPED, INTERRUPTED) == (0, 2, 3, 4, 130)


@pytest.mark.parametrize(
    "codes, expected",
    [
        ([], 0),
        ([0, 0], 0),
        ([0, 3], 3),
        ([3, 2], 2),  # bad input outweighs failed samples, though 3 > 2
        ([2, 4, 3], 4),
        ([4, 130, 0], 130),
        ([130, 2], 130),
    ],
)
def test_the_worst_outcome_decides(codes: list[int], expected: int) -> None:
    assert worst(codes) == expected
    assert worst(reversed(codes)) == expected


def test_every_status_has_a_code() -> None:
    assert FOR_STATUS["success"] == FOR_STATUS["inferred"] == 0
    assert FOR_STATUS["partial"] == FOR_STATUS["failed"] == 3
    assert FOR_STATUS["no_answers"] == 2 and FOR_STATUS["stopped"] == 4


def test_epilog_lists_each_code_once_in_order() -> None:
    lines = epilog().splitlines()
    assert lines[0] == "exit codes:"
    assert [int(line.split()[0]) for line in lines[1:]] == [0, 1, 2, 3, 4, 130]
    assert lines[-1] == "  130  interrupted (Ctrl-C); answers so far are journalled, rerun to resume"
    assert len(TABLE) == len(lines) - 1
