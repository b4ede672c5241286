"""Asking a model for every pending sample and journalling each answer as it arrives.

API models run `nproc` requests at once (coroutines on one event loop thread for a model with `open_async()`, daemon
worker threads otherwise); local models run batches through `generate_batch`. Either way a record reaches the journal
as its answer arrives, and a failure is stored as a typed error record, never as a prediction. On the event loop the
records of the answers that arrive in one turn of the loop are written together, in one write() at the end of that
turn: each is on disk before its worker's next answer can arrive and before the run is reported finished, stopped or
interrupted, so a killed run loses at most the answers of that one turn (at most `nproc`, as in flight). Each record
carries its request's identity (vlmkit.run.resume.request_fields: the prompt as stored and its digests), which a rerun
compares, and, for an answer, the server's `finish_reason` (None when it gives none; "length": cut by the token
budget).
"""

from __future__ import annotations

import asyncio
import functools
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
    choices: dict[str, str] | None = None  # --mcq-mode logits|continuation: letter -> option text (run.likelihood)


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
        thinking = f"{served}\n\n{thinking}" if served and thinking else served or thinking or None
        record["prediction"] = None if truncated else answer
        record["error"] = _truncated_error(extra.get("finish_reason")) if truncated else None
        record["usage"] = result.usage.to_dict() if result.usage else None
        record["latency_ms"] = _ms(result.latency_ms if result.latency_ms is not None else elapsed_ms)
        record["finish_reason"] = extra.get("finish_reason")  # "length": cut by the token budget (issue 27)
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

    A model that offers `open_async()` (vlm.api.openai_compat does) is asked from one event loop thread, nproc
    coroutines at once (`_drive_async`); any other from nproc daemon threads calling `generate_full`. Either way each
    answer is journalled under a lock the moment it arrives, and the next task is taken only if nothing has stopped the
    run: however fast the server answers, an early stop (`watch` returns a message for a record) leaves at most
    nproc - 1 requests asked beyond the record that decided it. This thread only waits, so that on Ctrl-C (or that
    stop) it leaves at once, without waiting for the requests still in flight: they are abandoned (the model's
    `close()` by the caller drops their connections) and every answer that had arrived is in the journal.
    """
    if not tasks:
        return 0
    view = model_view(model)
    open_async = getattr(view.inner, "open_async", None)
    n_workers = max(1, min(nproc, len(tasks)))
    with Progress(len(tasks), desc, bar=progress) as bar:
        state = _Outcome(tasks, journal, bar, watch)
        if callable(open_async):
            workers = [threading.Thread(target=_drive_async, args=(open_async, state, dataset, n_workers),
                                        name="vlmkit-api-loop", daemon=True)]
        else:
            workers = [threading.Thread(target=_ask_in_thread, args=(view.generate_full, state, dataset),
                                        name=f"vlmkit-api-{i}", daemon=True) for i in range(n_workers)]
        try:
            for worker in workers:
                worker.start()
            while not state.finished.wait(0.2):
                if not any(w.is_alive() for w in workers) and not state.finished.is_set():
                    raise RuntimeError("the API workers ended before every sample was answered")
        finally:
            with state.lock:  # an append under way completes; no answer is journalled after this
                state.stopping = state.closed = True
                try:
                    state.flush_now()  # every answer that arrived is written before this returns or raises
                except Exception as exc:  # a full disk: the run's error, unless it has one already
                    state.failure = state.failure or exc
    if state.failure is not None:
        raise state.failure
    if state.stop is not None:
        raise RunStopped(state.stop)
    return state.errors


class _Outcome:
    """What the run loop's workers share with the thread that waits for them (under `lock`)."""

    def __init__(self, tasks: Sequence[Task], journal: Journal, bar: Progress, watch: Watch | None) -> None:
        self.pending = iter(tasks)
        # set by the event loop path: called (under the lock) after a deferred append, to have the journal flushed
        # once this turn of the loop is over (`flush_later`)
        self.flush_soon: Callable[[], None] | None = None
        self.flush_asked = False
        self.unshown = self.unshown_errors = 0  # answers (and errors) journalled, not yet counted on the bar
        self.total = len(tasks)
        self.journal, self.bar, self.watch = journal, bar, watch
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.received = self.errors = 0
        self.stopping = False  # no new task is taken (the run is stopping)
        self.closed = False  # nothing more is journalled (the waiting thread has left)
        self.stop: str | None = None
        self.failure: BaseException | None = None

    def first(self) -> Task | None:
        with self.lock:
            return None if self.stopping else next(self.pending, None)

    def journal_one(self, task: Task, result: Generation | BaseException, elapsed: float) -> Task | None:
        """Journal one answer (under the lock); the worker's next task, or None when it should leave.

        On the event loop path the record's line is written with the others that arrive in the same turn of the loop
        (one write() for them all, `flush_later`); it is on disk before that worker's next answer can arrive, and
        before the run is reported finished or stopped (`flush_now`)."""
        record = _record(task, result, elapsed)
        with self.lock:
            if self.closed:
                return None  # arrived after the waiting thread left (Ctrl-C, a stop, a failure): abandoned
            soon = self.flush_soon
            self.journal.append(record, defer=soon is not None)
            if soon is not None and not self.flush_asked:
                self.flush_asked = True
                soon()
            failed = isinstance(result, BaseException)
            self.errors += failed
            self.received += 1
            if soon is None:
                self.bar.update(1, errors=failed)
            else:  # shown with the flush that writes it: one bar update a turn of the loop, not one an answer
                self.unshown += 1
                self.unshown_errors += failed
            if self.stopping:
                return None  # an answer that was in flight when the run stopped: kept, nothing more asked
            message = self.watch(record) if self.watch is not None else None
            if message is not None or self.received == self.total:
                self.flush_now()
                self.stop, self.stopping = message, True
                self.finished.set()
                return None
            return next(self.pending, None)

    def flush_now(self) -> None:
        """Write the deferred records now, and count them on the progress bar (under the lock)."""
        self.flush_asked = False
        self.journal.flush()
        if self.unshown:
            self.bar.update(self.unshown, errors=self.unshown_errors)
            self.unshown = self.unshown_errors = 0

    def flush_later(self) -> None:
        """The event loop's callback after a turn in which records were appended: write them in one go. A journal that
        cannot be written stops the run on its error, as an append that fails does."""
        try:
            with self.lock:
                if not self.closed:
                    self.flush_now()
        except Exception as exc:
            self.fail(exc)

    def fail(self, exc: BaseException) -> None:
        """A journal that cannot be written, a watch that fails: the run stops on it."""
        with self.lock:
            if not self.closed and self.failure is None:
                self.failure, self.stopping = exc, True
        self.finished.set()


def _ask_in_thread(generate_full: Callable[..., Generation], state: _Outcome, dataset: str | None) -> None:
    """One worker thread: ask, journal, take the next task, until there is none or the run stops."""
    try:
        task = state.first()
        while task is not None:
            start = time.perf_counter()
            try:
                result: Generation | BaseException = generate_full(task.msgs, dataset, task.params)
            except Exception as exc:  # recorded as a typed error, retried on the next run
                result = exc
            task = state.journal_one(task, result, (time.perf_counter() - start) * 1000)
    except BaseException as exc:
        state.fail(exc)


def _drive_async(open_async: Callable[[], Any], state: _Outcome, dataset: str | None, n_workers: int) -> None:
    """The event loop thread of a model with `open_async()` (an async context manager yielding a coroutine function
    `call(msgs, dataset, params) -> Generation`): n_workers coroutines, each asking and journalling as a worker thread
    does. No thread per request and no hand-over between threads per call: against an instant server that hand-over
    cost more than the run loop's own work (tools/bench_run_loop.py)."""

    async def drive() -> None:
        loop = asyncio.get_running_loop()
        state.flush_soon = functools.partial(loop.call_soon, state.flush_later)
        async with open_async() as call:

            async def worker() -> None:
                try:
                    task = state.first()
                    while task is not None:
                        start = time.perf_counter()
                        try:
                            result: Generation | BaseException = await call(task.msgs, dataset, task.params)
                        except Exception as exc:  # recorded as a typed error, retried on the next run
                            result = exc
                        task = state.journal_one(task, result, (time.perf_counter() - start) * 1000)
                except Exception as exc:  # the waiting thread hears it now, not when the other calls end
                    state.fail(exc)
                    raise

            await asyncio.gather(*(worker() for _ in range(n_workers)))

    try:
        asyncio.run(drive())
    except BaseException as exc:
        state.fail(exc)


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
    ask: Callable[[Sequence[Task]], list[Generation | BaseException]] | None = None,
) -> int:
    """Batches through generate_batch; a batch that raises as a whole records that error for each of its samples.

    ask: asked for each batch of tasks instead of generate_batch (--mcq-mode: vlmkit.run.likelihood.ask_batch).

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
                results: list[Generation | BaseException] = ask(batch) if ask is not None else generate_batch(
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

