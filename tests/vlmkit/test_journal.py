import json

from vlmkit.journal import Journal


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
    """One index, however a reader spelled it: 3, 3.0, "3", " 3" and "3.0" are one row (vlmkit.cells.index_key)."""
    from vlmkit.cells import index_key
    from vlmkit.journal import index_keys

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
