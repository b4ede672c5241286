"""A run over several models holds one at a time: after a model's last dataset the runner calls its close() and
drops it before building the next one."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

from tests.support.run_helpers import write_yorn_tsv
from vlm.base import BaseModel
from vlmkit.run.resolve import ModelSpec
from vlmkit.run.runner import RunOptions, Runner

EVENTS: list[tuple[Any, ...]] = []


class Recorder(BaseModel):
    """A model that answers "Yes" and records when it is built (with the instances still alive then) and closed."""

    alive: "weakref.WeakSet[Recorder]" = weakref.WeakSet()

    def __init__(self, name: str) -> None:
        gc.collect()
        EVENTS.append(("build", name, sorted(m.name for m in Recorder.alive)))
        self.name = name
        Recorder.alive.add(self)

    def generate(self, msgs: Any, dataset: str | None = None) -> str:
        return "Yes"

    def close(self) -> None:
        EVENTS.append(("close", self.name))


def test_each_model_is_closed_and_dropped_before_the_next_is_built(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "YN_A.tsv", n=3)
    write_yorn_tsv(lmu_root / "YN_B.tsv", n=3)
    EVENTS.clear()
    specs = [ModelSpec(name, f"{__name__}:Recorder", {"name": name}) for name in ("first", "second")]
    runner = Runner(RunOptions(work_dir=tmp_path / "out", root=lmu_root, progress=False))
    outcomes = runner.run(["YN_A", "YN_B"], specs)
    assert [o.status for o in outcomes] == ["success"] * 4
    assert EVENTS == [
        ("build", "first", []),
        ("close", "first"),  # after its last dataset, not between its datasets
        ("build", "second", []),  # the first one is gone by then
        ("close", "second"),
    ]
    gc.collect()
    assert len(Recorder.alive) == 0  # the runner keeps no reference
