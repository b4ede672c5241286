"""Asking a model for every pending sample and journalling each answer as it arrives.

API models run `nproc` requests at once (daemon worker threads; this thread journals); local models run batches
through `generate_batch`. Either way a record reaches the journal (append + flush) the moment its answer exists, and a
failure is stored as a typed error record, never as a prediction.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tqdm import tqdm

from vlmkit.failures import RunStopped
from vlmkit.files import md5_of
from vlmkit.generation import Generation, error_record
from vlmkit.journal import Journal
from vlmkit.message import normalise_conversation
from vlmkit.reasoning import split_reasoning


# Called with each record as it is journalled; a message (one line) stops the run (vlmkit.failures.FirstFailures).
Watch = Callable[[dict[str, Any]], "str | None"]


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
    """The stored prompt's hash (media by path): what records written before `prompt_digest` are compared by."""
    return hashlib.sha256(json.dumps(stored_prompt, sort_keys=True).encode()).hexdigest()[:16]


def prompt_digest(stored_prompt: list[dict[str, Any]]) -> str:
    """The prompt's hash with each local media file taken by its content (MD5), not its path: a resume after
    $LMUData or the media moved elsewhere still finds every prompt unchanged, and a file rewritten in place does not."""
    by_content = [
        {"role": turn["role"], "content": [{"type": p["type"], "value": _media_identity(p)} for p in turn["content"]]}
        for turn in stored_prompt
    ]
    return hashlib.sha256(json.dumps(by_content, sort_keys=True).encode()).hexdigest()[:16]


def _media_identity(part: dict[str, Any]) -> str:
    value = part["value"]
    if part["type"] == "text" or value.startswith(("sha256:", "http://", "https://")):
        return value
    path = Path(value)
    try:
        stat = path.stat()
    except OSError:
        return value  # gone: compared by its path (the model will say what is wrong with it)
    return "md5:" + _file_md5(str(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=65536)
def _file_md5(path: str, size: int, mtime_ns: int) -> str:  # size and mtime key the cache only
    return md5_of(Path(path))


def _record(task: Task, result: Generation | BaseException, elapsed_ms: float | None) -> dict[str, Any]:
    stored = prompt_for_record(task.msgs)
    hashed = prompt_hash(stored)
    # without local media files the digest hashes the very same structure as the hash: the same value
    local_media = any(_media_identity(p) != p["value"] for turn in stored for p in turn["content"] if p["type"] != "text")
    record: dict[str, Any] = {"index": task.index, "prompt": stored, "prompt_hash": hashed,
                              "prompt_digest": prompt_digest(stored) if local_media else hashed, "target": task.target}
    if task.params:
        record["params"] = task.params
    if isinstance(result, BaseException):
        record.update(prediction=None, error=error_record(result), usage=None, latency_ms=elapsed_ms)
    else:
        extra = dict(result.extra)
        answer, thinking, truncated = split_reasoning(result.text)
        served = extra.pop("reasoning_content", None)  # a server's reasoning parser gave it apart
        thinking = "\n\n".join(t for t in (served, thinking) if t) or None
        record.update(
            prediction=None if truncated else answer,
            error=_truncated_error(extra.get("finish_reason")) if truncated else None,
            usage=result.usage.to_dict() if result.usage else None,
            latency_ms=result.latency_ms if result.latency_ms is not None else elapsed_ms,
        )
        if thinking is not None:
            record["reasoning"] = thinking
        if extra:
            record["extra"] = extra
    return record


def _truncated_error(finish_reason: Any) -> dict[str, Any]:
    """The error of a reply that ended inside its reasoning: no answer to score (vlmkit.reasoning)."""
    return {"kind": "truncated_reasoning", "status": None,
            "message": f"the reply ended inside its <think> reasoning (finish_reason={finish_reason!r}), before any "
                       "answer: raise --max-tokens (reasoning models need several thousand)"}


def prompt_failure_record(task_index: Any, target: Any, exc: BaseException) -> dict[str, Any]:
    """The record of a row whose prompt could not be built (a bad cell, an unreadable file): an error, never asked."""
    return {"index": task_index, "prompt": None, "prompt_hash": None, "target": target, "prediction": None,
            "error": error_record(exc), "usage": None, "latency_ms": None}


def run_api(
    model: Any, tasks: Sequence[Task], journal: Journal, *, dataset: str, nproc: int, desc: str,
    progress: bool = True, watch: Watch | None = None,
) -> int:
    """Up to nproc requests in flight; records are appended from this thread only. Returns the error count.

    Workers are daemon threads that put each result on a queue this thread drains, so that on Ctrl-C (or an early
    stop: `watch` returns a message for a record) every answer that has already arrived is journalled and the
    function leaves at once, without waiting for the requests still in flight (they are abandoned; the model's
    `close()` by the caller drops their connections).
    """
    todo: queue.SimpleQueue[Task] = queue.SimpleQueue()
    for task in tasks:
        todo.put(task)
    results: queue.SimpleQueue[tuple[Task, Generation | BaseException, float]] = queue.SimpleQueue()
    stop = threading.Event()
    n_threads = max(1, min(nproc, len(tasks)))
    # A worker takes a task only while fewer than n_threads answers are in flight or waiting to be journalled: however
    # fast the server answers, an early stop (`watch`) leaves at most n_threads requests asked beyond the records
    # that decided it.
    slots: queue.SimpleQueue[None] = queue.SimpleQueue()  # one item per free slot (a C queue: cheaper than a Semaphore)
    for _ in range(n_threads):
        slots.put(None)

    def worker() -> None:
        while not stop.is_set():
            try:
                slots.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                task = todo.get_nowait()
            except queue.Empty:
                slots.put(None)
                return
            start = time.perf_counter()
            try:
                result: Generation | BaseException = model.generate_full(task.msgs, dataset, task.params)
            except Exception as exc:  # recorded as a typed error, retried on the next run
                result = exc
            results.put((task, result, (time.perf_counter() - start) * 1000))

    threads = [threading.Thread(target=worker, name=f"vlmkit-api-{i}", daemon=True) for i in range(n_threads)]
    errors = 0
    received = 0
    with tqdm(total=len(tasks), desc=desc, unit="sample", disable=not progress) as bar:

        def journal_one(item: tuple[Task, Generation | BaseException, float]) -> str | None:
            nonlocal errors, received
            task, result, elapsed = item
            record = _record(task, result, elapsed)
            journal.append(record)
            errors += isinstance(result, BaseException)
            received += 1
            bar.update(1)
            message = watch(record) if watch is not None else None
            if message is None:
                slots.put(None)  # only now may another request go out
            return message

        try:
            for thread in threads:
                thread.start()
            while received < len(tasks):
                try:
                    item = results.get(timeout=0.2)
                except queue.Empty:
                    if not any(t.is_alive() for t in threads) and results.empty():
                        raise RuntimeError("the API workers ended before every sample was answered") from None
                    continue
                message = journal_one(item)
                if message is not None:
                    raise RunStopped(message)
        finally:
            stop.set()  # workers take no new task; answers that already arrived are journalled
            while True:
                try:
                    journal_one(results.get_nowait())
                except queue.Empty:
                    break
    return errors


def prompt_size(task: Task) -> tuple[int, int]:
    """How long a task's prompt is, for grouping: (media parts, characters of text). Samples of similar size batched
    together pad less (left padding to the longest prompt of the batch)."""
    media = chars = 0
    for turn in normalise_conversation(task.msgs):
        for part in turn["content"]:
            if part["type"] == "text":
                chars += len(part["value"])
            else:
                media += 1
    return media, chars


def run_local(
    model: Any, tasks: Sequence[Task], journal: Journal, *, dataset: str, batch_size: int, desc: str,
    progress: bool = True, by_length: bool = True,
) -> int:
    """Batches through generate_batch; a batch that raises as a whole records that error for each of its samples.

    by_length (batch_size > 1): batches are formed from samples of similar prompt size (sorted by `prompt_size`,
    stable); answers are journalled by index, so every file the run writes stays in dataset order."""
    errors = 0
    size = max(1, batch_size)
    if by_length and size > 1:
        tasks = sorted(tasks, key=prompt_size)
    with tqdm(total=len(tasks), desc=desc, unit="sample", disable=not progress) as bar:
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

