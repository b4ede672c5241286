"""vlmkit.run.distributed's marker files, in one process: ranks of one launch as RankGroup objects over one real
folder (tests/vlmkit/run/test_distributed_hang.py runs real torchrun launches end to end)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from vlmkit.run.distributed import RankGroup, RanksMissing, pair_step


def _ranks(folder: Path, world: int, timeout_s: float = 30.0) -> list[RankGroup]:
    return [RankGroup(folder, rank, world, timeout_s) for rank in range(world)]


def test_pair_markers_are_short_safe_names_distinct_per_pair():
    names = {pair_step(m, d) for m, d in [("a", "bc"), ("ab", "c"), ("a/b", "c d"), ("a", "bc ")]}
    assert len(names) == 4  # the separator keeps ("a", "bc") and ("ab", "c") apart
    assert all(re.fullmatch(r"pair-[0-9a-f]{16}", n) for n in names)
    assert pair_step("model/x", "Data set: 1") == pair_step("model/x", "Data set: 1")


def test_rank_zero_gets_every_ranks_status_once_all_arrived(tmp_path: Path):
    zero, one, two = _ranks(tmp_path / "launch", 3)
    for group, status in ((zero, "inferred"), (one, "stopped"), (two, "")):
        group.arrive("pair-x", status)
    assert zero.wait_for_all("pair-x", "MCQ") == {0: "inferred", 1: "stopped", 2: ""}
    # written whole: no temporary file is left beside the markers
    assert sorted(p.name for p in (tmp_path / "launch").iterdir()) == ["pair-x.rank0", "pair-x.rank1", "pair-x.rank2"]


def test_a_rank_arriving_late_is_waited_for(tmp_path: Path):
    zero, one = _ranks(tmp_path, 2)
    zero.arrive("step")
    late = threading.Timer(0.2, one.arrive, args=("step", "skipped"))
    late.start()
    try:
        assert zero.wait_for_all("step", "pair")[1] == "skipped"
    finally:
        late.join()


def test_a_missing_rank_is_named_once_then_not_waited_for_again(tmp_path: Path):
    zero, one, two = _ranks(tmp_path, 3, timeout_s=0.3)
    zero.arrive("first")
    one.arrive("first")
    with pytest.raises(RanksMissing, match=r"MCQ: rank\(s\) 2 of 3 never arrived within 0.3 s"):
        zero.wait_for_all("first", "MCQ")
    assert zero.gone == {2}
    zero.timeout_s = 3600.0  # a later pair does not wait for a rank already missing
    zero.arrive("second")
    one.arrive("second")
    with pytest.raises(RanksMissing, match="already missing at an earlier pair"):
        zero.wait_for_all("second", "VQA")
    # a rank missing for the first time beside one already gone is said to have never arrived
    zero.arrive("third")
    with pytest.raises(RanksMissing, match=r"rank\(s\) 1, 2 of 3 never arrived"):
        zero.wait_for_all("third", "OCR")
    assert zero.gone == {1, 2}


def test_a_single_process_has_no_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert RankGroup.start(tmp_path) is None
    assert not any(tmp_path.iterdir())
