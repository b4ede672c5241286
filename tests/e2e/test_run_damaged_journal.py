"""A damaged journal costs no more than its damaged lines: a rerun keeps every readable record, asks again only the
rows whose lines were lost, and says in one line how many lines were skipped and where (issue 22)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.support.run_helpers import chat_only, chat_requests, row_of, run_served, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply

N = 8
DASH = "\u2014"  # three bytes in UTF-8: a short write can end inside it


def answer(request: Recorded) -> Reply:
    return chat_reply(f"Yes {DASH} row {row_of(request)}")


def journalled_then_damaged(lmu_root: Path, tmp_path: Path, damage: Callable[[Path], list[int]]
                            ) -> tuple[list[int], list[int], str, list[str]]:
    """Run once (every row answered), damage the journal (damage returns the rows whose lines it destroyed), run
    twice more; the rows lost, the rows each rerun asked, and the first rerun's warning lines."""
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)
    work = tmp_path / "out"
    journal = work / "served" / "MyYN" / "journal.jsonl"
    with FaultServer(chat_only(answer)) as server:
        first = run_served(server.base_url, work, lmu_root)
        assert first.returncode == 0, first.stderr
        assert len(chat_requests(server.requests)) == N
        lost = damage(journal)
        asked, warnings = [], []
        for _ in range(2):
            before = len(chat_requests(server.requests))
            again = run_served(server.base_url, work, lmu_root)
            assert again.returncode == 0, again.stderr
            asked.append(sorted(row_of(r) for r in chat_requests(server.requests)[before:]))
            warnings.append([line for line in again.stderr.splitlines() if "unreadable" in line])
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["status"] == "success" and results["counts"]["completed"] == N
    return lost, asked, journal.name, warnings[0]


def lines_of(journal: Path) -> list[bytes]:
    return journal.read_bytes().split(b"\n")[:-1]


def index_of(line: bytes) -> int:
    return json.loads(line)["index"]


def test_a_nul_filled_header_keeps_every_record(lmu_root: Path, tmp_path: Path):
    def damage(journal: Path) -> list[int]:
        lines = lines_of(journal)
        lines[0] = b"\0" * len(lines[0])  # a power loss: the header's blocks read back as zeros
        journal.write_bytes(b"\n".join(lines) + b"\n")
        return []

    lost, asked, name, warnings = journalled_then_damaged(lmu_root, tmp_path, damage)
    assert asked == [lost, []]  # nothing asked again: no row's line was lost
    [warning] = warnings
    assert name in warning and "skipped 1 unreadable line(s) (line 1)" in warning


def test_a_line_that_is_not_utf8_costs_only_its_row(lmu_root: Path, tmp_path: Path):
    def damage(journal: Path) -> list[int]:
        lines = lines_of(journal)
        row = index_of(lines[4])
        lines[4] = lines[4].replace(DASH.encode(), b"\xff\xfe")  # still JSON, no longer UTF-8
        journal.write_bytes(b"\n".join(lines) + b"\n")
        return [row]

    lost, asked, name, warnings = journalled_then_damaged(lmu_root, tmp_path, damage)
    assert asked == [lost, []]
    [warning] = warnings
    assert name in warning and "skipped 1 unreadable line(s) (line 5)" in warning


def test_a_last_line_cut_inside_a_character_costs_only_its_row(lmu_root: Path, tmp_path: Path):
    def damage(journal: Path) -> list[int]:
        data = journal.read_bytes()
        last = lines_of(journal)[-1]
        cut = data.rindex(DASH.encode()) + 1  # one byte of the three: a short write on a full disk
        journal.write_bytes(data[:cut])
        return [index_of(last)]

    lost, asked, name, warnings = journalled_then_damaged(lmu_root, tmp_path, damage)
    assert asked == [lost, []]
    [warning] = warnings
    assert name in warning and f"skipped 1 unreadable line(s) (line {N + 1})" in warning
