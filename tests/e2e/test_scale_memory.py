"""Flat memory in the number of rows (issue 25): what a run holds is counted, never timed.

- The tasks are built as they are sent: while the model answers, only the few tasks in flight are alive, not one
  per row (before: every task built up front).
- The journal holds no record and no line: appending records leaves about one small int a row behind (before:
  each record as a dict and its JSON line, ~3 KB a row).
- predictions.jsonl written from a journal's lines is the same text as encoding each record (see also
  tests/vlmkit/run/test_journal.py and the xlsx's byte-equality test in tests/vlmkit/outputs/test_xlsx.py).
"""

from __future__ import annotations

import gc
import json
import threading
import tracemalloc
import weakref
from pathlib import Path
from typing import Any

import pandas as pd

import vlmkit.run.runner as runner_module
from tests.support.run_helpers import write_yorn_tsv
from vlmkit.run.journal import Journal
from vlmkit.run.resolve import ModelSpec
from vlmkit.run.runner import RunOptions, Runner

ROWS = 1500


class CountsLiveTasks:
    """An API-style model (asked by run_api's worker threads) that notes, at each call, how many Task objects are
    alive (the test fills `live` with every task the runner builds)."""

    is_api = True
    live = 0  # tasks built and not yet freed (weakref.finalize counts them down)
    most = 0
    lock = threading.Lock()

    def generate(self, msgs: Any, dataset: Any = None) -> str:
        with CountsLiveTasks.lock:
            CountsLiveTasks.most = max(CountsLiveTasks.most, CountsLiveTasks.live)
        return "Yes"


def _freed() -> None:
    with CountsLiveTasks.lock:
        CountsLiveTasks.live -= 1


def test_tasks_are_built_as_they_are_sent(lmu_root: Path, tmp_path: Path, monkeypatch) -> None:
    write_yorn_tsv(lmu_root / "ManyYN.tsv", n=ROWS)
    real_task = Runner._task

    def counted(build, dataset, line):
        task = real_task(build, dataset, line)
        with CountsLiveTasks.lock:
            CountsLiveTasks.live += 1
        weakref.finalize(task, _freed)
        return task

    monkeypatch.setattr(Runner, "_task", staticmethod(counted))
    runner = Runner(RunOptions(work_dir=tmp_path / "out", root=lmu_root, progress=False, nproc=2))
    [outcome] = runner.run(["ManyYN"], [ModelSpec("counts", f"{__name__}:CountsLiveTasks", {})])
    assert outcome.status == "success" and outcome.n_completed == ROWS
    # two workers, each holding the task it asks and perhaps the next: a handful alive, never one per row
    assert 1 <= CountsLiveTasks.most <= 8, CountsLiveTasks.most
    lines = Path(outcome.files["predictions"]).read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == list(range(ROWS))  # every row, in dataset order


def _record(i: int) -> dict[str, Any]:
    prompt = [{"role": "user", "content": [{"type": "text", "value": f"Question {i}: " + "words " * 150}]}]
    return {"index": i, "prompt": prompt, "prompt_hash": f"{i:016x}", "prompt_digest": f"{i:016x}", "target": "A",
            "prediction": f"The answer is A because {i}", "error": None,
            "usage": {"input_tokens": 300, "output_tokens": 8, "reasoning_tokens": 0}, "latency_ms": 12.5}


def test_the_journal_holds_no_record_and_no_line(tmp_path: Path) -> None:
    n = 4000
    line_bytes = len(json.dumps(_record(n), ensure_ascii=False))  # ~1 KB a line in the file
    journal = Journal(tmp_path / "journal.jsonl", {"run": 1})
    with journal:
        journal.append(_record(-1))  # the first record sets up what every journal has (its index, its reader)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for i in range(n):
                journal.append(_record(i))
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    per_row = held / n
    # a key, an int and a dict slot: ~150 bytes a row; holding each line alone would be line_bytes a row
    assert per_row < 300 < line_bytes, (per_row, line_bytes)
    records = journal.current()
    assert len(records) == n + 1 and records["17"]["prediction"] == "The answer is A because 17"
    assert not records.failed("17") and journal.done() == {str(i) for i in range(-1, n)}


def test_predictions_from_a_journals_lines_are_the_same_text_as_encoding_each_record(tmp_path: Path) -> None:
    from vlmkit.outputs.run_files import write_predictions
    from vlmkit.scoring.result import EvalResult

    journal = Journal(tmp_path / "journal.jsonl", {"run": 1}, secrets=["sk-SECRET"])
    with journal:
        journal.append({"index": 1, "prediction": "北京 sk-SECRET", "error": None, "latency_ms": 1.25})
        journal.append({"index": 2, "prediction": None, "error": {"kind": "timeout"}, "metadata": {"old": 1}})
        journal.append({"index": 3, "prediction": "says \"hit\": no", "error": None})
        journal.append({"index": 4, "prediction": "tab\there \u0001", "error": None})
    n = 9000  # more rows than one chunk of the writer: the per-sample fields are read a chunk at a time
    keys = [str(i) for i in range(1, n + 1)]
    rows = pd.DataFrame({"index": range(1, n + 1), "question": [f"q{i}" for i in range(1, n + 1)], "answer": "A"})
    per_sample = pd.DataFrame({"index": range(1, n + 1), "hit": [i % 2 == 0 for i in range(1, n + 1)]})
    evaluation = EvalResult("x", {"acc": 0.5}, "acc", per_sample, None, "acc", {}, [])
    write_predictions(tmp_path / "lines.jsonl", keys, rows, journal.current(), evaluation)
    write_predictions(tmp_path / "encoded.jsonl", keys, rows, dict(journal.current()), evaluation)
    text = (tmp_path / "lines.jsonl").read_text(encoding="utf-8")
    assert text == (tmp_path / "encoded.jsonl").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) == n and "sk-SECRET" not in text
    first, third, last = json.loads(lines[0]), json.loads(lines[2]), json.loads(lines[-1])
    assert first["prediction"] == "北京 ***" and first["hit"] is False and third["hit"] is False
    assert last["error"] == {"kind": "not_run"} and last["hit"] is True and last["metadata"] == {"question": f"q{n}"}
    # the scorer's per-row table in another order than the rows: looked up by index, the same lines
    shuffled = EvalResult("x", {"acc": 0.5}, "acc", per_sample.iloc[::-1].reset_index(drop=True), None, "acc", {}, [])
    write_predictions(tmp_path / "shuffled.jsonl", keys, rows, journal.current(), shuffled)
    assert (tmp_path / "shuffled.jsonl").read_text(encoding="utf-8") == text
