"""When each request goes out, in one process: closed loop (a fixed number of slots, each sending its next request
as soon as its previous one ends) or open loop (arrivals on a seeded gamma/Poisson schedule, optionally capped).

A finished request is handed to the level's Collector (vlmkit.perf.collect: tallies, timeline, its line written to
disk) and dropped, so the heap does not grow with the run. The measured phase runs with the garbage collector
frozen (what existed before it is never walked again; full collections of a heap that held every record took
100-130 ms and showed up as latency spikes) but enabled, so that what the requests leave behind is collected. A
ticker samples the event loop's lag (how late a 10 ms sleep wakes up) so that a client-side bottleneck is visible in
the report; the lag samples and the open loop's dispatch lags are kept as an evenly thinned sample of bounded size.
"""

from __future__ import annotations

import asyncio
import gc
import random
import signal
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count as counter
from itertools import islice
from time import monotonic_ns
from typing import Any, Protocol

from vlmkit.perf.client import Record, make_session, send
from vlmkit.perf.collect import Collector
from vlmkit.perf.metrics import LevelTally
from vlmkit.perf.requests import PreparedRequests
from vlmkit.perf.timeline import OrderedSample, Timeline

TICK_NS = 10_000_000  # the lag ticker's period
MAX_ARRIVALS = 10_000_000


class StopFlag(Protocol):
    def is_set(self) -> bool: ...
    def set(self) -> None: ...


def iter_arrivals(
    rate: float, burstiness: float, seed: int, *, count: int | None = None, duration: float | None = None
) -> Iterator[int]:
    """Arrival times (ns after the start) of an open-loop run, one at a time: gaps drawn from a gamma distribution
    with shape `burstiness` and mean 1/rate (shape 1 is a Poisson process), the first arrival at 0. Stops after
    `count` arrivals or before `duration` seconds, whichever comes first. The same seed gives the same schedule."""
    if count is None and duration is None:
        raise ValueError("an arrival schedule needs a count or a duration")
    rng = random.Random(seed)
    scale = 1.0 / (rate * burstiness)
    limit = count if count is not None else MAX_ARRIVALS
    end = duration if duration is not None else float("inf")
    t = 0.0
    sent = 0
    while sent < limit and t < end:
        yield int(t * 1e9)
        sent += 1
        t += rng.gammavariate(burstiness, scale)


def arrival_offsets(
    rate: float, burstiness: float, seed: int, *, count: int | None = None, duration: float | None = None
) -> list[int]:
    """The whole schedule of iter_arrivals as a list."""
    return list(iter_arrivals(rate, burstiness, seed, count=count, duration=duration))


class Arrivals:
    """An open-loop schedule drawn as it is used (memory flat in its length): every `step`-th arrival from `start`
    of iter_arrivals(rate, burstiness, seed, count, duration). Slicing `[w::n]` gives a process's share."""

    def __init__(self, rate: float, burstiness: float, seed: int, count: int | None, duration: float | None,
                 start: int = 0, step: int = 1) -> None:
        self.args = (rate, burstiness, seed, count, duration)
        self.start, self.step = start, step
        self._len: int | None = None

    def __iter__(self) -> Iterator[int]:
        rate, burstiness, seed, count, duration = self.args
        return islice(iter_arrivals(rate, burstiness, seed, count=count, duration=duration), self.start, None, self.step)

    def __len__(self) -> int:
        if self._len is None:  # one pass over the schedule (no list is kept)
            self._len = sum(1 for _ in self)
        return self._len

    def __getitem__(self, item: slice) -> "Arrivals":
        if not isinstance(item, slice) or (item.stop is not None) or (item.step or 1) < 1 or (item.start or 0) < 0:
            raise TypeError("an arrival schedule takes only [start::step] slices")
        return Arrivals(*self.args, start=self.start + (item.start or 0) * self.step, step=self.step * (item.step or 1))


@dataclass
class Target:
    """Where the requests go (the headers hold the key: never written anywhere): `url`, or with several servers
    (`--api-base A,B`) every one of them in `urls`, the first being `url`."""

    url: str
    headers: dict[str, str] = field(repr=False)
    timeout: float
    kernel_times: bool = True  # chunks timed by the kernel's receive time where the platform gives it
    urls: list[str] = field(default_factory=list)

    def servers(self) -> list[str]:
        return list(self.urls) or [self.url]


@dataclass
class LevelPlan:
    """One level's share for one process."""

    label: str
    open_loop: bool
    slots: int  # closed loop: concurrent requests; open loop: the cap (0 = none)
    warmup_ids: Sequence[int]
    ids: Sequence[int] | None  # measured request numbers (a range); None = unbounded (duration mode, closed loop)
    id_start: int = 0  # unbounded ids: id_start, id_start + id_step, ...
    id_step: int = 1
    arrivals: Sequence[int] | Arrivals | None = None  # open loop: offsets (ns) of `ids`
    duration_ns: int | None = None
    worker: int = 0


@dataclass
class LevelRun:
    """What one process measured for one level: its tallies and timeline (the requests' lines are on disk)."""

    tally: LevelTally
    timeline: Timeline | None
    sent: int  # measured requests handed to the client
    warmup: int  # warm-up requests sent
    t0: int  # monotonic ns when the measured phase began
    t_end: int
    cpu_s: float
    loop_lag: array  # ns, one per tick
    dispatch_lag: array  # ns, open loop: how late each arrival was dispatched, beyond any wait for the cap
    interrupted: bool
    gc_collections: int
    worker: int = 0
    server_tallies: list[LevelTally] = field(default_factory=list)  # per --api-base server, when several
    turns: Any = None  # --sessions: vlmkit.perf.sessions.TurnTally
    prefix: Any = None  # --prefix-share: vlmkit.perf.groups.KeyedTally (1 shared, 0 unique)


def _gc_count() -> int:
    return sum(s["collections"] for s in gc.get_stats())


class _Level:
    def __init__(self, plan: LevelPlan, prepared: PreparedRequests, target: Target, stop: StopFlag,
                 collect: Collector) -> None:
        self.plan = plan
        self.prepared = prepared
        self.target = target
        self.urls = target.servers()
        self.stop = stop
        self.collect = collect
        self.stopping = asyncio.Event()
        self.loop_lag = OrderedSample()
        self.dispatch_lag = OrderedSample()
        self.session: Any = None

    def _record(self, n: int, sched: int, warmup: bool) -> Record:
        row = self.prepared.row_of(n)
        rec = Record(n, row, self.prepared.max_tokens[row], sched, warmup, self.plan.worker)
        if self.prepared.shared is not None:
            rec.group = self.prepared.shared[row]
        if self.prepared.keep_replies:
            rec.reply = []
        return rec

    async def _unit(self, n: int, sched: int, warmup: bool, deadline: int | None = None) -> None:
        """Request n, or with --sessions session n: its turns in order, each sent when the previous answer has ended
        (plus the think time), until one fails, the level is stopped or its deadline passes."""
        sessions = self.prepared.sessions
        if sessions is None:
            await self._send(self._record(n, sched, warmup))
            return
        rows = sessions[n % len(sessions)]
        think = self.prepared.think_ns
        for k, row in enumerate(rows):
            if k:
                if think:
                    await asyncio.sleep(think / 1e9)
                if self.stopping.is_set() or (deadline is not None and monotonic_ns() >= deadline):
                    return
                sched = monotonic_ns()
            rec = Record(n, row, self.prepared.max_tokens[row], sched, warmup, self.plan.worker)
            rec.turn = k
            if self.prepared.shared is not None:
                rec.group = self.prepared.shared[row]
            await self._send(rec)
            if not rec.ok:
                if k + 1 < len(rows) and not warmup:
                    self.collect.session_cut()
                return

    async def _send(self, rec: Record) -> None:
        collect = self.collect
        server = collect.pick()
        rec.server = server
        collect.started(server, rec)
        try:
            await send(self.session, self.urls[server], self.prepared.bodies[rec.row], self.target.headers, rec)
        finally:
            collect.ended(server, rec)

    async def ticker(self) -> None:
        """Lag samples, and the bridge from the (thread- or process-shared) stop flag to this loop."""
        due = monotonic_ns() + TICK_NS
        while True:
            await asyncio.sleep(max(0, due - monotonic_ns()) / 1e9)
            now = monotonic_ns()
            self.loop_lag.append(now - due)
            due = now + TICK_NS
            if self.stop.is_set():
                self.stopping.set()

    async def _until_done_or_stopped(self, tasks: list[asyncio.Task]) -> None:
        if not tasks:
            return
        stopper = asyncio.ensure_future(self.stopping.wait())
        try:
            waiting = set(tasks)
            while waiting and not self.stopping.is_set():
                _, waiting = await asyncio.wait(waiting | {stopper}, return_when=asyncio.FIRST_COMPLETED)
                waiting.discard(stopper)
        finally:
            stopper.cancel()
        for task in tasks:
            task.cancel()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        for outcome in outcomes:  # a slot that raised is a bug to report, never a level quietly cut short
            if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
                raise outcome

    async def closed(self, ids: Iterator[int], slots: int, t0: int, deadline: int | None, warmup: bool) -> None:
        async def slot() -> None:
            free = t0
            for n in ids:
                if self.stopping.is_set() or (deadline is not None and monotonic_ns() >= deadline):
                    return
                await self._unit(n, free, warmup, deadline)
                free = monotonic_ns()

        await self._until_done_or_stopped([asyncio.ensure_future(slot()) for _ in range(max(1, slots))])

    async def open(self, ids: Iterable[int], arrivals: Iterable[int], cap: int, t0: int) -> None:
        sem = asyncio.Semaphore(cap) if cap else None
        running: set[asyncio.Task] = set()

        async def one(n: int, due: int) -> None:
            try:
                await self._unit(n, due, False)
            finally:
                if sem is not None:
                    sem.release()

        async def dispatch() -> None:
            ready = t0  # when --max-concurrency last let a held-back arrival go
            for n, offset in zip(ids, arrivals):
                due = t0 + offset
                wait = due - monotonic_ns()
                if wait > 0:
                    await asyncio.sleep(wait / 1e9)
                if self.stopping.is_set():
                    return
                # the client's own lateness; a wait for --max-concurrency is the server's pace, in queued_ms
                self.dispatch_lag.append(monotonic_ns() - max(due, ready))
                if sem is not None:
                    held = sem.locked()
                    await sem.acquire()  # time spent here is client queueing, reported as such
                    if held:
                        ready = monotonic_ns()
                task = asyncio.ensure_future(one(n, due))
                running.add(task)
                task.add_done_callback(running.discard)

        dispatcher = asyncio.ensure_future(dispatch())
        await self._until_done_or_stopped([dispatcher])
        await self._until_done_or_stopped(list(running))

    async def run(self, sync: Callable[[], int]) -> LevelRun:
        plan = self.plan
        connections = plan.slots if plan.slots else 0
        self.session = make_session(connections, self.target.timeout, self.target.kernel_times)
        ticker = asyncio.ensure_future(self.ticker())
        try:
            if plan.warmup_ids:
                t = monotonic_ns()
                await self.closed(iter(plan.warmup_ids), min(plan.slots or len(plan.warmup_ids), len(plan.warmup_ids)), t, None, True)
            gc.collect()  # before the start is fixed: a full collection of a large heap must not eat into the level
            t0 = sync()  # all processes of a --workers run start their measured phase together
            self.collect.begin(t0)
            gc.freeze()  # what exists now is never walked again; what the requests leave behind still is
            collections = _gc_count()
            self.loop_lag = OrderedSample()
            cpu0 = time.process_time()
            if not self.stopping.is_set():
                wait = t0 - monotonic_ns()
                if wait > 0:
                    await asyncio.sleep(wait / 1e9)
                deadline = t0 + plan.duration_ns if plan.duration_ns else None
                if plan.open_loop:
                    await self.open(plan.ids or (), plan.arrivals or (), plan.slots, t0)
                else:
                    ids = iter(plan.ids) if plan.ids is not None else counter(plan.id_start, plan.id_step)
                    await self.closed(ids, plan.slots, t0, deadline, False)
            t_end = monotonic_ns()
            cpu = time.process_time() - cpu0
            collections = _gc_count() - collections
        finally:
            gc.unfreeze()
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
            await self.session.close()
            self.collect.close()
        collect = self.collect
        return LevelRun(
            collect.tally, collect.timeline, collect.sent, collect.warmup, t0, t_end, cpu,
            self.loop_lag.values(), self.dispatch_lag.values(),
            interrupted=self.stop.is_set(), gc_collections=collections, worker=plan.worker,
            server_tallies=collect.balancer.tallies(), turns=collect.turns, prefix=collect.prefix,
        )


def run_level(
    plan: LevelPlan,
    prepared: PreparedRequests,
    target: Target,
    stop: StopFlag,
    sync: Callable[[], int] | None = None,
    handle_sigint: bool = True,
    collect: Collector | None = None,
) -> LevelRun:
    """Run one level in this process (its own event loop). Ctrl-C sets `stop`: nothing new is sent, the requests
    in flight are cancelled (recorded as `cancelled`), and what was measured is returned."""
    sync = sync or (lambda: monotonic_ns() + 1_000_000)

    async def main() -> LevelRun:
        level = _Level(plan, prepared, target, stop, collect or Collector(target.servers(), {}))
        loop = asyncio.get_running_loop()
        installed = False
        if handle_sigint and threading.current_thread() is threading.main_thread():
            loop.add_signal_handler(signal.SIGINT, _on_sigint(stop, level))
            installed = True
        try:
            return await level.run(sync)
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGINT)

    return asyncio.run(main())


def _on_sigint(stop: StopFlag, level: _Level) -> Callable[[], None]:
    def handler() -> None:
        stop.set()
        level.stopping.set()

    return handler
