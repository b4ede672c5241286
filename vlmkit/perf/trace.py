"""`--trace FILE`: a timestamped trace replayed on its own schedule (Mooncake's jsonl, as AISBench and guidellm read it).

A line: `{"timestamp": MS, "input_length": TOKENS, "output_length": TOKENS, "hash_ids": [ids]}`. Request i is sent at
(timestamp_i - timestamp_first) / --trace-speed after the level's start (several speeds: one level each), its prompt
`input_length` tokens long (vlmkit.perf.blocks: block id h is the same `--trace-block-tokens` words wherever it
appears, 512 as in Mooncake, so requests that share hash ids share that prefix byte for byte) and its max_tokens
`output_length` (add --ignore-eos so that answers run that long). Lines are replayed in timestamp order (a trace
out of order is sorted, stably). `--num-requests N` replays the first N; `--duration S` the part that falls in S s
of the replay; `--warmup K` sends the first K lines first, closed loop, and the replay starts from line K.

How far the sent schedule drifted from the trace: per request, the time it was handed to the HTTP client minus the
time the trace (at that speed) put it at (the open loop's queued_ms), as p50/p99/max in the level's `trace` block.
With --max-concurrency the wait for a free slot is drift too (the server's pace, not the trace's).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlmkit.perf.jsonl_input import json_objects
from vlmkit.perf.options import PerfInputError

BLOCK_TOKENS = 512
MAX_LENGTH = 1 << 20


@dataclass(frozen=True)
class TraceLine:
    timestamp_ms: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...]
    line: int  # its line in the file


def _count(path: Path, line: int, record: dict[str, Any], field: str, *, zero: bool = False) -> int:
    value = record.get(field)
    if value.__class__ is not int or value < (0 if zero else 1) or value > MAX_LENGTH:
        raise PerfInputError(f"{path}: line {line}: {field}: expected a whole number of tokens "
                             f"{'>= 0' if zero else '>= 1'}, got {json.dumps(value)}")
    return value


def read_trace(path: str | Path) -> list[TraceLine]:
    """The trace's lines in timestamp order; one line naming the file, line and field for a bad one."""
    path = Path(path)
    lines = []
    for number, record in json_objects(path, "--trace"):
        stamp = record.get("timestamp")
        if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) or stamp != stamp or stamp < 0:
            raise PerfInputError(f"{path}: line {number}: timestamp: expected milliseconds >= 0, got "
                                 f"{json.dumps(stamp)}")
        ids = record.get("hash_ids", [])
        if not isinstance(ids, list) or not all(i.__class__ is int for i in ids):
            raise PerfInputError(f"{path}: line {number}: hash_ids: expected a list of integers")
        lines.append(TraceLine(float(stamp), _count(path, number, record, "input_length"),
                               _count(path, number, record, "output_length"), tuple(ids), number))
    if not lines:
        raise PerfInputError(f"--trace {path}: no requests in the file")
    lines.sort(key=lambda t: t.timestamp_ms)
    return lines


class TraceSource:
    """The runner's dataset protocol over a trace: row i is the i-th request in timestamp order."""

    def __init__(self, path: str | Path, lines: list[TraceLine], block_tokens: int = BLOCK_TOKENS) -> None:
        import pandas as pd

        self.name = f"trace:{Path(path).name}"
        self.file_md5 = hashlib.md5(Path(path).read_bytes()).hexdigest()
        self.lines = lines
        self.block_tokens = block_tokens
        self.data = pd.DataFrame({"index": [t.line for t in lines]})

    def line(self, i: int) -> dict[str, Any]:
        return {"index": self.lines[i].line, "row": i}

    def build_prompt(self, line: dict[str, Any]) -> list[dict[str, str]]:
        from vlmkit.perf.blocks import prompt_text

        t = self.lines[line["row"]]
        return [{"type": "text", "value": prompt_text(list(t.hash_ids), t.input_length, self.block_tokens, t.line)}]

    def generation_params(self, line: dict[str, Any]) -> dict[str, Any]:
        return {"max_tokens": self.lines[line["row"]].output_length}

    def info(self) -> dict[str, Any]:
        first, last = self.lines[0].timestamp_ms, self.lines[-1].timestamp_ms
        return {"name": self.name, "n_total": len(self.lines), "span_s": (last - first) / 1000,
                "input_tokens": sum(t.input_length for t in self.lines),
                "output_tokens": sum(t.output_length for t in self.lines), "block_tokens": self.block_tokens}

    def offsets_ns(self, start: int, count: int | None, speed: float, duration: float | None) -> list[int]:
        """Send times (ns after the level's start) of rows start, start+1, ... at `speed`: at most `count` of them,
        and only those within `duration` seconds."""
        rows = self.lines[start:] if count is None else self.lines[start:start + count]
        if not rows:
            return []
        origin = rows[0].timestamp_ms
        offsets = [int(round((t.timestamp_ms - origin) * 1e6 / speed)) for t in rows]
        if duration is not None:
            offsets = [o for o in offsets if o < duration * 1e9]
        return offsets


def drift_block(level: dict[str, Any], speed: float, offered: int, span_s: float) -> dict[str, Any]:
    """The level's `trace` block: the speed, the requests the trace offered and over what span, and the drift of the
    sent schedule from it (ms; the level's queued_ms)."""
    queued = level["queued_ms"]
    return {"speed": speed, "requests": offered, "span_s": span_s,
            "drift_ms": {"median": queued["median"], "p99": queued["p99"], "max": queued["max"], "n": queued["n"]}}


def trace_plans(options: Any, source: TraceSource) -> list[tuple[float, Any, dict[str, Any]]]:
    """One open-loop level per --trace-speed, its arrivals the trace's timestamps (vlmkit.perf.trace), with
    (offered rate, plan, what the trace offered) per level."""
    from vlmkit.perf.schedule import LevelPlan

    k = options.warmup
    plans = []
    for speed in options.trace_speed or [1.0]:
        offsets = source.offsets_ns(k, options.num_requests, speed, options.duration)
        if not offsets:
            raise PerfInputError(f"--trace {source.name}: no request left to replay after --warmup {k}")
        span = offsets[-1] / 1e9
        rate = len(offsets) / span if span > 0 else float(len(offsets))
        plan = LevelPlan(label=f"trace x{speed:g}", open_loop=True, slots=options.max_concurrency or 0,
                         warmup_ids=range(k), ids=range(k, k + len(offsets)), arrivals=offsets)
        plans.append((rate, plan, {"speed": speed, "offered": len(offsets), "span_s": span}))
    return plans
