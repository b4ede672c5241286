"""Where a finished request goes, in one measuring process: folded into the level's tally, its server's tally and
the timeline, and written as one line of perf_requests.jsonl at once; the record itself is then dropped. So a
level's memory does not grow with its requests (warm-up records, at most --warmup of them, are held until the
measured phase's t0 is known, which their lines count from).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from time import monotonic_ns
from typing import IO, Any

from vlmkit.core.secrets import scrub
from vlmkit.perf.balance import Balancer
from vlmkit.perf.client import Record
from vlmkit.perf.metrics import LevelTally, per_request
from vlmkit.perf.report import dumps_line, request_line
from vlmkit.perf.groups import KeyedTally
from vlmkit.perf.sessions import TurnTally
from vlmkit.perf.timeline import Timeline


class RequestLines:
    """perf_requests.jsonl lines of one level in one process, written as the requests finish (the handle is the
    caller's: the run's file, or a worker's part file)."""

    def __init__(self, handle: IO[str], label: str, index: list[Any], secrets: list[str], servers: int = 1) -> None:
        self.handle = handle
        self.label = label
        self.index = index
        self.secrets = secrets
        self.servers = servers
        self.t0: int | None = None
        self.held: list[Record] = []

    def write(self, rec: Record, figures: dict[str, Any] | None = None) -> None:
        if self.t0 is None:
            self.held.append(rec)
            return
        if rec.message and self.secrets:
            rec.message = scrub(rec.message, self.secrets)
        line = request_line(self.label, rec, self.index[rec.row], self.t0, servers=self.servers, figures=figures)
        self.handle.write(dumps_line(line))

    def begin(self, t0: int) -> None:
        """The measured phase starts at t0: the held (warm-up) lines are written first, in request order."""
        self.t0 = t0
        for rec in sorted(self.held, key=lambda r: r.n):
            self.write(rec)
        self.held = []

    def close(self) -> None:
        if self.t0 is None and self.held:  # cut short before the measured phase: the warm-up lines still count from now
            self.begin(monotonic_ns())
        self.handle.flush()


class Collector:
    """Everything one process keeps of a level: the tally, the timeline, the balancer's per-server tallies."""

    def __init__(self, urls: list[str], slo: dict[str, float], lines: RequestLines | None = None) -> None:
        self.balancer = Balancer(urls, slo)
        self.tally = LevelTally(slo)
        self.timeline: Timeline | None = None
        self.lines = lines
        self.sent = 0  # measured requests handed to the client (cancelled ones too)
        self.warmup = 0
        self.turns: TurnTally | None = None  # --sessions: the figures per turn
        self.prefix: KeyedTally | None = None  # --prefix-share: the figures of shared and unique prefixes

    def session_cut(self) -> None:
        """A measured session ended at a failed turn before its last."""
        if self.turns is None:
            self.turns = TurnTally()
        self.turns.cut_short += 1

    def begin(self, t0: int) -> None:
        self.timeline = Timeline(t0)
        if self.lines is not None:
            self.lines.begin(t0)

    def pick(self) -> int:
        return self.balancer.pick()

    def started(self, server: int, rec: Record) -> None:
        self.balancer.started(server)
        if rec.warmup:
            self.warmup += 1
        else:
            self.sent += 1
            if self.timeline is not None:
                self.timeline.started(monotonic_ns())

    def ended(self, server: int, rec: Record) -> None:
        measured = not rec.warmup
        figures = per_request(rec)  # once, for the tallies and the line
        self.balancer.ended(server, rec, measured, figures)
        if measured:
            self.tally.add(rec, figures)
            if rec.turn is not None and rec.error != "cancelled":
                if self.turns is None:
                    self.turns = TurnTally()
                self.turns.add(rec.turn, rec.ok, figures["ttft_ms"], rec.input_tokens)
            if rec.group is not None and rec.error != "cancelled":
                if self.prefix is None:
                    self.prefix = KeyedTally()
                self.prefix.add(rec.group, rec.ok, figures["ttft_ms"], rec.input_tokens)
            if self.timeline is not None:
                self.timeline.ended(rec.end, rec.ok, figures["output_tokens"] if rec.ok else 0)
        if self.lines is not None:
            self.lines.write(rec, figures)

    def close(self) -> None:
        if self.lines is not None:
            self.lines.close()
        self.tally.in_flight_max = self.timeline.peak if self.timeline is not None else 0


def part_path(lines_path: Path, worker: int) -> Path:
    """Where worker `worker` writes its lines before the parent appends them to the run's file."""
    return lines_path.with_name(f"{lines_path.name}.part{worker}")


def append_parts(handle: IO[str], lines_path: Path, workers: dict[int, int], t0: int, every: int) -> None:
    """Append the part files of the workers that reported (worker -> its t0) to the run's file, their times moved
    to count from the level's t0 where a worker started alone; then remove every part file (0..every-1): a failed
    worker's requests are in no figure and so in no line."""
    for w in sorted(workers):
        part = part_path(lines_path, w)
        if not part.exists():
            continue
        shift_ms = (workers[w] - t0) / 1e6
        with open(part, encoding="utf-8") as source:
            if not shift_ms:
                shutil.copyfileobj(source, handle)
                continue
            for text in source:
                line = json.loads(text)
                for key in ("sched_ms", "start_ms"):
                    if line.get(key) is not None:
                        line[key] = round(line[key] + shift_ms, 3)
                handle.write(dumps_line(line))
    handle.flush()
    for w in range(every):
        part_path(lines_path, w).unlink(missing_ok=True)


def combine_turns(runs: list[Any], what: str = "turns") -> Any:
    """A level's per-group figures over its processes: `turns` (--sessions: a TurnTally) or `prefix`
    (--prefix-share: a KeyedTally); None when no process kept any."""
    kept = [getattr(run, what) for run in runs if getattr(run, what, None) is not None]
    if not kept:
        return None
    total = TurnTally() if what == "turns" else KeyedTally()
    for tally in kept:
        total.merge(tally)
    return total


def combine(runs: list[Any], slo: dict[str, float]) -> tuple[LevelTally, Timeline | None, list[LevelTally]]:
    """One level's tally, timeline and per-server tallies over the processes that measured it (LevelRuns). With one
    process its own in-flight maximum (exact) stands; with several, the timeline's (an upper bound)."""
    tally = LevelTally(slo)
    timeline: Timeline | None = None
    servers: list[LevelTally] = []
    for run in runs:
        tally.merge(run.tally)
        if run.timeline is not None:
            if timeline is None:
                timeline = run.timeline
            else:
                timeline.merge(run.timeline)
        for i, server in enumerate(run.server_tallies):
            if i == len(servers):
                servers.append(LevelTally(slo))
            servers[i].merge(server)
    if len(runs) == 1:
        tally.in_flight_max = runs[0].tally.in_flight_max
    elif timeline is not None:
        tally.in_flight_max = timeline.peak
    return tally, timeline, servers
