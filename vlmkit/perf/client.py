"""The streaming client: one chat-completions request over vlmkit.perf.wire, timed chunk by chunk.

Timestamps are `time.monotonic_ns()` (CLOCK_MONOTONIC: one clock for every process of a `--workers` run). A chunk's
time is when the kernel received its bytes (SO_TIMESTAMPNS, plain-TCP connections on Linux; `--read-times` turns
it off), else when they were read from the socket, before they are parsed (vlmkit.perf.wire: the response is
parsed where it is read, no task wakes per chunk). A request keeps a compact record (slots, an
int64 array of content-chunk times, no text), so that thousands of records give the garbage collector little
to walk. Error kinds (`Record.error`):

- `http_<status>`: the server answered a status other than 200;
- `connection`: no connection could be made;
- `dropped`: the connection was lost before the stream ended (no `[DONE]` and no finish_reason), or the response's
  framing was malformed (a bad chunk size or Content-Length: vlmkit.perf.wire);
- `timeout`: the request did not finish within the timeout, which bounds it whole (connecting, a server that sends
  one byte a second, a body that never ends); an answer complete at `[DONE]` whose body never ends is kept;
- `malformed_sse`: a `data:` line that is not UTF-8 JSON of a chunk's shape (an object; `choices` a list of objects,
  `delta` an object, its text a string, token counts integers), or a line longer than `LINE_LIMIT`;
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

from vlmkit.perf.wire import Connection, Pool, call_later_at, request_bytes


def _scanner() -> Any:
    """The json module's C scanner, called directly: json.loads on bytes spends more time detecting the encoding
    and in its Python wrappers than in the scan itself (about 3x, for a 150-byte chunk)."""
    from json import scanner

    make = getattr(scanner, "c_make_scanner", None) or scanner.py_make_scanner
    return make(json.JSONDecoder())


_scan = _scanner()


def _loads_stdlib(payload: bytes) -> Any:
    """One JSON value that must fill the whole payload (already stripped); ValueError otherwise."""
    text = payload.decode("utf-8")
    try:
        obj, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return obj


_loads = _loads_stdlib
try:  # orjson is faster still; optional
    import orjson

    _loads = orjson.loads  # noqa: F811
except ImportError:  # pragma: no cover - depends on the environment
    pass

MESSAGE_LIMIT = 300
LINE_LIMIT = 1 << 20  # bytes in one SSE line: a chunk is a few hundred; a line that never ends is refused here


class Record:
    """One request. Times are monotonic ns; `sched` is when the request was due to start (its arrival time in
    open loop; when its closed-loop slot became free), `start` when it was handed to the HTTP client."""

    __slots__ = (
        "n", "row", "warmup", "worker", "server", "max_tokens",
        "sched", "start", "end", "chunks",
        "status", "error", "message", "input_tokens", "output_tokens", "out_chars", "finished", "turn",
        "group", "reply", "cut_off",
    )

    def __init__(self, n: int, row: int, max_tokens: int | None, sched: int, warmup: bool = False, worker: int = 0):
        self.n = n
        self.row = row
        self.warmup = warmup
        self.worker = worker
        self.server = 0  # which of the --api-base servers it went to (vlmkit.perf.balance)
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
        self.turn: int | None = None  # --sessions: the request's turn in its conversation (0 = the first)
        self.group: int | None = None  # --prefix-share: 1 when its prompt starts with the shared prefix, 0 its own
        self.reply: list[str] | None = None  # --score: the answer's content pieces (None: text not kept)
        self.cut_off = False  # finish_reason "length": the answer hit max_tokens

    @property
    def ok(self) -> bool:
        return self.error is None and self.end > 0


def _count(value: Any) -> bool:
    """A usage token count: a non-negative integer, or absent."""
    return value is None or (value.__class__ is int and value >= 0)


def make_session(limit: int, timeout: float, kernel_times: bool = True) -> Pool:
    """A pool of keep-alive connections: at most `limit` open at once (0 = no limit), each request limited to
    `timeout` seconds in all; no cookies, no proxies from the environment, no decompression (vlmkit.perf.wire).
    kernel_times: time each chunk by when the kernel received it (plain TCP, where the platform says), not by when
    this process read it."""
    return Pool(limit, timeout, kernel_times)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + "..."


class _Exchange:
    """One request's response, parsed as its bytes arrive (a vlmkit.perf.wire.Handler)."""

    __slots__ = ("rec", "future", "sse", "pending", "done", "text", "content_type", "over")

    def __init__(self, rec: Record, future: asyncio.Future) -> None:
        self.rec = rec
        self.future = future
        self.sse = False
        self.pending = b""
        self.done = False
        self.text = b""  # the start of a non-SSE answer, for the message
        self.content_type: str | None = None
        self.over = False  # the record is final; later events change nothing

    def _close(self) -> None:
        self.over = True
        if not self.future.done():
            self.future.set_result(None)

    def head(self, status: int, content_type: str | None) -> None:
        self.rec.status = status
        self.content_type = content_type
        self.sse = status == 200 and (content_type or "").startswith("text/event-stream")

    def body(self, data: bytes, t: int) -> None:
        if self.over or self.done:
            return
        if not self.sse:
            if len(self.text) < 4096:
                self.text += data[: 4096 - len(self.text)]
            return
        if self.pending:
            data = self.pending + data
        lines = data.split(b"\n")
        self.pending = lines.pop()
        for line in lines:
            if line[:5] == b"data:" and self._event(line[5:].strip(), t):
                if self.over:  # malformed or an error object: the record is final, the connection given up
                    self._close()
                return
        if len(self.pending) > LINE_LIMIT:
            rec = self.rec
            rec.end = t
            rec.error = "malformed_sse"
            rec.message = _short(f"an SSE line longer than {LINE_LIMIT} bytes: "
                                 f"{self.pending[:100].decode('utf-8', 'replace')}")
            self.pending = b""
            self._close()

    def _event(self, payload: bytes, t: int) -> bool:
        """Handle one `data:` payload; True when the stream is over for the record."""
        rec = self.rec
        if payload == b"[DONE]":
            self.done = True
            rec.end = t
            return True
        try:
            obj = _loads(payload)  # not UTF-8 is a ValueError too (UnicodeDecodeError)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            try:  # AttributeError, TypeError or LookupError below: not the shape of a chat-completions chunk
                choices = obj.get("choices")
                if choices:
                    choice = choices[0]
                    delta = choice.get("delta")
                    if delta:
                        content = delta.get("content")
                        text = content or delta.get("reasoning_content") or delta.get("reasoning")
                        if text:
                            if text.__class__ is not str:
                                raise TypeError("the delta's text is not a string")
                            rec.chunks.append(t)
                            rec.out_chars += len(text)
                            if content and rec.reply is not None:  # the answer only: reasoning is never read as it
                                rec.reply.append(content)
                    finish = choice.get("finish_reason")
                    if finish:
                        rec.finished = True
                        if finish == "length":
                            rec.cut_off = True
                usage = obj.get("usage")
                if usage:
                    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
                    if not (_count(prompt) and _count(completion)):
                        raise TypeError("a token count is not an integer")
                    rec.input_tokens, rec.output_tokens = prompt, completion
                if "error" in obj and obj["error"]:
                    rec.end = t
                    rec.error, rec.message = "stream_error", _short(json.dumps(obj["error"])[:MESSAGE_LIMIT])
                    self.over = True
                    return True
                return False
            except (AttributeError, TypeError, LookupError):
                pass
        rec.end = t
        rec.error, rec.message = "malformed_sse", _short(payload.decode("utf-8", "replace"))
        self.over = True
        return True

    def end(self, t: int) -> None:
        """The body is complete (after [DONE], the rest was drained without moving the end time)."""
        if not self.over:
            rec = self.rec
            if not self.sse:
                rec.end = t
                text = self.text.decode("utf-8", "replace")
                if rec.status != 200:
                    rec.error, rec.message = f"http_{rec.status}", _short(text)
                else:
                    rec.error = "not_sse"
                    rec.message = _short(f"Content-Type {self.content_type!r}: {text}")
            elif not self.done:
                if self.pending[:5] == b"data:":  # a last event without its blank line
                    self.pending, last = b"", self.pending
                    self._event(last[5:].strip(), t)
                if not self.over and not self.done:
                    rec.end = t
                    if not rec.finished:
                        rec.error, rec.message = "dropped", "the stream ended without [DONE] or a finish_reason"
        self._close()

    def lost(self, reason: str) -> None:
        if not self.over and not self.done:
            rec = self.rec
            rec.end = monotonic_ns()
            if not self.sse and rec.status and rec.status != 200:  # an error answer cut short: still that answer
                rec.error, rec.message = f"http_{rec.status}", _short(self.text.decode("utf-8", "replace"))
            else:
                rec.error, rec.message = "dropped", _short(reason)
        self._close()


def _expire(future: asyncio.Future, exchange: _Exchange) -> None:
    """The request's time is up: a timeout, unless its answer was complete at [DONE] (only the body's end was
    missing: the record stands, the connection is given up)."""
    if not future.done():
        if exchange.done:
            future.set_result(None)
        else:
            future.set_exception(asyncio.TimeoutError())


async def send(session: Pool, url: str, body: bytes, headers: dict[str, str], rec: Record) -> None:
    """Send one request and fill `rec`; never raises except CancelledError (after marking the record). The
    request's bytes are handed to the socket in this call, before it first waits (on a pooled connection)."""
    rec.start = monotonic_ns()
    deadline = rec.start + int(session.timeout * 1e9)
    where, head = session.head_for(url, headers)
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()
    exchange = _Exchange(rec, future)
    conn: Connection | None = None
    timer = None
    held = False
    try:
        if session.slots is not None:
            await session.slots.acquire()
            held = True
        timer = call_later_at(deadline, lambda: _expire(future, exchange))
        try:
            if session.idle.get(where):  # a pooled connection: taken without waiting
                conn = await session.connection(where)
            else:
                conn = await asyncio.wait_for(session.connection(where), max(0.0, (deadline - monotonic_ns()) / 1e9))
        except asyncio.TimeoutError:  # an OSError too since Python 3.11: not a refused connection
            raise
        except OSError as exc:
            rec.end = monotonic_ns()
            rec.error, rec.message = "connection", _short(f"Cannot connect to host {where[0]}:{where[1]}: {exc}")
            return
        if future.done():  # the timeout struck while connecting
            future.result()
        conn.start(request_bytes(head, body), exchange)
        await future
        if (exchange.over or exchange.done) and conn.state != 6:  # given up mid-body: the rest of it is not read
            conn.abort("given up")
    except asyncio.CancelledError:
        if conn is not None:
            conn.abort("cancelled")
        rec.end = monotonic_ns()
        rec.error, rec.message = "cancelled", "stopped by Ctrl-C"
        raise
    except asyncio.TimeoutError:
        if conn is not None:
            conn.abort("timeout")
        rec.end = monotonic_ns()
        rec.error, rec.message = "timeout", "no complete answer within the timeout"
    finally:
        if timer is not None:
            timer.cancel()
        if conn is not None:
            session.release(where, conn)
        if held:
            session.slots.release()  # type: ignore[union-attr]
