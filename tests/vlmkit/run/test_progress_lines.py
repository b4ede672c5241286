"""A run is never silent off a terminal: plain progress lines at an interval (tee, nohup, CI, a log file), and on a
rerun a line saying how much was already answered."""

from __future__ import annotations

import io
from pathlib import Path

from tests.support.run_helpers import run_served
from tests.support.servers import FaultServer, chat_reply, models_reply
from vlmkit.run.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_at_the_interval_with_rate_time_left_and_errors():
    clock, out = Clock(), io.StringIO()
    with Progress(100, "m x D", bar=False, every_s=30, stream=out, clock=clock) as progress:
        for second in range(1, 61):  # one answer a second for a minute; every fifth fails
            clock.now = float(second)
            progress.update(1, errors=int(second % 5 == 0))
        clock.now = 80.0
        progress.update(40)  # 20 s after the last line: no line until the end
    lines = out.getvalue().splitlines()
    assert lines == [
        "m x D: 30/100 answered (1/s, about 70 s left, 6 errors so far)",  # at 30 s
        "m x D: 60/100 answered (1/s, about 40 s left, 12 errors so far)",  # at 60 s
        "m x D: 100/100 answered (1.25/s, 12 errors so far)",  # the end, after a run long enough to have lines
    ]


def test_a_short_run_prints_no_line_and_a_terminal_gets_the_bar():
    out = io.StringIO()
    with Progress(3, "quick", bar=False, stream=out) as progress:
        progress.update(3)
    assert out.getvalue() == ""
    with Progress(3, "bar", bar=True, stream=out) as progress:
        progress.update(3)
    assert "bar: 100%" in out.getvalue()


def test_a_rerun_says_what_was_already_answered(lmu_root: Path, tmp_path: Path):
    rows = ["index\tquestion\tanswer"] + [f"{i}\tIs {i} even?\t{'Yes' if i % 2 == 0 else 'No'}" for i in range(6)]
    (lmu_root / "Evens.tsv").write_text("\n".join(rows) + "\n")

    def answer(request):
        if request.method != "POST":
            return models_reply("served")
        if "Is 4 even" in str(request.body):
            return chat_reply(None)  # no content: an error for that row
        return chat_reply("Yes")

    with FaultServer(answer) as server:
        first = run_served(server.base_url, tmp_path / "out", lmu_root, "--kind", "yorn", data="Evens")
        second = run_served(server.base_url, tmp_path / "out", lmu_root, "--kind", "yorn", data="Evens")
    assert "already answered" not in first.stdout
    assert "served x Evens: 5 of 6 already answered, asking 1" in second.stdout
    with FaultServer(lambda r: chat_reply("Yes") if r.method == "POST" else models_reply("served")) as server:
        run_served(server.base_url, tmp_path / "out", lmu_root, "--kind", "yorn", data="Evens")
        third = run_served(server.base_url, tmp_path / "out", lmu_root, "--kind", "yorn", data="Evens")
    assert "served x Evens: all 6 already answered, nothing to ask" in third.stdout
