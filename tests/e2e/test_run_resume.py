"""Resume keeps every answer that still holds: the fingerprint ignores where the server is, a row whose prompt
changed is asked again (and said so), and `--mode eval` never moves a journal or replaces better results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.run_helpers import (
    answer_yes,
    chat_only,
    chat_requests,
    probes,
    row_of,
    run_served,
    stderr_lines,
    write_yorn_tsv,
)
from tests.support.servers import FaultServer

N = 8


@pytest.fixture
def yorn(lmu_root: Path) -> Path:
    return write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)


run = run_served


def run_dir(work: Path) -> Path:
    return work / "served" / "MyYN"


def snapshot(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in work.rglob("*") if p.is_file()}


def test_another_port_or_spelling_of_the_url_asks_nothing_again(yorn: Path, lmu_root: Path, tmp_path: Path):
    work = tmp_path / "out"
    with FaultServer(chat_only(answer_yes)) as first:
        assert run(first.base_url, work, lmu_root, "--timeout", "30", "--retries", "1").returncode == 0
        assert len(chat_requests(first.requests)) == N
    with FaultServer(chat_only(answer_yes)) as moved:  # restarted on another port, the URL written in full
        assert moved.port != first.port
        again = run(f"{moved.base_url}/chat/completions", work, lmu_root, "--timeout", "60", "--nproc", "3")
        asked = len(chat_requests(moved.requests))
    assert again.returncode == 0, again.stderr
    assert asked == 0  # nothing re-asked
    assert [p.name for p in run_dir(work).iterdir() if "stale" in p.name] == []  # no journal moved aside
    assert "other settings" not in again.stderr
    results = json.loads((run_dir(work) / "results.json").read_text())
    assert results["status"] == "success" and results["counts"]["completed"] == N


def test_a_row_whose_prompt_changed_is_asked_again_with_a_note(yorn: Path, lmu_root: Path, tmp_path: Path):
    """A journal written by code that built other prompts (simulated: row 2's prompt_digest rewritten; rows 5 and
    6 as written before records had a prompt_digest, row 5 with another prompt_hash)."""
    work = tmp_path / "out"
    with FaultServer(chat_only(answer_yes)) as server:
        assert run(server.base_url, work, lmu_root).returncode == 0
        journal = run_dir(work) / "journal.jsonl"
        lines = journal.read_text().splitlines()
        records = [json.loads(line) for line in lines[1:]]
        for record in records:
            if record["index"] == 2:
                record["prompt_digest"] = "0" * 16
            if record["index"] in (5, 6):
                del record["prompt_digest"]
            if record["index"] == 5:
                record["prompt_hash"] = "0" * 16
        journal.write_text("\n".join([lines[0], *(json.dumps(r) for r in records)]) + "\n")
        before = len(chat_requests(server.requests))
        again = run(server.base_url, work, lmu_root)
        asked = sorted(row_of(r) for r in chat_requests(server.requests)[before:])
    assert again.returncode == 0, again.stderr
    assert asked == [2, 5]
    assert "2 journalled answer(s) were asked with another prompt" in again.stderr and "index 2, 5" in again.stderr
    results = json.loads((run_dir(work) / "results.json").read_text())
    assert any("2 journalled answer(s)" in note for note in results["notes"])
    assert results["counts"]["completed"] == N


def test_moving_lmudata_elsewhere_asks_nothing_again(yorn: Path, lmu_root: Path, tmp_path: Path):
    """Prompts are compared with each picture taken by its content: the decoded images' new paths change nothing."""
    work = tmp_path / "out"
    with FaultServer(chat_only(answer_yes)) as server:
        assert run(server.base_url, work, lmu_root).returncode == 0
        moved = tmp_path / "elsewhere" / "LMUData"
        moved.mkdir(parents=True)
        (moved / "MyYN.tsv").write_bytes(yorn.read_bytes())
        before = len(chat_requests(server.requests))
        again = run(server.base_url, work, moved)
        asked = len(chat_requests(server.requests)) - before
    assert again.returncode == 0, again.stderr
    assert asked == 0 and "asked again" not in again.stderr
    journal = [json.loads(line) for line in (run_dir(work) / "journal.jsonl").read_text().splitlines()[1:]]
    assert all(str(lmu_root) in r["prompt"][0]["content"][0]["value"] for r in journal)  # asked under the old root


def test_eval_under_other_settings_scores_the_journal_without_moving_it(yorn: Path, lmu_root: Path, tmp_path: Path):
    work = tmp_path / "out"
    with FaultServer(chat_only(answer_yes)) as server:
        assert run(server.base_url, work, lmu_root).returncode == 0
        journal_before = (run_dir(work) / "journal.jsonl").read_bytes()
        before = len(server.requests)
        evaluated = run(server.base_url, work, lmu_root, "--mode", "eval", "--max-tokens", "7")
        after = server.requests[before:]
        assert chat_requests(after) == [] and probes(after) == []  # eval asks nothing (not even the probe)
    assert evaluated.returncode == 0, evaluated.stderr
    assert sorted(p.name for p in run_dir(work).glob("journal*")) == ["journal.jsonl"]
    assert (run_dir(work) / "journal.jsonl").read_bytes() == journal_before
    assert "max_tokens" in evaluated.stderr and "scoring its answers as they are" in evaluated.stderr
    results = json.loads((run_dir(work) / "results.json").read_text())
    assert results["status"] == "success" and results["counts"]["completed"] == N
    assert results["scoring"]["primary_metric"]["value"] > 0 and any("other settings" in n for n in results["notes"])


def test_eval_with_no_answers_writes_nothing(yorn: Path, lmu_root: Path, tmp_path: Path):
    work = tmp_path / "out"
    result = run("http://127.0.0.1:9/v1", work, lmu_root, "--mode", "eval")
    assert result.returncode == 2
    [line] = stderr_lines(result)
    assert line.startswith("vlmkit: error: served x MyYN: no answer to score")
    assert snapshot(work) == {}


def test_eval_never_replaces_results_that_hold_more_answers(yorn: Path, lmu_root: Path, tmp_path: Path):
    work = tmp_path / "out"
    with FaultServer(chat_only(answer_yes)) as server:
        assert run(server.base_url, work, lmu_root).returncode == 0
    journal = run_dir(work) / "journal.jsonl"
    journal.write_text("\n".join(journal.read_text().splitlines()[:4]) + "\n")  # header + 3 answers left
    written = snapshot(work)
    result = run("http://127.0.0.1:9/v1", work, lmu_root, "--mode", "eval")
    assert result.returncode == 2
    [line] = stderr_lines(result)
    assert f"holds {N} answers, the journals only 3" in line and "not overwritten" in line
    assert snapshot(work) == written  # results.json, the xlsx and the score csv untouched


def test_a_run_under_other_settings_sets_aside_the_earlier_score_files(yorn: Path, lmu_root: Path, tmp_path: Path):
    """The earlier settings' _score.csv and xlsx go aside with their journal: a later run that scores nothing must
    not leave them standing beside its own results.json, where a score collector would read them as current."""
    from tests.support.servers import Reply

    work = tmp_path / "out"
    with FaultServer(chat_only(answer_yes)) as server:
        assert run(server.base_url, work, lmu_root).returncode == 0
    model_dir = work / "served"
    score, xlsx = model_dir / "served_MyYN_score.csv", model_dir / "served_MyYN.xlsx"
    earlier = score.read_bytes()
    with FaultServer(chat_only(lambda request: Reply(500, {"error": {"message": "down"}}))) as server:
        again = run(server.base_url, work, lmu_root, "--max-tokens", "7", "--retries", "0")
    assert again.returncode == 3, again.stderr
    assert not score.exists() and not xlsx.exists()
    assert (model_dir / "served_MyYN_score.stale1.csv").read_bytes() == earlier
    assert (model_dir / "served_MyYN.stale1.xlsx").is_file()
    assert (run_dir(work) / "journal.stale1.jsonl").is_file() and (run_dir(work) / "results.stale1.json").is_file()
    assert json.loads((run_dir(work) / "results.json").read_text())["status"] == "failed"
