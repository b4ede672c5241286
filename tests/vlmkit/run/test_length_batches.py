"""Local batches are formed from samples of similar prompt length: the shipped model gives the same greedy answers
as one sample at a time, and each batch holds prompts of nearly one size."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from vlmkit.run.inference import prompt_size, run_local
from vlmkit.run.journal import Journal
from vlmkit.run.resolve import resolve_model

TOOL = Path(__file__).resolve().parents[3] / "tools" / "bench_length_batches.py"


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_length_batches", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Recording:
    """The shipped model, remembering the prompt sizes of each batch it was given."""

    def __init__(self, model) -> None:
        self.model = model
        self.batches: list[list[int]] = []

    def generate_batch(self, msgs, dataset=None, params=None):
        self.batches.append([sum(len(p["value"]) for p in m if p["type"] == "text") for m in msgs])
        return self.model.generate_batch(msgs, dataset, params)


def answers(model, tasks, batch_size: int, by_length: bool, path: Path) -> dict:
    with Journal(path, {"test": "length"}) as journal:
        run_local(model, tasks, journal, dataset="vlmkit_demo_vqa", batch_size=batch_size, desc="t", progress=False,
                  by_length=by_length)
        return {key: rec["prediction"] for key, rec in journal.records.items()}


def test_batches_by_length_answer_as_one_at_a_time(tmp_path: Path):
    tasks = bench_module().tasks_of(32, seed=1, root=tmp_path / "LMUData")
    model = resolve_model("vlmkit-tiny").build(batch_size=8)
    try:
        recording = Recording(model)
        by_length = answers(recording, tasks, 8, True, tmp_path / "a.jsonl")
        one_by_one = answers(model, tasks, 1, False, tmp_path / "b.jsonl")
        in_order = Recording(model)
        answers(in_order, tasks, 8, False, tmp_path / "c.jsonl")
    finally:
        model.close()
    assert by_length == one_by_one and len(by_length) == 32
    spread = [max(b) - min(b) for b in recording.batches]
    spread_in_order = [max(b) - min(b) for b in in_order.batches]
    assert sum(spread) < sum(spread_in_order) / 2  # similar lengths together: far less padding
    assert sorted(s for b in recording.batches for s in b) == sorted(s for b in in_order.batches for s in b)


def test_prompt_size_counts_media_and_text():
    from vlmkit.run.inference import Task

    task = Task(index=0, msgs=[{"type": "image", "value": "/x.png"}, {"type": "text", "value": "abc"},
                               {"type": "image", "value": "/y.png"}])
    assert prompt_size(task) == (2, 3)
