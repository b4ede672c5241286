"""Journal.append(defer=True): the lines of records that arrive together are written by one flush(), in the order
appended; nothing deferred is held as journalled before it is on disk, and close() writes what is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from vlmkit.run.journal import Journal

FP = {"model": "m", "dataset": "d"}


def answer(index: int, text: str = "A") -> dict:
    return {"index": index, "prediction": text, "error": None}


def lines_on_disk(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_deferred_records_reach_the_file_at_flush_in_order_and_are_then_held(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, FP) as journal:
        header = path.read_bytes()
        for i in (3, 1, 2):
            assert journal.append(answer(i, f"answer {i}"), defer=True)
        assert path.read_bytes() == header  # nothing written yet
        assert journal.pending == 3 and "3" not in journal.records  # not held before it is on disk
        journal.flush()
        assert journal.pending == 0
        assert [r["index"] for r in lines_on_disk(path)] == [3, 1, 2]
        assert journal.current() == Journal(path, FP).load()  # what is held is what the file holds
        assert journal.records["1"]["prediction"] == "answer 1"


def test_an_append_that_is_not_deferred_writes_the_deferred_ones_first(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, FP) as journal:
        journal.append(answer(1), defer=True)
        journal.append(answer(2))
        assert [r["index"] for r in lines_on_disk(path)] == [1, 2]


def test_an_index_deferred_as_answered_is_not_appended_again_but_an_error_may_be_retried(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, FP) as journal:
        assert journal.append({"index": 5, "prediction": None, "error": {"kind": "timeout"}}, defer=True)
        assert journal.append(answer(5, "first"), defer=True)  # a retried error: kept
        assert not journal.append(answer(5, "second"), defer=True)  # answered, still pending: refused
        journal.flush()
        assert not journal.append(answer(5, "third"), defer=True)  # answered and written: refused
    assert [(r["index"], r["prediction"]) for r in lines_on_disk(path)] == [(5, None), (5, "first")]
    assert Journal(path, FP).load()["5"]["prediction"] == "first"


def test_close_writes_what_is_deferred(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, FP)
    journal.open()
    journal.append(answer(7), defer=True)
    journal.close()
    assert [r["index"] for r in lines_on_disk(path)] == [7]


def test_a_flush_that_fills_the_disk_keeps_only_whole_lines_and_says_so_once(tmp_path):
    """A real short write (RLIMIT_FSIZE in a child process): the lines wholly written are held and readable, the
    rest are not held (asked again on the next run), and the run's error is the OSError."""
    path = tmp_path / "journal.jsonl"
    script = textwrap.dedent(f"""
        import json, resource, signal, sys
        sys.path.insert(0, {os.getcwd()!r})
        from vlmkit.run.journal import Journal
        journal = Journal(__import__("pathlib").Path({str(path)!r}), {{"model": "m"}})
        journal.open()
        size = journal.path.stat().st_size
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 150, size + 150))
        for i in range(5):
            journal.append({{"index": i, "prediction": "x" * 40, "error": None}}, defer=True)
        try:
            journal.flush()
        except OSError as exc:
            print("raised", exc.errno)
        print(json.dumps(sorted(journal.records)))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    raised, held = done.stdout.splitlines()
    assert raised.startswith("raised")
    whole = [json.loads(line)["index"] for line in path.read_text().splitlines()[1:] if line.endswith("}")]
    assert 0 < len(whole) < 5
    assert json.loads(held) == [str(i) for i in whole]  # held: exactly the lines wholly on disk
    reread = Journal(path, {"model": "m"}).load()
    assert sorted(reread) == [str(i) for i in whole]


def test_close_with_deferred_lines_the_disk_refuses_warns_and_does_not_raise(tmp_path):
    """close() runs in `finally` blocks after the run's own error: a full disk there is one warning, not a second
    exception."""
    path = tmp_path / "journal.jsonl"
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {os.getcwd()!r})
        from vlmkit.run.journal import Journal
        journal = Journal(__import__("pathlib").Path({str(path)!r}), {{"model": "m"}})
        journal.open()
        size = journal.path.stat().st_size
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        journal.append({{"index": 1, "prediction": "A", "error": None}}, defer=True)
        journal.close()
        print("closed")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "closed", done.stderr
    assert "could not be written" in done.stderr and "Traceback" not in done.stderr
    assert lines_on_disk(path) == []
