"""Asking a model for every pending sample and journalling each answer as it arrives.

API models run `nproc` requests at once (daemon worker threads, each journalling its answers); local models run batches
through `generate_batch`. Either way a record reaches the journal (append + flush) the moment its answer exists, and a
failure is stored as a typed error record, never as a prediction. Each record carries its request's identity
(vlmkit.run.resume.request_fields: the prompt as stored and its digests), which a rerun compares.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


from vlmkit.core.contracts import Model, ModelView, model_view
from vlmkit.core.message import normalise_conversation
from vlmkit.core.model_calls import Generation, error_record
from vlmkit.core.reasoning import split_reasoning
from vlmkit.run.failures import RunStopped
from vlmkit.run.journal import Journal
from vlmkit.run.progress import Progress
from vlmkit.run.resume import request_fields


# Called with each record as it is journalled; a message (one line) stops the run (vlmkit.run.failures.FirstFailures).
Watch = Callable[[dict[str, Any]], "str | None"]


@dataclass
class Task:
    """One sample to ask the model: its index, its prompt, and the passthrough fields kept in its record."""

    index: Any
    msgs: list[Any]
    target: Any = None
    params: dict[str, Any] | None = None  # per-request generation parameters from the dataset row


def _record(task: Task, result: Generation | BaseException, elapsed_ms: float | None) -> dict[str, Any]:
    record: dict[str, Any] = {"index": task.index, **request_fields(task.msgs), "target": task.target}
    if task.params:
        record["params"] = task.params
    if isinstance(result, BaseException):
        record.update(prediction=None, error=error_record(result), usage=None, latency_ms=_ms(elapsed_ms))
    else:
        extra = dict(result.extra)
        answer, thinking, truncated = split_reasoning(result.text)
        served = extra.pop("reasoning_content", None)  # a server's reasoning parser gave it apart
        thinking = "\n\n".join(t for t in (served, thinking) if t) or None
        record.update(
            prediction=None if truncated else answer,
            error=_truncated_error(extra.get("finish_reason")) if truncated else None,
            usage=result.usage.to_dict() if result.usage else None,
            latency_ms=_ms(result.latency_ms if result.latency_ms is not None else elapsed_ms),
        )
        if thinking is not None:
            record["reasoning"] = thinking
        if extra:
            record["extra"] = extra
    return record


def _ms(value: float | None) -> float | None:
    """Milliseconds to the microsecond: the clock says no more, and 16-digit floats cost every JSON line."""
    return None if value is None else round(value, 3)


def _truncated_error(finish_reason: Any) -> dict[str, Any]:
    """The error of a reply that ended inside its reasoning: no answer to score (vlmkit.core.reasoning)."""
    return {"kind": "truncated_reasoning", "status": None,
            "message": f"the reply ended inside its <think> reasoning (finish_reason={finish_reason!r}), before any "
                       "answer: raise --max-tokens (reasoning models need several thousand)"}


def prompt_failure_record(task_index: Any, target: Any, exc: BaseException) -> dict[str, Any]:
    """The record of a row whose prompt could not be built (a bad cell, an unreadable file): an error, never asked."""
    return {"index": task_index, "prompt": None, "prompt_hash": None, "target": target, "prediction": None,
            "error": error_record(exc), "usage": None, "latency_ms": None}


def run_api(
    model: Model | ModelView, tasks: Sequence[Task], journal: Journal, *, dataset: str | None, nproc: int, desc: str,
    progress: bool = True, watch: Watch | None = None,
) -> int:
    """Up to nproc requests in flight; returns the error count.

    Each worker (a daemon thread) journals its own answer under a lock the moment it arrives, then takes the next task
    only if nothing has stopped the run: however fast the server answers, an early stop (`watch` returns a message for
    a record) leaves at most nproc - 1 requests asked beyond the record that decided it. This thread only waits, so
    that on Ctrl-C (or that stop) it leaves at once, without waiting for the requests still in flight: they are
    abandoned (the model's `close()` by the caller drops their connections) and every answer that had arrived is in
    the journal. (Handing each answer to this thread instead cost two thread wake-ups per sample: a fifth of the
    loop's time against an instant server, tools/bench_run_loop.py.)
    """
    if not tasks:
        return 0
    generate_full = model_view(model).generate_full
    pending = iter(tasks)
    lock = threading.Lock()
    finished = threading.Event()
    # stopping: no new task is taken (the run is stopping); closed: nothing more is journalled (this thread has left)
    outcome: dict[str, Any] = {"received": 0, "errors": 0, "stopping": False, "closed": False, "stop": None,
                               "failure": None}
    n_threads = max(1, min(nproc, len(tasks)))

    def journal_one(task: Task, result: Generation | BaseException, elapsed: float) -> Task | None:
        """Journal one answer (under the lock); the worker's next task, or None when it should leave."""
        record = _record(task, result, elapsed)
        with lock:
            if outcome["closed"]:
                return None  # arrived after this thread left (Ctrl-C, a stop, a failure): abandoned
            journal.append(record)
            failed = isinstance(result, BaseException)
            outcome["errors"] += failed
            outcome["received"] += 1
            bar.update(1, errors=failed)
            if outcome["stopping"]:
                return None  # an answer that was in flight when the run stopped: kept, nothing more asked
            message = watch(record) if watch is not None else None
            if message is not None or outcome["received"] == len(tasks):
                outcome["stop"], outcome["stopping"] = message, True
                finished.set()
                return None
            return next(pending, None)

    def worker() -> None:
        try:
            with lock:
                task = None if outcome["stopping"] else next(pending, None)
            while task is not None:
                start = time.perf_counter()
                try:
                    result: Generation | BaseException = generate_full(task.msgs, dataset, task.params)
                except Exception as exc:  # recorded as a typed error, retried on the next run
                    result = exc
                task = journal_one(task, result, (time.perf_counter() - start) * 1000)
        except BaseException as exc:  # a journal that cannot be written, a watch that fails: the run stops on it
            with lock:
                if not outcome["closed"] and outcome["failure"] is None:
                    outcome["failure"], outcome["stopping"] = exc, True
            finished.set()

    threads = [threading.Thread(target=worker, name=f"vlmkit-api-{i}", daemon=True) for i in range(n_threads)]
    with Progress(len(tasks), desc, bar=progress) as bar:
        try:
            for thread in threads:
                thread.start()
            while not finished.wait(0.2):
                if not any(t.is_alive() for t in threads) and not finished.is_set():
                    raise RuntimeError("the API workers ended before every sample was answered")
        finally:
            with lock:  # an append under way completes; no answer is journalled after this
                outcome["stopping"] = outcome["closed"] = True
    if outcome["failure"] is not None:
        raise outcome["failure"]
    if outcome["stop"] is not None:
        raise RunStopped(outcome["stop"])
    return outcome["errors"]


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
    model: Model | ModelView, tasks: Sequence[Task], journal: Journal, *, dataset: str, batch_size: int, desc: str,
    progress: bool = True, by_length: bool = True,
) -> int:
    """Batches through generate_batch; a batch that raises as a whole records that error for each of its samples.

    by_length (batch_size > 1): batches are formed from samples of similar prompt size (sorted by `prompt_size`,
    stable); answers are journalled by index, so every file the run writes stays in dataset order."""
    errors = 0
    generate_batch = model_view(model).generate_batch
    size = max(1, batch_size)
    if by_length and size > 1:
        tasks = sorted(tasks, key=prompt_size)
    with Progress(len(tasks), desc, bar=progress) as bar:
        for start in range(0, len(tasks), size):
            batch = tasks[start : start + size]
            began = time.perf_counter()
            try:
                results: list[Generation | BaseException] = generate_batch(
                    [t.msgs for t in batch], dataset, [t.params for t in batch]
                )
            except Exception as exc:
                results = [exc] * len(batch)
            elapsed = (time.perf_counter() - began) * 1000 / len(batch)
            failed = 0
            for task, result in zip(batch, results):
                journal.append(_record(task, result, elapsed))
                failed += isinstance(result, BaseException)
            errors += failed
            bar.update(len(batch), errors=failed)
    return errors

