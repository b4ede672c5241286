"""Independent shards (`vlmkit run --shard I/N`, then `--merge`): real `vlmkit` processes against a real local server.

Two shards in two processes plus a merge give what one process gives (the same predictions, the same score, each
row asked once); a shard killed mid-run and run again alone asks only its missing rows; a new split (N=2, then N=3)
asks nothing again; a merge with a shard missing names it and scores nothing; the last shard to finish may score."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.run_helpers import chat_only, chat_requests, row_of, run_served, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlmkit.cli import exit_codes
from vlmkit.core.errors import ConfigError
from vlmkit.run.shards import Shard, may_overlap, parse_shard

N_ROWS = 10


def odd_says_yes(request: Recorded) -> Reply:
    """Row i is answered Yes when i is odd; the TSV's reference is Yes unless i % 3 == 0 (write_yorn_tsv)."""
    return chat_reply("Yes" if row_of(request) % 2 else "No")


# By hand: the rows where (i is odd) == (i % 3 != 0), for i in 0..9: 0, 1, 5, 6, 7 -> 5 of 10.
EXPECTED_RIGHT = 5


def asked_rows(server: FaultServer) -> Counter:
    return Counter(row_of(r) for r in chat_requests(server.requests))


def predictions(work: Path) -> dict[int, str | None]:
    lines = (work / "served" / "MyYN" / "predictions.jsonl").read_text().splitlines()
    return {json.loads(line)["index"]: json.loads(line)["prediction"] for line in lines if line.strip()}


def results(work: Path) -> dict:
    return json.loads((work / "served" / "MyYN" / "results.json").read_text())


def served_popen(api_base: str, work: Path, lmu: Path, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "vlmkit.cli", "run", "--data", "MyYN", "--model", "served", "--api-base", api_base,
           "--work-dir", str(work), "--retries", "0", *extra]
    return subprocess.Popen(cmd, env={**os.environ, "LMUData": str(lmu)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


# -- the split itself -----------------------------------------------------------------------------------------------
def test_parse_shard_reads_i_of_n_and_refuses_the_rest():
    assert parse_shard("0/1") == Shard(0, 1)
    assert parse_shard(" 3 / 4 ") == Shard(3, 4)
    for bad in ("4/4", "1/0", "-1/2", "a/b", "1", "1/2/3", ""):
        with pytest.raises(ConfigError, match="--shard"):
            parse_shard(bad)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("m", range(1, 7))
def test_may_overlap_agrees_with_the_positions_themselves(n: int, m: int):
    rows = 2 * n * m  # a whole period of both splits: any common position appears in it
    for i in range(n):
        for j in range(m):
            common = set(Shard(i, n).positions(rows)) & set(Shard(j, m).positions(rows))
            assert may_overlap((i, n), (j, m)) == bool(common)
    assert may_overlap(None, (0, n)) and may_overlap((0, n), None)


def test_every_row_is_in_exactly_one_shard():
    for n in range(1, 8):
        seen = Counter(p for i in range(n) for p in Shard(i, n).positions(23))
        assert sorted(seen) == list(range(23)) and set(seen.values()) == {1}


# -- real processes ---------------------------------------------------------------------------------------------------
def test_two_shards_in_two_processes_and_a_merge_equal_one_process(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N_ROWS)
    with FaultServer(chat_only(odd_says_yes)) as server:
        whole = run_served(server.base_url, tmp_path / "one", lmu_root)
        assert whole.returncode == exit_codes.OK, whole.stderr
        before = len(chat_requests(server.requests))
        shards = [served_popen(server.base_url, tmp_path / "sharded", lmu_root, "--shard", f"{i}/2") for i in (0, 1)]
        outputs = [p.communicate(timeout=300) for p in shards]
        assert [p.returncode for p in shards] == [exit_codes.OK, exit_codes.OK], outputs
        assert not (tmp_path / "sharded" / "served" / "MyYN" / "results.json").exists()  # a shard scores nothing
        merged = run_served(server.base_url, tmp_path / "sharded", lmu_root, "--merge")
        assert merged.returncode == exit_codes.OK, merged.stderr
        sharded_asks = Counter(row_of(r) for r in chat_requests(server.requests)[before:])

    assert sorted(sharded_asks) == list(range(N_ROWS)) and set(sharded_asks.values()) == {1}  # each row once
    run_dir = tmp_path / "sharded" / "served" / "MyYN"
    held = {i: sorted(json.loads(x)["index"]
                      for x in (run_dir / f"journal.shard{i}of2.jsonl").read_text().splitlines()[1:]) for i in (0, 1)}
    assert held == {0: [0, 2, 4, 6, 8], 1: [1, 3, 5, 7, 9]}
    assert predictions(tmp_path / "sharded") == predictions(tmp_path / "one")
    one, both = results(tmp_path / "one"), results(tmp_path / "sharded")
    assert both["scoring"]["metrics"] == one["scoring"]["metrics"]
    assert both["status"] == one["status"] == "success"
    assert both["counts"]["completed"] == N_ROWS
    assert both["scoring"]["metrics"]["Overall"] == pytest.approx(100 * EXPECTED_RIGHT / N_ROWS)  # by hand
    hits = [json.loads(x)["hit"] for x in (run_dir / "predictions.jsonl").read_text().splitlines() if x.strip()]
    assert sum(hits) == EXPECTED_RIGHT


def test_a_shard_killed_mid_run_is_run_again_alone_and_asks_only_its_missing_rows(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N_ROWS)
    held_row = 7  # shard 1/2 takes 1, 3, 5, 7, 9: the server holds row 7 until the shard has been killed
    release = threading.Event()

    def responder(request: Recorded) -> Reply:
        if row_of(request) == held_row:
            release.wait(timeout=120)
        return odd_says_yes(request)

    work = tmp_path / "out"
    with FaultServer(chat_only(responder)) as server:
        shard = served_popen(server.base_url, work, lmu_root, "--shard", "1/2", "--nproc", "1")
        try:
            deadline = time.monotonic() + 180  # a bound on getting there, not a timing assertion
            while time.monotonic() < deadline and shard.poll() is None and held_row not in asked_rows(server):
                time.sleep(0.05)
            assert shard.poll() is None, shard.communicate()
            shard.send_signal(signal.SIGKILL)
            shard.communicate(timeout=60)
        finally:
            if shard.poll() is None:
                shard.kill()
                shard.wait()
            release.set()
        first = asked_rows(server)
        assert sorted(first) == [1, 3, 5, 7]  # nproc 1: rows in order, 7 in flight when killed
        again = run_served(server.base_url, work, lmu_root, "--shard", "1/2")
        assert again.returncode == exit_codes.OK, again.stderr
        second = asked_rows(server) - first
        assert sorted(second.elements()) == [7, 9]  # only the rows with no answer
        other = run_served(server.base_url, work, lmu_root, "--shard", "0/2")
        merged = run_served(server.base_url, work, lmu_root, "--merge")
    assert other.returncode == merged.returncode == exit_codes.OK, (other.stderr, merged.stderr)
    assert results(work)["counts"]["completed"] == N_ROWS


def test_a_new_split_reuses_every_answer(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N_ROWS)
    work = tmp_path / "out"
    with FaultServer(chat_only(odd_says_yes)) as server:
        for i in (0, 1):
            assert run_served(server.base_url, work, lmu_root, "--shard", f"{i}/2").returncode == exit_codes.OK
        asked = len(chat_requests(server.requests))
        three = [run_served(server.base_url, work, lmu_root, "--shard", f"{i}/3") for i in range(3)]
        assert len(chat_requests(server.requests)) == asked == N_ROWS  # N=3 asks nothing again
        merged = run_served(server.base_url, work, lmu_root, "--merge")
    assert [r.returncode for r in three] == [exit_codes.OK] * 3, [r.stderr for r in three]
    assert all("already answered, nothing to ask" in r.stdout for r in three)
    assert merged.returncode == exit_codes.OK, merged.stderr
    assert results(work)["counts"]["completed"] == N_ROWS


def test_a_merge_with_a_shard_missing_names_it_and_scores_nothing(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N_ROWS)
    work = tmp_path / "out"
    with FaultServer(chat_only(odd_says_yes)) as server:
        for i in (0, 2):
            assert run_served(server.base_url, work, lmu_root, "--shard", f"{i}/3").returncode == exit_codes.OK
        merged = run_served(server.base_url, work, lmu_root, "--merge")
        nothing = run_served(server.base_url, tmp_path / "empty", lmu_root, "--merge")
        asked = len(chat_requests(server.requests))
    assert merged.returncode == exit_codes.SAMPLES_FAILED
    lines = [line for line in merged.stderr.splitlines() if line.strip()]
    # shard 1/3 takes rows 1, 4, 7: three rows, and it never wrote a journal
    assert len(lines) == 1 and "3 of 10 row(s) have no answer" in lines[0], merged.stderr
    assert "shard 1/3 (3 row(s), no journal)" in lines[0]
    assert not (work / "served" / "MyYN" / "results.json").exists()
    assert not list((work / "served").glob("*.xlsx"))
    assert nothing.returncode == exit_codes.SAMPLES_FAILED and "no shard has journalled anything" in nothing.stderr
    assert asked == 7  # the merges asked nothing


def test_the_last_shard_to_finish_scores_with_merge(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N_ROWS)
    work = tmp_path / "out"
    with FaultServer(chat_only(odd_says_yes)) as server:
        first = run_served(server.base_url, work, lmu_root, "--shard", "0/2", "--merge")
        assert first.returncode == exit_codes.OK, first.stderr
        assert not (work / "served" / "MyYN" / "results.json").exists()  # not the last: nothing scored
        assert "shard 0/2 done" in first.stdout and "1/2" in first.stdout
        last = run_served(server.base_url, work, lmu_root, "--shard", "1/2", "--merge")
    assert last.returncode == exit_codes.OK, last.stderr
    done = results(work)
    assert done["status"] == "success" and done["counts"]["completed"] == N_ROWS


def test_shard_and_merge_refuse_other_modes(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=2)
    for extra in (("--shard", "0/2", "--mode", "eval"), ("--merge", "--mode", "infer"), ("--shard", "2/2")):
        result = run_served("http://127.0.0.1:9/v1", tmp_path / "out", lmu_root, *extra)
        assert result.returncode == exit_codes.BAD_INPUT, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and extra[0] in result.stderr


# -- the journals of a split ------------------------------------------------------------------------------------------
def test_a_shards_journal_says_its_shard_and_another_split_widens_the_claim(tmp_path: Path):
    from vlmkit.run.journal import Journal

    path = tmp_path / "journal.rank1.jsonl"
    with Journal(path, {"run": 1}, shard=(1, 2)) as journal:
        journal.append({"index": 1, "prediction": "a", "error": None})
    assert Journal(path, {"run": 1}).stored_shard() == (1, 2)
    with Journal(path, {"run": 1}, shard=(1, 2)) as journal:  # the same shard again: the file is only appended
        journal.append({"index": 3, "prediction": "b", "error": None})
    assert Journal(path, {"run": 1}).stored_shard() == (1, 2)
    with Journal(path, {"run": 1}, shard=(1, 3)) as journal:  # torchrun with 3 ranks reuses the name
        journal.append({"index": 4, "prediction": "c", "error": None})
    reread = Journal(path, {"run": 1})
    assert reread.stored_shard() is None  # it may hold any row now: every later run reads it
    assert reread.stored_fingerprint() == {"run": 1}
    assert {k: r["prediction"] for k, r in reread.load().items()} == {"1": "a", "3": "b", "4": "c"}


def test_a_shard_reads_no_journal_whose_rows_cannot_be_its_own(lmu_root: Path, tmp_path: Path):
    """A journal claiming shard 1/2 is not read by shard 0/2 (whose rows it cannot hold): a record planted there for
    row 0 is not taken, and row 0 is asked. The merge, which reads every journal, finds every row answered."""
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=4)
    work = tmp_path / "out"
    with FaultServer(chat_only(odd_says_yes)) as server:
        assert run_served(server.base_url, work, lmu_root, "--shard", "1/2").returncode == exit_codes.OK
        journal = work / "served" / "MyYN" / "journal.shard1of2.jsonl"
        planted = json.loads(journal.read_text().splitlines()[1])
        with journal.open("a") as handle:
            handle.write(json.dumps({**planted, "index": 0}) + "\n")
        first = asked_rows(server)
        assert run_served(server.base_url, work, lmu_root, "--shard", "0/2").returncode == exit_codes.OK
        assert sorted((asked_rows(server) - first).elements()) == [0, 2]
        merged = run_served(server.base_url, work, lmu_root, "--merge")
    assert merged.returncode == exit_codes.OK, merged.stderr
