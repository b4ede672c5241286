"""Memory flat in the run's length: every finished request's line is on disk, no record is held once it is written,
and what a level keeps (its tally, timeline and samples) is the same size at 10x the requests. Counted in objects
and bytes of what the level returns, against the instant mock server: no clock in any assertion."""

from __future__ import annotations

import gc
import json
import pickle
import threading
import types
from pathlib import Path
from typing import Any

import pytest

from vlmkit.perf import digest as digest_module
from vlmkit.perf.client import Record
from vlmkit.perf.collect import Collector, RequestLines
from vlmkit.perf.requests import PreparedRequests
from vlmkit.perf.schedule import LevelPlan, LevelRun, Target, run_level

WARMUP = 2


def _held_objects(root: Any) -> int:
    """How many distinct objects `root` reaches (gc referents, transitively; classes and modules are not entered)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if not isinstance(obj, (type, types.ModuleType)):
            todo.extend(gc.get_referents(obj))
    return len(seen)


def _level(mock: Any, tmp_path: Path, n: int, keep_replies: bool = False) -> tuple[LevelRun, list[dict[str, Any]]]:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3,
                       "stream": True, "stream_options": {"include_usage": True}}).encode()
    prepared = PreparedRequests(bodies=[body] * 3, max_tokens=[3] * 3, index=["a", "b", "c"], build_s=0.0,
                                keep_replies=keep_replies)
    plan = LevelPlan("c=8", False, slots=8, warmup_ids=range(WARMUP), ids=range(WARMUP, WARMUP + n), id_start=WARMUP)
    target = Target(mock.base_url + "/chat/completions", {"Content-Type": "application/json"}, 30.0)
    path = tmp_path / f"lines-{n}-{keep_replies}.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        collect = Collector([target.url], {}, RequestLines(handle, plan.label, prepared.index, []))
        run = run_level(plan, prepared, target, threading.Event(), collect=collect)
    return run, [json.loads(x) for x in path.read_text().splitlines()]


@pytest.mark.parametrize("keep_replies", [False, True], ids=["figures", "score"])
def test_every_request_is_on_disk_and_the_level_does_not_grow(mock_server, tmp_path: Path, keep_replies: bool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """With --score (keep_replies) each answer's text goes to its line and leaves memory with its record."""
    monkeypatch.setattr(digest_module, "EXACT_LIMIT", 32)  # both lengths past the exact limit: histograms
    mock = mock_server("--ttft-ms", "0", "--itl-ms", "0", "--tokens", "3")
    sizes = {}
    for n in (150, 1500):
        run, lines = _level(mock, tmp_path, n, keep_replies)
        if keep_replies:  # the mock's answer: 3 tokens of "tok ", cut at max_tokens 3
            assert {(line.get("reply"), line.get("cut_off")) for line in lines} == {("tok tok tok ", True)}
        else:
            assert all("reply" not in line for line in lines)
        # the file holds every request once, warm-up first, each with its figures
        assert sorted(line["n"] for line in lines) == list(range(WARMUP + n))
        assert [line["warmup"] for line in lines[:WARMUP]] == [True] * WARMUP
        assert sum(line["ok"] for line in lines) == WARMUP + n
        assert run.tally.measured == run.tally.ok == n and run.sent == n and run.warmup == WARMUP
        assert run.tally.summary()["e2el_ms"]["n"] == n
        gc.collect()
        # no record outlives its line (type(), not isinstance: a deprecated torch alias warns when asked its class)
        assert sum(type(o) is Record for o in gc.get_objects()) == 0
        sizes[n] = (_held_objects(run), len(pickle.dumps(run)))
    (objects_short, bytes_short), (objects_long, bytes_long) = sizes[150], sizes[1500]
    # 1350 more requests: a held record was ~2 KB and several objects each; the level keeps neither
    assert objects_long - objects_short < 50, sizes
    assert bytes_long - bytes_short < 20_000, sizes
