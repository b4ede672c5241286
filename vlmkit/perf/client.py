"""The streaming client: one chat-completions request over aiohttp, timed chunk by chunk.

Timestamps are `time.monotonic_ns()` (CLOCK_MONOTONIC: one clock for every process of a `--workers` run), taken
when the event loop hands the client the bytes of an SSE event. A request keeps a compact record (slots, an
int64 array of content-chunk times, no text), so that thousands of records give the garbage collector little
to walk. Error kinds (`Record.error`):

- `http_<status>`: the server answered a status other than 200;
- `connection`: no connection could be made;
- `dropped`: the connection was lost before the stream ended (no `[DONE]` and no finish_reason);
- `timeout`: the request did not finish within the timeout;
- `malformed_sse`: a `data:` line that is not a JSON object;
- `stream_error`: the stream carried an error object;
- `not_sse`: a 200 answer that is not an event stream (the server ignored `"stream": true`);
- `cancelled`: stopped by Ctrl-C (not an error of the server; left out of every figure).
"""

from __future__ import annotations

import asyncio
import json
from array import array
from time import monotonic_ns
from typing import Any

import aiohttp

_loads = json.loads
try:  # orjson parses SSE events about 3x faster; optional
    import orjson

    _loads = orjson.loads  # noqa: F811
except ImportError:  # pragma: no cover - depends on the environment
    pass

MESSAGE_LIMIT = 300


class Record:
    """One request. Times are monotonic ns; `sched` is when the request was due to start (its arrival time in
    open loop; when its closed-loop slot became free), `start` when it was handed to the HTTP client."""

    __slots__ = (
        "n", "row", "warmup", "worker", "max_tokens",
        "sched", "start", "end", "chunks",
        "status", "error", "message", "input_tokens", "output_tokens", "out_chars", "finished",
    )

    def __init__(self, n: int, row: int, max_tokens: int | None, sched: int, warmup: bool = False, worker: int = 0):
        self.n = n
        self.row = row
        self.warmup = warmup
        self.worker = worker
        self.max_tokens = max_tokens
        self.sched = sched
        self.start = 0
        self.end = 0
        self.chunks = array("q")  # arrival time of every content-bearing chunk
        self.status = 0
        self.error: str | None = None
        self.message: str | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.out_chars = 0
        self.finished = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.end > 0

    def to_state(self) -> tuple[Any, ...]:
        """A picklable tuple (records cross process boundaries in `--workers` runs)."""
        return tuple(self.chunks.tobytes() if s == "chunks" else getattr(self, s) for s in self.__slots__)

    @classmethod
    def from_state(cls, state: tuple[Any, ...]) -> "Record":
        rec = cls.__new__(cls)
        for name, value in zip(cls.__slots__, state):
            if name == "chunks":
                chunks = array("q")
                chunks.frombytes(value)
                value = chunks
            setattr(rec, name, value)
        return rec


def make_session(limit: int, timeout: float) -> aiohttp.ClientSession:
    """A pooled keep-alive session: `limit` connections (0 = no limit), no cookies, no proxies from the env."""
    connector = aiohttp.TCPConnector(limit=limit, limit_per_host=0, keepalive_timeout=60, ttl_dns_cache=300)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=timeout),
        cookie_jar=aiohttp.DummyCookieJar(),
        auto_decompress=False,
        trust_env=False,
    )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + "..."


async def send(session: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str], rec: Record) -> None:
    """Send one request and fill `rec`; never raises except CancelledError (after marking the record)."""
    rec.start = monotonic_ns()
    try:
        async with session.post(url, data=body, headers=headers) as resp:
            rec.status = resp.status
            if resp.status != 200:
                text = (await resp.content.read(4096)).decode("utf-8", "replace")
                rec.end = monotonic_ns()
                rec.error, rec.message = f"http_{resp.status}", _short(text)
                return
            if not resp.headers.get("Content-Type", "").startswith("text/event-stream"):
                text = (await resp.content.read(4096)).decode("utf-8", "replace")
                rec.end = monotonic_ns()
                rec.error = "not_sse"
                rec.message = _short(f"Content-Type {resp.headers.get('Content-Type')!r}: {text}")
                return
            await _read_stream(resp, rec)
    except asyncio.CancelledError:
        rec.end = monotonic_ns()
        rec.error, rec.message = "cancelled", "stopped by Ctrl-C"
        raise
    except asyncio.TimeoutError:
        rec.end = monotonic_ns()
        rec.error, rec.message = "timeout", "no complete answer within the timeout"
    except aiohttp.ClientConnectorError as exc:
        rec.end = monotonic_ns()
        rec.error, rec.message = "connection", _short(str(exc))
    except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
        rec.end = monotonic_ns()
        rec.error, rec.message = "dropped", _short(f"{type(exc).__name__}: {exc}")
    except aiohttp.ClientError as exc:
        rec.end = monotonic_ns()
        rec.error, rec.message = "connection", _short(f"{type(exc).__name__}: {exc}")


async def _read_stream(resp: aiohttp.ClientResponse, rec: Record) -> None:
    """Parse SSE `data:` lines as they arrive. After `[DONE]` the rest of the body is drained (so the
    connection goes back to the pool) without moving the end time."""
    chunks = rec.chunks
    pending = b""
    done = False
    async for data in resp.content.iter_any():
        if done:
            continue
        t = monotonic_ns()
        if pending:
            data = pending + data
        lines = data.split(b"\n")
        pending = lines.pop()
        for line in lines:
            if line[:5] != b"data:":
                continue  # blank separators, comments, event:/id: fields
            payload = line[5:].strip()
            if payload == b"[DONE]":
                done = True
                break
            try:
                obj = _loads(payload)
            except ValueError:
                obj = None
            if not isinstance(obj, dict):
                rec.end = t
                rec.error, rec.message = "malformed_sse", _short(payload.decode("utf-8", "replace"))
                return
            choices = obj.get("choices")
            if choices:
                choice = choices[0]
                delta = choice.get("delta")
                if delta:
                    text = delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning")
                    if text:
                        chunks.append(t)
                        rec.out_chars += len(text)
                if choice.get("finish_reason"):
                    rec.finished = True
            usage = obj.get("usage")
            if usage:
                rec.input_tokens = usage.get("prompt_tokens")
                rec.output_tokens = usage.get("completion_tokens")
            if "error" in obj and obj["error"]:
                rec.end = t
                rec.error, rec.message = "stream_error", _short(json.dumps(obj["error"])[:MESSAGE_LIMIT])
                return
        if done:
            rec.end = t
    if not done:
        rec.end = monotonic_ns()
        if not rec.finished:
            rec.error, rec.message = "dropped", "the stream ended without [DONE] or a finish_reason"
