"""vlmkit.run.resume's two decisions on real files: a journal of other settings is set aside with the result files
made from it (or kept under --reuse), and a journalled request is the same when its prompt (media by content) and
row parameters are."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from vlmkit.run.journal import Journal
from vlmkit.run.resume import request_fields, same_request, set_aside_stale

OLD = {"model": "served", "target": "t", "model_kwargs": {"model": "m", "max_tokens": 8}, "dataset": "D",
       "dataset_md5": "0" * 32}


def written_journal(path: Path) -> None:
    with Journal(path, OLD) as journal:
        journal.append({"index": 0, "prediction": "Yes", "error": None})


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, list[Path]]:
    run_dir = tmp_path / "served" / "D"
    written_journal(run_dir / "journal.jsonl")
    results = [run_dir / "results.json", run_dir / "predictions.jsonl", tmp_path / "served" / "served_D.xlsx"]
    for path in results:
        path.write_text("from the old settings")
    missing = tmp_path / "served" / "served_D_acc.csv"  # never written: nothing to move
    return run_dir, [*results, missing]


def test_other_settings_set_the_journal_and_its_result_files_aside(pair, caplog):
    run_dir, files = pair
    journal = Journal(run_dir / "journal.jsonl", {**OLD, "model_kwargs": {"model": "m", "max_tokens": 16}})
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        set_aside_stale(journal, files, reuse=False)
    assert not (run_dir / "journal.jsonl").exists() and (run_dir / "journal.stale1.jsonl").is_file()
    assert [p.exists() for p in files] == [False, False, False, False]
    assert {p.name for p in run_dir.parent.rglob("*.stale1.*")} == {
        "journal.stale1.jsonl", "results.stale1.json", "predictions.stale1.jsonl", "served_D.stale1.xlsx"}
    assert (run_dir / "results.stale1.json").read_text() == "from the old settings"  # kept, never deleted
    [message] = caplog.messages
    assert "(max_tokens differ)" in message and "moved to journal.stale1.jsonl" in message
    assert "(with results.stale1.json, predictions.stale1.jsonl, served_D.stale1.xlsx)" in message
    assert journal.current() == {}  # nothing of the old file is held


def test_reuse_keeps_them_and_says_so(pair, caplog):
    run_dir, files = pair
    journal = Journal(run_dir / "journal.jsonl", {**OLD, "dataset_md5": "1" * 32})
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        set_aside_stale(journal, files, reuse=True)
    assert (run_dir / "journal.jsonl").is_file() and all(p.exists() for p in files[:3])
    assert caplog.messages == [f"{run_dir / 'journal.jsonl'} was written under other settings (dataset_md5 differ); "
                               "--reuse keeps its answers"]


def test_the_same_settings_elsewhere_move_nothing(pair, caplog):
    run_dir, files = pair
    moved_server = {**OLD, "model_kwargs": {"model": "m", "max_tokens": 8, "api_base": "http://10.0.0.1:9/v1"}}
    with caplog.at_level(logging.WARNING, logger="vlmkit"):
        set_aside_stale(Journal(run_dir / "journal.jsonl", moved_server), files, reuse=False)
        set_aside_stale(Journal(run_dir / "new" / "journal.jsonl", OLD), files, reuse=False)  # no journal yet
    assert caplog.messages == [] and (run_dir / "journal.jsonl").is_file() and all(p.exists() for p in files[:3])


def test_a_request_is_its_prompt_by_content_and_its_parameters(tmp_path: Path):
    image = tmp_path / "0.png"
    image.write_bytes(b"\x89PNG first picture")
    msgs = [{"type": "image", "value": str(image)}, {"type": "text", "value": "Red?"}]
    record = {**request_fields(msgs), "params": {"max_tokens": 8}}
    assert record["prompt"] == [{"role": "user", "content": msgs}] and record["prompt_digest"] != record["prompt_hash"]
    assert same_request(record, msgs, {"max_tokens": 8})
    assert not same_request(record, msgs, None) and not same_request(record, msgs, {"max_tokens": 9})
    assert not same_request(record, [msgs[0], {"type": "text", "value": "Blue?"}], {"max_tokens": 8})
    moved = tmp_path / "elsewhere" / "0.png"  # the same picture at another path: the same request
    moved.parent.mkdir()
    moved.write_bytes(image.read_bytes())
    assert same_request(record, [{"type": "image", "value": str(moved)}, msgs[1]], {"max_tokens": 8})
    image.write_bytes(b"\x89PNG another picture, rewritten in place")
    assert not same_request(record, msgs, {"max_tokens": 8})


def test_records_written_before_the_digest_or_by_another_tool():
    msgs = ["What is 1+1?"]
    fields = request_fields(msgs)
    assert fields["prompt_digest"] == fields["prompt_hash"]  # no local media: the digest is the hash
    by_hash = {"prompt_hash": fields["prompt_hash"]}
    assert same_request(by_hash, msgs, None) and not same_request(by_hash, ["What is 2+2?"], None)
    assert same_request({}, ["anything"], None)  # neither: taken as it is
    assert same_request({"prompt_hash": None, "params": {"stop": ["x"]}}, msgs, {"stop": ("x",)})  # JSON form
