import json

from vlmkit.run.journal import Journal


def test_append_flushes_each_record_and_resume_reads_them(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, {"model": "m"}) as journal:
        journal.append({"index": 1, "prediction": "A", "error": None})
        # readable by another process before close: flushed per record
        assert json.loads(path.read_text().splitlines()[1])["prediction"] == "A"
        journal.append({"index": 2, "prediction": None, "error": {"kind": "http_5xx"}})
    again = Journal(path, {"model": "m"})
    records = again.load()
    assert set(records) == {"1", "2"}
    assert again.done() == {"1"}  # errors are retried


def test_a_half_written_last_line_is_ignored_and_repaired(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, {"m": 1}) as journal:
        journal.append({"index": 1, "prediction": "A", "error": None})
    with open(path, "a") as handle:
        handle.write('{"index": 2, "predic')  # killed mid-write
    journal = Journal(path, {"m": 1})
    assert journal.load().keys() == {"1"}
    with journal:
        journal.append({"index": 2, "prediction": "B", "error": None})
    assert Journal(path, {"m": 1}).load()["2"]["prediction"] == "B"


def test_later_record_replaces_an_earlier_error(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, {}) as journal:
        journal.append({"index": 3.0, "prediction": None, "error": {"kind": "timeout"}})
        journal.append({"index": "3", "prediction": "C", "error": None})
    assert Journal(path, {}).load()["3"]["prediction"] == "C"


def test_fingerprint_and_set_aside(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, {"max_tokens": 16}) as journal:
        journal.append({"index": 1, "prediction": "A", "error": None})
    other = Journal(path, {"max_tokens": 32})
    assert other.stored_fingerprint() == {"max_tokens": 16}
    aside = other.set_aside()
    assert aside.name == "journal.stale1.jsonl" and aside.exists() and not path.exists()


def test_index_keys_agree_with_the_dataset_readers(tmp_path):
    """One index, however a reader spelled it: 3, 3.0, "3", " 3" and "3.0" are one row (vlmkit.core.cells.index_key)."""
    from vlmkit.core.cells import index_key
    from vlmkit.run.journal import index_keys

    path = tmp_path / "journal.jsonl"
    with Journal(path, {}) as journal:
        journal.append({"index": " 3", "prediction": None, "error": {"kind": "timeout"}})
        journal.append({"index": "3.0", "prediction": "C", "error": None})
    assert set(Journal(path, {}).load()) == {"3"}
    assert index_keys([3, 3.0, "3", " 3", "3.0"]) == ["3"] * 5 == [index_key(v) for v in (3, 3.0, "3", " 3", "3.0")]
    assert index_keys(["a1", "1e3"]) == ["a1", "1000"]


def test_no_line_holds_a_secret(tmp_path):
    path = tmp_path / "journal.jsonl"
    with Journal(path, {"model": "m"}, secrets=["sk-journal-secret", None, ""]) as journal:
        journal.append({"index": 1, "prediction": None,
                        "error": {"kind": "exception", "message": "RuntimeError: key sk-journal-secret refused"}})
    text = path.read_text()
    assert "sk-journal-secret" not in text and "key *** refused" in text


def test_predictions_from_journalled_lines_are_the_same_text_as_encoding_each_record(tmp_path):
    """write_predictions splices the added fields onto a journalled line instead of encoding the record again:
    the file must not differ by a byte, whatever the record holds (secrets scrubbed, unicode, a record the journal
    does not hold, a field that collides)."""
    import pandas as pd

    from vlmkit.outputs.run_files import write_predictions
    from vlmkit.scoring.result import EvalResult

    journal = Journal(tmp_path / "journal.jsonl", {"run": 1}, secrets=["sk-SECRET"])
    with journal:
        journal.append({"index": 1, "prediction": "北京 sk-SECRET", "error": None, "latency_ms": 1.25})
        journal.append({"index": 2, "prediction": None, "error": {"kind": "timeout"}, "metadata": {"old": 1}})
        journal.append({"index": 3, "prediction": "B", "error": None})
    records = dict(journal.current())
    records["3"] = {"index": 3, "prediction": "C", "error": None}  # another object than the journal holds
    rows = pd.DataFrame({"index": [1, 2, 3, 4], "question": ["q1", "q2", "q3", "q4"], "answer": ["A", "B", "C", "D"]})
    per_sample = pd.DataFrame({"index": [1, 2, 3, 4], "hit": [1.0, 0.0, 1.0, 0.0], "extracted": ["A", None, "C", None]})
    evaluation = EvalResult("x", {"acc": 0.5}, "acc", per_sample, None, "acc", {}, [])
    keys = ["1", "2", "3", "4"]
    write_predictions(tmp_path / "spliced.jsonl", keys, rows, records, evaluation, journal.line)
    write_predictions(tmp_path / "encoded.jsonl", keys, rows, records, evaluation)
    spliced = (tmp_path / "spliced.jsonl").read_text(encoding="utf-8")
    assert spliced == (tmp_path / "encoded.jsonl").read_text(encoding="utf-8")
    lines = [json.loads(line) for line in spliced.splitlines()]
    assert lines[0]["prediction"] == "北京 ***" and lines[0]["metadata"] == {"question": "q1"} and lines[0]["hit"] == 1.0
    assert lines[1]["metadata"] == {"question": "q2"}  # the scorer's and the table's fields win, as before
    assert lines[2]["prediction"] == "C" and lines[3]["error"] == {"kind": "not_run"}
