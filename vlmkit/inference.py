"""Asking a model for every pending sample and journalling each answer as it arrives.

API models run `nproc` requests at once (threads over one pooled session); local models run batches through
`generate_batch`. Either way a record reaches the journal (append + flush) the moment its answer exists, and a
failure is stored as a typed error record, never as a prediction.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from vlmkit.generation import Generation, error_record
from vlmkit.journal import Journal
from vlmkit.message import normalise_conversation


@dataclass
class Task:
    """One sample to ask the model: its index, its prompt, and the passthrough fields kept in its record."""

    index: Any
    msgs: list[Any]
    target: Any = None
    params: dict[str, Any] | None = None  # per-request generation parameters from the dataset row


def prompt_for_record(msgs: Sequence[Any]) -> list[dict[str, Any]]:
    """The prompt as stored: media as paths or URLs, data URLs replaced by their sha256 (never base64)."""
    stored = []
    for turn in normalise_conversation(msgs):
        parts = []
        for part in turn["content"]:
            value = part["value"]
            if part["type"] != "text" and value.startswith("data:"):
                value = "sha256:" + hashlib.sha256(value.encode()).hexdigest()
            parts.append({"type": part["type"], "value": value})
        stored.append({"role": turn["role"], "content": parts})
    return stored


def prompt_hash(stored_prompt: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(stored_prompt, sort_keys=True).encode()).hexdigest()[:16]


def _record(task: Task, result: Generation | BaseException, elapsed_ms: float | None) -> dict[str, Any]:
    stored = prompt_for_record(task.msgs)
    record: dict[str, Any] = {"index": task.index, "prompt": stored, "prompt_hash": prompt_hash(stored), "target": task.target}
    if task.params:
        record["params"] = task.params
    if isinstance(result, BaseException):
        record.update(prediction=None, error=error_record(result), usage=None, latency_ms=elapsed_ms)
    else:
        record.update(
            prediction=result.text,
            error=None,
            usage=result.usage.to_dict() if result.usage else None,
            latency_ms=result.latency_ms if result.latency_ms is not None else elapsed_ms,
        )
        if result.extra:
            record["extra"] = result.extra
    return record


def run_api(model: Any, tasks: Sequence[Task], journal: Journal, *, dataset: str, nproc: int, desc: str) -> int:
    """Up to nproc requests in flight; records are appended from this thread only. Returns the error count."""
    errors = 0

    def call(task: Task) -> tuple[Task, Generation | BaseException, float]:
        start = time.perf_counter()
        try:
            result: Generation | BaseException = model.generate_full(task.msgs, dataset, task.params)
        except Exception as exc:  # recorded as a typed error, retried on the next run
            result = exc
        return task, result, (time.perf_counter() - start) * 1000

    queue = iter(tasks)
    with ThreadPoolExecutor(max_workers=max(1, nproc)) as pool, tqdm(total=len(tasks), desc=desc, unit="sample") as bar:
        running: set[Future] = set()
        try:
            for task in queue:
                running.add(pool.submit(call, task))
                if len(running) >= max(1, nproc) * 2:
                    errors += _drain(wait(running, return_when=FIRST_COMPLETED).done, running, journal, bar)
            while running:
                errors += _drain(wait(running, return_when=FIRST_COMPLETED).done, running, journal, bar)
        except KeyboardInterrupt:
            for future in running:
                future.cancel()
            raise
    return errors


def _drain(done: set[Future], running: set[Future], journal: Journal, bar: tqdm) -> int:
    errors = 0
    for future in done:
        running.discard(future)
        task, result, elapsed = future.result()
        journal.append(_record(task, result, elapsed))
        errors += isinstance(result, BaseException)
        bar.update(1)
    return errors


def run_local(model: Any, tasks: Sequence[Task], journal: Journal, *, dataset: str, batch_size: int, desc: str) -> int:
    """Batches through generate_batch; a batch that raises as a whole records that error for each of its samples."""
    errors = 0
    size = max(1, batch_size)
    with tqdm(total=len(tasks), desc=desc, unit="sample") as bar:
        for start in range(0, len(tasks), size):
            batch = tasks[start : start + size]
            began = time.perf_counter()
            try:
                results: list[Generation | BaseException] = model.generate_batch(
                    [t.msgs for t in batch], dataset, [t.params for t in batch]
                )
            except Exception as exc:
                results = [exc] * len(batch)
            elapsed = (time.perf_counter() - began) * 1000 / len(batch)
            for task, result in zip(batch, results):
                journal.append(_record(task, result, elapsed))
                errors += isinstance(result, BaseException)
            bar.update(len(batch))
    return errors

