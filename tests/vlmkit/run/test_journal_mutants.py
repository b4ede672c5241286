"""vlmkit.run.journal's reading and writing, checked against the file's bytes as read here with plain json: where each
index's latest record starts, which records are errors, the header's fingerprint and shard claim, a killed run's half
line, deferred writes, journals merged by answer, secrets scrubbed. Expected values are worked by hand from the lines
each test writes."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from vlmkit.run.journal import (
    HEADER_KEY,
    SHARD_KEY,
    Journal,
    JournalBusy,
    JournalRecords,
    MergedRecords,
    index_keys,
)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, lines: list[object]) -> None:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")


def test_records_point_at_each_index_latest_line_and_say_which_are_errors(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    lines = [
        {HEADER_KEY: {"m": 1}},
        {"index": 1, "prediction": None, "error": {"kind": "timeout"}},
        {"index": 2, "prediction": "B", "error": None},
        {"index": "1", "prediction": "A", "error": None},  # the same row, now answered
        {"index": 3, "prediction": None, "error": {"kind": "http_5xx"}},
        {"note": "a line without an index"},
    ]
    _write(path, lines)
    records = Journal(path, {"m": 1}).load()
    assert sorted(records) == ["1", "2", "3"] and len(records) == 3
    assert records["1"] == lines[3] and records["2"] == lines[2] and records["3"] == lines[4]
    assert [records.failed(k) for k in ("1", "2", "3", "4")] == [False, False, True, False]
    # offsets are where the lines start in the file's bytes
    data = path.read_bytes()
    starts = [0]
    for line in data.splitlines(keepends=True)[:-1]:
        starts.append(starts[-1] + len(line))
    assert [records.offset(k) for k in ("1", "2", "3")] == [starts[3], starts[2], starts[4]]
    assert records.offset("9") is None and "9" not in records and "1" in records
    assert records.line("2") == json.dumps(lines[2]) and records.raw("3") == json.dumps(lines[4]).encode()
    with pytest.raises(KeyError):
        records["9"]
    journal = Journal(path, {"m": 1})
    journal.load()
    assert journal.done() == {"1", "2"}


def test_lines_with_crlf_and_blank_lines_are_placed_by_their_bytes(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    header = json.dumps({HEADER_KEY: {}})
    a = json.dumps({"index": "a", "prediction": "x", "error": None})
    b = json.dumps({"index": "b", "prediction": "é", "error": None})  # a two-byte character before b's line ends
    path.write_bytes(f"{header}\r\n\r\n{a}\r\n   \n{b}\n".encode())
    records = Journal(path, {}).load()
    assert records.offset("a") == len(header) + 4
    assert records.offset("b") == len(header) + 4 + len(a) + 2 + 4
    assert records["b"]["prediction"] == "é" and records.line("a") == a


def test_an_unreadable_line_is_skipped_and_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    path = tmp_path / "j.jsonl"
    _write(path, [{HEADER_KEY: {}}, {"index": 1, "prediction": "A", "error": None}, "{not json", "[1, 2]"])
    journal = Journal(path, {})
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        assert list(journal.load()) == ["1"]
        journal.load()  # the same damage: not said again
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "skipped 2 unreadable line(s) (line 3, 4)" in warnings[0] and "kept the 1 readable record(s)" in warnings[0]
    assert "header" not in warnings[0]


def test_a_lost_header_is_said_and_leaves_the_settings_unknown(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\x00\x00\x00\n" + json.dumps({"index": 1, "prediction": "A", "error": None}).encode() + b"\n")
    journal = Journal(path, {"m": 1})
    assert journal.header_lost() and journal.stored_fingerprint() is None and journal.stored_shard() is None
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        assert list(journal.load()) == ["1"]
    assert "(line 1 was the header: the settings it held are unknown)" in caplog.records[-1].getMessage()
    # no file, an empty file, a header of another tool: nothing lost
    assert not Journal(tmp_path / "none.jsonl", {}).header_lost()
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    assert not Journal(tmp_path / "empty.jsonl", {}).header_lost()
    _write(tmp_path / "other.jsonl", [{"index": 5, "prediction": "x", "error": None}])
    other = Journal(tmp_path / "other.jsonl", {})
    assert not other.header_lost() and other.stored_fingerprint() is None


@pytest.mark.parametrize(("claim", "read"), [
    ([1, 4], (1, 4)),
    ([0, 1], (0, 1)),
    ([4, 4], None),  # I must be below N
    ([-1, 4], None),
    ([1, 4, 2], None),
    ([1.0, 4], None),  # whole numbers only, as ints
    ([True, 4], None),
    ("1/4", None),
    (None, None),
])
def test_a_shard_claim_is_read_only_when_well_formed(tmp_path: Path, claim: object, read: tuple | None):
    path = tmp_path / "j.jsonl"
    _write(path, [{HEADER_KEY: {"m": 1}, SHARD_KEY: claim}])
    assert Journal(path, {}).stored_shard() == read


def test_a_new_journal_starts_with_its_header_and_its_shard(tmp_path: Path):
    path = tmp_path / "deep" / "er" / "j.jsonl"
    with Journal(path, {"model": "m", "max_tokens": 8}, shard=(2, 5)) as journal:
        assert journal.append({"index": 0, "prediction": "A", "error": None})
    assert _lines(path) == [{HEADER_KEY: {"model": "m", "max_tokens": 8}, SHARD_KEY: [2, 5]},
                            {"index": 0, "prediction": "A", "error": None}]
    plain = tmp_path / "plain.jsonl"
    with Journal(plain, {"m": 1}):
        pass
    assert _lines(plain) == [{HEADER_KEY: {"m": 1}}]
    # an existing journal is appended to, its header kept
    with Journal(path, {"other": 1}, shard=(2, 5)) as journal:
        journal.append({"index": 1, "prediction": "B", "error": None})
    assert _lines(path)[0] == {HEADER_KEY: {"model": "m", "max_tokens": 8}, SHARD_KEY: [2, 5]}
    assert len(_lines(path)) == 3


def test_another_shard_writing_a_journal_drops_its_claim_and_keeps_every_line(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    with Journal(path, {"m": 1}, shard=(0, 2)) as journal:
        journal.append({"index": 0, "prediction": "A", "error": None})
        journal.append({"index": 2, "prediction": None, "error": {"kind": "timeout"}})
    journal = Journal(path, {"m": 1}, shard=(1, 3))
    journal.load()  # loaded before: every offset moves with the shorter header
    with journal:
        journal.append({"index": 2, "prediction": "C", "error": None})
        assert journal.records["0"]["prediction"] == "A" and journal.records["2"]["prediction"] == "C"
    assert _lines(path) == [
        {HEADER_KEY: {"m": 1}},
        {"index": 0, "prediction": "A", "error": None},
        {"index": 2, "prediction": None, "error": {"kind": "timeout"}},
        {"index": 2, "prediction": "C", "error": None},
    ]
    assert Journal(path, {}).stored_shard() is None
    assert [p.name for p in tmp_path.iterdir()] == ["j.jsonl"]  # no temporary file, the lock given back
    # the same shard writing again changes nothing
    with Journal(tmp_path / "k.jsonl", {}, shard=(1, 2)):
        pass
    with Journal(tmp_path / "k.jsonl", {}, shard=(1, 2)):
        pass
    assert _lines(tmp_path / "k.jsonl") == [{HEADER_KEY: {}, SHARD_KEY: [1, 2]}]


def test_a_half_written_last_line_is_ended_before_the_next_record(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(json.dumps({HEADER_KEY: {}}).encode() + b'\n{"index": 1, "pred')
    with Journal(path, {}) as journal:
        journal.append({"index": 2, "prediction": "B", "error": None})
    raw = path.read_bytes().split(b"\n")
    assert raw[1] == b'{"index": 1, "pred' and json.loads(raw[2])["index"] == 2 and raw[3] == b""
    # a whole last line is left as it is
    size = path.stat().st_size
    with Journal(path, {}):
        pass
    assert path.stat().st_size == size


def test_an_index_answered_since_open_is_not_journalled_again_but_an_error_is_retried(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    _write(path, [{HEADER_KEY: {}}, {"index": 1, "prediction": "old", "error": None}])
    with Journal(path, {}) as journal:
        journal.load()
        # answered before this opening: a new answer is journalled (a rerun that asks again)
        assert journal.append({"index": 1, "prediction": "new", "error": None})
        assert not journal.append({"index": 1, "prediction": "newer", "error": None})
        assert journal.append({"index": 2, "prediction": None, "error": {"kind": "timeout"}})
        assert journal.append({"index": 2, "prediction": "B", "error": None})
        assert not journal.append({"index": "2.0", "prediction": "B2", "error": None})
    assert [r.get("prediction") for r in _lines(path)[1:]] == ["old", "new", None, "B"]


def test_deferred_records_are_written_together_by_flush_in_order(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    with Journal(path, {}) as journal:
        assert journal.append({"index": 1, "prediction": "A", "error": None}, defer=True)
        assert journal.append({"index": 2, "prediction": None, "error": {"kind": "x"}}, defer=True)
        assert journal.pending == 2 and len(_lines(path)) == 1  # nothing written yet
        assert not journal.append({"index": 1, "prediction": "again", "error": None}, defer=True)
        assert journal.records.offset("1") is None  # held as journalled once on disk only
        journal.flush()
        assert journal.pending == 0 and len(_lines(path)) == 3
        assert journal.records["1"]["prediction"] == "A" and journal.records.failed("2")
        assert journal.records["2"]["index"] == 2  # each line of one write placed at its own offset
        # an append that is not deferred writes what was deferred before it, first
        journal.append({"index": 3, "prediction": "C", "error": None}, defer=True)
        journal.append({"index": 4, "prediction": "D", "error": None})
        assert [r["index"] for r in _lines(path)[1:]] == [1, 2, 3, 4]
        journal.append({"index": 5, "prediction": "E", "error": None}, defer=True)
    # close() writes what is left
    assert [r["index"] for r in _lines(path)[1:]] == [1, 2, 3, 4, 5]
    with pytest.raises(RuntimeError, match="not open"):
        journal.append({"index": 6, "prediction": "F", "error": None})


def test_current_is_what_this_object_wrote_without_reading_again(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, {})
    with journal:
        journal.append({"index": 1, "prediction": "A", "error": None})
        held = journal.records
        current = journal.current()
        assert current is held and list(current) == ["1"]  # not read again
        record = {"index": 1, "prediction": "A", "error": None}
        assert journal.line("1", record) == json.dumps(record, ensure_ascii=False)
        assert journal.line("1", {**record, "prediction": "B"}) is None
        assert journal.line("2", record) is None and journal.line("1", None) is None
    # a fresh object reads the file
    assert list(Journal(path, {}).current()) == ["1"]


def test_secrets_never_reach_the_file(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    key = "sk-test-0123456789abcdef"
    with Journal(path, {"api": f"Bearer {key}"}, secrets=[key, None, ""]) as journal:
        journal.append({"index": 1, "prediction": f"echo {key}", "error": None}, defer=True)
        journal.append({"index": 2, "prediction": None, "error": {"message": f"401 for {key}"}})
    text = path.read_text(encoding="utf-8")
    assert key not in text and len(_lines(path)) == 3


def test_set_aside_moves_the_journal_and_forgets_its_records(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    with Journal(path, {}) as journal:
        journal.append({"index": 1, "prediction": "A", "error": None})
    journal = Journal(path, {})
    journal.load()
    aside = journal.set_aside()
    assert aside.exists() and not path.exists() and len(journal.current()) == 0 and journal.done() == set()
    assert _lines(aside)[1]["prediction"] == "A"


def test_merged_records_take_each_answer_from_the_journal_that_holds_it(tmp_path: Path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(first, [{HEADER_KEY: {}}, {"index": 1, "prediction": "A1", "error": None},
                   {"index": 2, "prediction": None, "error": {"kind": "t"}}])
    _write(second, [{HEADER_KEY: {}}, {"index": 1, "prediction": "B1", "error": None},
                    {"index": 2, "prediction": "B2", "error": None},
                    {"index": 3, "prediction": None, "error": {"kind": "t"}}])
    merged = MergedRecords()
    merged.take(Journal(first, {}).load())
    merged.take(Journal(second, {}).load())
    # an answer is kept; an error gives way to a later journal's answer; a key only one journal has is taken
    assert {k: merged[k]["prediction"] for k in merged} == {"1": "A1", "2": "B2", "3": None}
    assert len(merged) == 3 and "3" in merged and "4" not in merged
    assert [merged.failed(k) for k in ("1", "2", "3", "4")] == [False, False, True, False]
    assert json.loads(merged.line("2"))["prediction"] == "B2"


def test_a_record_read_back_that_is_no_longer_a_dict_is_missing(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    _write(path, [{HEADER_KEY: {}}, {"index": 1, "prediction": "A", "error": None}])
    records = JournalRecords(path)
    records.note("1", 0, False)  # pointed at the header: a dict without the record
    assert records["1"] == {HEADER_KEY: {}}
    records.note("1", 2, True)  # in the middle of a line: not JSON
    assert records.failed("1")
    with pytest.raises(KeyError):
        records["1"]
    records.close()


def test_index_keys_spell_one_row_one_way():
    assert index_keys([1, 1.0, "1", " 1 ", "1.0", "a"]) == ["1", "1", "1", "1", "1", "a"]


def test_appending_before_open_is_refused(tmp_path: Path):
    with pytest.raises(RuntimeError, match="^journal is not open$"):
        Journal(tmp_path / "j.jsonl", {}).append({"index": 1, "prediction": "A", "error": None})


def test_a_lock_taken_with_lock_is_kept_after_close(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    holder = Journal(path, {})
    holder.lock()
    holder.open()
    holder.close()  # the pair is still held: lock() holds it until unlock()
    with pytest.raises(JournalBusy):
        Journal(path, {}).open()
    holder.unlock()
    with Journal(path, {}):
        pass


def test_records_read_again_after_close_and_a_missing_key_is_named(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    _write(path, [{HEADER_KEY: {}}, {"index": 1, "prediction": "A", "error": None}])
    records = Journal(path, {}).load()
    assert records["1"]["prediction"] == "A"
    records.close()
    assert records["1"]["prediction"] == "A"  # reopened for the next read
    records.note("2", 3, False)  # points into the header line: not JSON from there
    with pytest.raises(KeyError) as info:
        records["2"]
    assert info.value.args == ("2",)
    records.close()


def test_the_damage_warning_in_full(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    path = tmp_path / "j.jsonl"
    _write(path, ["{cut", {"index": 1, "prediction": "A", "error": None}, "\u0000"])
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        Journal(path, {}).load()
    assert caplog.records[-1].getMessage() == (
        f"{path}: skipped 2 unreadable line(s) (line 1, 3) (line 1 was the header: the settings it held are unknown); "
        "kept the 1 readable record(s), only the rows whose lines were lost are asked again"
    )
    _write(path, [{HEADER_KEY: {}}, "{cut"])
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        Journal(path, {}).load()
    assert caplog.records[-1].getMessage() == (
        f"{path}: skipped 1 unreadable line(s) (line 2); kept the 0 readable record(s), only the rows whose lines "
        "were lost are asked again"
    )


def test_a_rewritten_header_keeps_its_text_as_written(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    with Journal(path, {"model": "modèle-中"}, shard=(0, 2)):
        pass
    first = path.read_text(encoding="utf-8").splitlines()[0]
    with Journal(path, {"model": "modèle-中"}, shard=(1, 2)):
        pass
    rewritten = path.read_text(encoding="utf-8").splitlines()[0]
    assert '"modèle-中"' in first and '"modèle-中"' in rewritten  # as every line is written: not escaped
    assert json.loads(rewritten) == {HEADER_KEY: {"model": "modèle-中"}}


def test_a_second_record_of_an_answered_index_is_said(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    path = tmp_path / "j.jsonl"
    with Journal(path, {}) as journal, caplog.at_level(logging.WARNING, logger="vlmkit"):
        journal.append({"index": "q7", "prediction": "A", "error": None})
        assert not journal.append({"index": "q7", "prediction": "B", "error": None})
    assert caplog.records[-1].getMessage() == (
        f"{path}: index q7 was answered already in this run; its second record is not journalled")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) to make every write fail")
def test_a_full_disk_loses_only_the_lines_not_written(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, {})
    journal.open()
    journal.append({"index": 1, "prediction": "A", "error": None})
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        os.dup2(full, journal._fd)  # the journal's descriptor now writes to a device that is always full
    finally:
        os.close(full)
    with pytest.raises(OSError):
        journal.append({"index": 2, "prediction": "B", "error": None})
    assert journal.records.offset("2") is None and journal.pending == 0
    journal.append({"index": 3, "prediction": "C", "error": None}, defer=True)
    journal.append({"index": 4, "prediction": "D", "error": None}, defer=True)
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        journal.close()  # said, not raised
    assert caplog.records[-1].getMessage() == (
        f"{path}: up to 2 record(s) could not be written ([Errno 28] No space left on device); those rows are "
        "asked again on the next run")
    assert sorted(Journal(path, {}).load()) == ["1"]


def test_lock_is_idempotent_makes_its_folders_and_unlock_tolerates_a_removed_file(tmp_path: Path):
    journal = Journal(tmp_path / "a" / "b" / "j.jsonl", {})
    journal.lock()
    journal.lock()  # held already: nothing more
    assert journal.lock_path.exists()
    journal.lock_path.unlink()  # removed by someone else
    journal.unlock()
    journal.unlock()
    with Journal(journal.path, {}):
        pass


def test_the_busy_message_names_the_holder_or_says_it_is_unknown(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    holder = Journal(path, {})
    holder.lock()
    try:
        with pytest.raises(JournalBusy) as info:
            Journal(path, {}).open()
        assert str(info.value) == (f"{path}: another vlmkit run (pid {os.getpid()}) is writing this journal; let it "
                                   "finish or stop it, then run again (nothing was journalled by this run)")
        holder.lock_path.write_bytes(b"not a pid\xff")  # a holder that wrote something else
        with pytest.raises(JournalBusy, match=r"another vlmkit run \(another process\) is writing"):
            Journal(path, {}).open()
    finally:
        holder.unlock()


def test_journal_and_lock_files_follow_the_umask(tmp_path: Path):
    old = os.umask(0o022)
    try:
        journal = Journal(tmp_path / "j.jsonl", {})
        journal.open()
        lock_mode = journal.lock_path.stat().st_mode & 0o777
        journal.close()
    finally:
        os.umask(old)
    assert (tmp_path / "j.jsonl").stat().st_mode & 0o777 == 0o644 and lock_mode == 0o644


def test_no_file_has_no_fingerprint_and_no_shard(tmp_path: Path):
    journal = Journal(tmp_path / "none.jsonl", {})
    assert journal.stored_fingerprint() is None and journal.stored_shard() is None


def test_a_journal_of_blank_lines_only_gets_its_header(tmp_path: Path):
    """A journal holding nothing but blank lines (a crash after the first newline) is a new journal: opening it writes
    the header, so a rerun can check the settings its answers were asked with."""
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\n  \n")
    journal = Journal(path, {"m": 1})
    journal.open()
    journal.append({"index": "1", "prediction": "x", "error": None})
    journal.close()
    again = Journal(path, {"m": 1})
    assert again.stored_fingerprint() == {"m": 1} and not again.header_lost()
    assert again.load().line("1") is not None


def test_blank_lines_before_a_new_journals_header_are_dropped(tmp_path: Path):
    """The header is the first line (what a rerun and another shard's writer read), even where a crash left blank
    lines in an otherwise empty file."""
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\n \r\n\n")
    with Journal(path, {"m": 1}, shard=(0, 2)) as journal:
        journal.append({"index": 4, "prediction": "x", "error": None})
    header = json.dumps({HEADER_KEY: {"m": 1}, SHARD_KEY: [0, 2]}, ensure_ascii=False)
    assert path.read_bytes().split(b"\n")[0] == header.encode()
    assert _lines(path) == [json.loads(header), {"index": 4, "prediction": "x", "error": None}]


def test_another_shard_widens_a_claim_written_after_blank_lines(tmp_path: Path):
    """A journal an earlier vlmkit wrote after blank lines: its header (the first line that is not blank) still loses
    its shard claim when another shard writes the file, and every record stays where load() finds it."""
    path = tmp_path / "j.jsonl"
    a = {"index": 0, "prediction": "A", "error": None}
    path.write_bytes(b"\n\n" + json.dumps({HEADER_KEY: {"m": 1}, SHARD_KEY: [0, 2]}).encode() + b"\n"
                     + json.dumps(a).encode() + b"\n")
    assert Journal(path, {}).stored_shard() == (0, 2)
    journal = Journal(path, {"m": 1}, shard=(1, 3))
    journal.load()
    with journal:
        journal.append({"index": 5, "prediction": "B", "error": None})
        assert journal.records["0"] == a and journal.records["5"]["prediction"] == "B"
    assert Journal(path, {}).stored_shard() is None and Journal(path, {}).stored_fingerprint() == {"m": 1}
    assert _lines(path) == [{HEADER_KEY: {"m": 1}}, a, {"index": 5, "prediction": "B", "error": None}]
    assert path.read_bytes().startswith(b"{")


@pytest.mark.parametrize("tail", [b"\x0b", b"\x0c", b"X", b" X", b"\t\x0c"])
def test_a_line_is_read_as_plain_json_reads_it(tmp_path: Path, tail: bytes):
    """Each line, less its newline, is a record exactly when json.loads takes it: JSON allows trailing spaces, tabs
    and CRs but not a form feed, a vertical tab or any other character after the value."""
    path = tmp_path / "j.jsonl"
    lines = [json.dumps({HEADER_KEY: {}}).encode(), b'{"index": 1, "prediction": "A", "error": null}' + tail,
             b'{"index": 2, "prediction": "B", "error": null} \t\r']
    path.write_bytes(b"\n".join(lines) + b"\n")

    def readable(raw: bytes) -> bool:
        try:
            return isinstance(json.loads(raw.decode("utf-8")), dict)
        except ValueError:
            return False

    expected = sorted(str(json.loads(raw)["index"]) for raw in lines[1:] if readable(raw))
    assert expected == ["2"]  # worked by hand: only the second record line is JSON
    assert sorted(Journal(path, {}).load()) == expected


def test_a_records_line_is_the_files_text_less_only_its_newline(tmp_path: Path):
    """`line(key)` gives the line as the file holds it: spaces and tabs after the value (JSON allows them) are kept,
    only the line's CR LF is not."""
    path = tmp_path / "j.jsonl"
    text = '{"index": 3, "prediction": "C", "error": null} \t '
    path.write_bytes(json.dumps({HEADER_KEY: {}}).encode() + b"\n" + text.encode() + b"\r\n")
    records = Journal(path, {}).load()
    assert records.line("3") == text and records.raw("3") == text.encode()
    records.close()


def test_a_record_written_since_open_is_found_by_line_without_a_load(tmp_path: Path):
    """An opened journal that was never loaded still reads back the lines it wrote (from its own file)."""
    path = tmp_path / "j.jsonl"
    _write(path, [{HEADER_KEY: {}}, {"index": 1, "prediction": "A", "error": None}])
    record = {"index": 2, "prediction": "B", "error": None}
    journal = Journal(path, {})
    with journal:
        journal.append(record)
        assert journal.line("2", record) == json.dumps(record, ensure_ascii=False)
        assert journal.line("2", {**record, "prediction": "other"}) is None


def test_the_lock_file_is_not_inherited_by_programs_the_run_starts(tmp_path: Path):
    """A server or worker the run starts must not keep the pair locked after vlmkit ends: the lock's descriptor is
    closed on exec."""
    import fcntl

    journal = Journal(tmp_path / "j.jsonl", {})
    journal.lock()
    try:
        assert fcntl.fcntl(journal._lock_fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    finally:
        journal.unlock()


def test_a_lock_taken_after_an_open_and_close_is_still_kept_after_the_next_close(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, {})
    with journal:  # open() took the lock, close() gave it back
        pass
    assert not journal.lock_path.exists()
    journal.lock()  # now held until unlock()
    with journal:
        pass
    assert journal.lock_path.exists()
    with pytest.raises(JournalBusy):
        Journal(path, {}).open()
    journal.unlock()
    assert not journal.lock_path.exists()


@pytest.mark.parametrize("room", [1, 30])
def test_a_record_the_disk_takes_only_part_of_is_the_os_error(tmp_path: Path, room: int):
    """A real short write: the kernel's file-size limit lets `room` bytes of the record in, then refuses (EFBIG).
    The append raises that error, the record is not held, and a reread skips the half line."""
    import errno
    import resource
    import signal

    path = tmp_path / "j.jsonl"
    journal = Journal(path, {})
    journal.open()
    journal.append({"index": 1, "prediction": "A", "error": None})
    limit = path.stat().st_size + room
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        try:
            with pytest.raises(OSError) as info:
                journal.append({"index": 2, "prediction": "B" * 60, "error": None})
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    finally:
        signal.signal(signal.SIGXFSZ, old_handler)
    assert info.value.errno == errno.EFBIG
    assert path.stat().st_size == limit  # room bytes of the record reached the file
    assert "2" not in journal.records and journal.pending == 0
    journal.close()
    assert sorted(Journal(path, {}).load()) == ["1"]
