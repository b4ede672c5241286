"""A minimal HTTP/1.1 client for `vlmkit perf`: keep-alive connections as asyncio BufferedProtocols, each response parsed
inside `data_received` as its bytes are read from the socket.

Why not aiohttp here: with aiohttp every SSE chunk wakes the request's task (a future, a task step, one more
trip through the event loop after whatever else is ready), and on Python < 3.12 the request body is written by a
task of its own one loop iteration after the headers. At 256 requests in flight on one core both delays pile up
into tens of milliseconds of TTFT that no server caused. Here the request (head and body) is handed to the socket
in the call that starts it, and each chunk is timestamped before any parsing and parsed where it is read: no task
runs per chunk. The timestamp (time.monotonic_ns) is when the kernel received the bytes, where the platform says
(SO_TIMESTAMPNS on plain TCP; `kernel_times`), so that no delay of the client's own event loop (a burst of
completions and new requests, another process on its core) enters a figure; else when they were read.

What it speaks: POST with Content-Length; responses framed by chunked transfer encoding, Content-Length, or the
end of the connection; 1xx interim responses skipped; http and https (the default SSL context). No redirects,
no proxies, no cookies, no decompression (it asks for none): a load test measures the endpoint it is given.
The caller gets events through a `Handler`: `head(status, content_type)`, `body(data, t)` for each piece of the
decoded body, then exactly one of `end(t)` (the body is complete) or `lost(reason)` (the connection broke first).

Servers that break the rules: framing is read strictly (RFC 9112: a chunk size is hex digits only, a Content-Length
decimal digits only, two that differ are an error, Transfer-Encoding overrides Content-Length), and a connection
whose framing is in any doubt is never used again: bytes after a complete response (an extra or pipelined response,
a body longer than its Content-Length), bytes or the end of the stream that the kernel holds for an idle connection
before the event loop has read them (`Connection.unread`, checked when the pool hands it out), a response framed
by both Transfer-Encoding and Content-Length, an exchange given up before its body ended. A handler that fails on
what it is given costs its own exchange (`lost`), never the event loop. Time limits are the caller's (one timer per
request, vlmkit.perf.client.send). What no HTTP/1.1 client can tell: a surplus response that arrives only after the
next request was written on the connection reads as that request's answer (HTTP/1.1 responses carry no request
id); the surplus is seen as soon as bytes arrive with no exchange waiting, and the connection is then closed.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import struct
import sys
from collections.abc import Callable
from time import monotonic_ns, time_ns
from typing import Any, Protocol
from urllib.parse import urlsplit

_HEAD_LIMIT = 65536  # a response head larger than this is a broken server
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_SIZE_DIGITS = 16  # a chunk size of more hex digits than this (2**64 bytes) is a broken server


class Handler(Protocol):
    def head(self, status: int, content_type: str | None) -> None: ...
    def body(self, data: bytes, t: int) -> None: ...
    def end(self, t: int) -> None: ...
    def lost(self, reason: str) -> None: ...


class WireError(Exception):
    """The response could not be parsed (kind `dropped`: the exchange broke)."""


_READ_SIZE = 65536  # per connection: 16 MiB for 256 connections
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35 if sys.platform == "linux" else None)


class _StampedSocket:
    """A socket whose reads keep the kernel's receive time of the bytes they return (SO_TIMESTAMPNS: for TCP, the
    time of the last segment the read took, so never earlier than any byte in it), moved from CLOCK_REALTIME to
    CLOCK_MONOTONIC by the offset between the clocks read at that moment. Everything else is the socket's own."""

    __slots__ = ("_sock", "received_ns")

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.received_ns: int | None = None

    def _stamp(self, ancillary: list[tuple[int, int, bytes]]) -> None:
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(raw) >= 16:
                sec, nsec = struct.unpack("qq", raw[:16])
                self.received_ns = sec * 1_000_000_000 + nsec - (time_ns() - monotonic_ns())

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        view = memoryview(buffer)
        n, ancillary, _, _ = self._sock.recvmsg_into([view[:nbytes] if nbytes else view], 64, flags)
        self._stamp(ancillary)
        return n

    def recv(self, size: int, flags: int = 0) -> bytes:
        data, ancillary, _, _ = self._sock.recvmsg(size, 64, flags)
        self._stamp(ancillary)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def stamp_reads(transport: asyncio.BaseTransport) -> _StampedSocket | None:
    """Have a plain TCP transport read through a _StampedSocket; None where that cannot be done (TLS, another event
    loop, no SO_TIMESTAMPNS): its bytes are then timed when they are read."""
    sock = getattr(transport, "_sock", None)
    if _SO_TIMESTAMPNS is None or not isinstance(sock, socket.socket):
        return None
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    except OSError:
        return None
    stamped = _StampedSocket(sock)
    transport._sock = stamped  # type: ignore[attr-defined]
    return stamped


class Connection(asyncio.BufferedProtocol):
    """One keep-alive connection; one exchange at a time. A BufferedProtocol: the socket is read into one buffer
    kept for the connection's life (asyncio's plain Protocol allocates a fresh 256 KiB object for every read, an
    mmap and munmap each time, which cost more than parsing the SSE event inside it)."""

    def __init__(self, kernel_times: bool = False) -> None:
        self.kernel_times = kernel_times
        self.stamped: _StampedSocket | None = None
        self.read_buffer = bytearray(_READ_SIZE)
        self.read_view = memoryview(self.read_buffer)
        self.transport: asyncio.Transport | None = None
        self.sock: socket.socket | None = None  # the plain TCP socket (for `unread`); None over TLS
        self.poller: Any = None  # a select.poll on `sock`, where the platform has one
        self.closed = False
        self.handler: Handler | None = None
        self.buf = b""
        self.state = 0  # 0 head, 1 chunk size line, 2 chunk data, 3 trailers, 4 length body, 5 until EOF, 6 done
        self.left = 0  # bytes left in the current chunk / length body
        self.reusable = True

    # -- asyncio.BufferedProtocol --------------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = getattr(transport, "_sock", None)  # before stamp_reads wraps it
        if isinstance(sock, socket.socket):
            self.sock = sock
            if hasattr(select, "poll"):
                self.poller = select.poll()
                self.poller.register(sock.fileno(), select.POLLIN)
        if self.kernel_times:
            self.stamped = stamp_reads(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        handler, self.handler = self.handler, None
        if handler is None:
            return
        if self.state == 5:  # a body framed by the end of the connection has ended
            handler.end(monotonic_ns())
        else:
            handler.lost(f"the connection was closed before the response ended ({exc or 'closed by the server'})")

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.read_view

    def buffer_updated(self, nbytes: int) -> None:
        t = monotonic_ns()  # when the bytes were read, before any parsing
        stamped = self.stamped
        if stamped is not None and stamped.received_ns is not None:
            t = min(t, stamped.received_ns)  # when the kernel had them
            stamped.received_ns = None
        self._received(bytes(self.read_view[:nbytes]), t)

    def data_received(self, data: bytes) -> None:
        self._received(data, monotonic_ns())

    def _received(self, data: bytes, t: int) -> None:
        if self.handler is None:  # bytes nobody asked for: the connection cannot be trusted again
            self.reusable = False
            if self.transport is not None:
                self.transport.close()
            return
        try:
            self._feed(self.buf + data if self.buf else data, t)
        except WireError as exc:
            self.abort(str(exc))
        except Exception as exc:  # a handler that failed on what it was given: its exchange's error, not the loop's
            self.abort(f"the response could not be read ({type(exc).__name__}: {exc})")

    def unread(self) -> bool:
        """Whether the kernel holds bytes for this idle connection, or its end, that the event loop has not read
        yet (a response nobody asked for; the server's close): then its framing is in doubt. Plain TCP only: over
        TLS (no `sock`) what arrives while idle is seen when the loop reads it (`_received` without a handler)."""
        if self.poller is not None:  # readable (a byte, or the end), or an error: a third of the cost of a peek
            return bool(self.poller.poll(0))
        sock = self.sock
        if sock is None:
            return False
        try:
            sock.recv(1, socket.MSG_PEEK)  # the socket is non-blocking (asyncio's)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        return True  # a byte, or b"": the end of the stream

    # -- the exchange ------------------------------------------------------------------------------------------
    def start(self, request: bytes | list[bytes], handler: Handler) -> None:
        assert self.transport is not None
        self.handler, self.buf, self.state, self.left = handler, b"", 0, 0
        if isinstance(request, list):
            self.transport.writelines(request)
        else:
            self.transport.write(request)

    def abort(self, reason: str) -> None:
        """Give up on the exchange (timeout, cancel, garbage): the handler gets `lost(reason)`; the connection is
        closed, never reused."""
        self.reusable = False
        handler, self.handler = self.handler, None
        if self.transport is not None:
            self.transport.abort()
        if handler is not None:
            handler.lost(reason)

    def _finish(self, t: int) -> None:
        handler, self.handler = self.handler, None
        self.state = 6
        if not self.reusable and self.transport is not None:
            self.transport.close()
        if handler is not None:
            handler.end(t)

    def _feed(self, buf: bytes, t: int) -> None:
        self.buf = b""
        while buf:
            state = self.state
            if state == 2 or state == 4:  # chunk data / length-framed body
                left = self.left
                if len(buf) <= left:
                    self.left = left - len(buf)
                    self.handler.body(buf, t)  # type: ignore[union-attr]
                    if state == 4 and self.left == 0:
                        return self._finish(t)
                    if self.left == 0:
                        self.state = 7  # the CRLF after the chunk
                    return
                piece, buf = buf[:left], buf[left:]
                self.left = 0
                if piece:
                    self.handler.body(piece, t)  # type: ignore[union-attr]
                if state == 4:
                    self.reusable = False  # bytes after a complete body: the connection is out of step
                    return self._finish(t)
                self.state = 7
            elif state == 7:  # the CRLF that ends a chunk's data
                if len(buf) < 2:
                    self.buf = buf
                    return
                if buf[:2] != b"\r\n":
                    raise WireError("malformed chunked encoding (no CRLF after a chunk)")
                buf = buf[2:]
                self.state = 1
            elif state == 1:  # chunk size line
                nl = buf.find(b"\r\n")
                if nl < 0:
                    if len(buf) > 1024:
                        raise WireError("malformed chunked encoding (chunk size line too long)")
                    self.buf = buf
                    return
                line = buf[:nl]
                if line and len(line) <= _SIZE_DIGITS and not line.strip(_HEX_DIGITS):  # hex digits alone
                    size = int(line, 16)
                else:
                    size = _chunk_size(line)
                buf = buf[nl + 2 :]
                if size == 0:
                    self.state = 3
                else:
                    self.state, self.left = 2, size
            elif state == 3:  # trailers, ended by an empty line
                nl = buf.find(b"\r\n")
                if nl < 0:
                    self.buf = buf
                    return
                line, buf = buf[:nl], buf[nl + 2 :]
                if not line:
                    if buf:
                        self.reusable = False
                    return self._finish(t)
            elif state == 5:  # until the connection ends
                self.handler.body(buf, t)  # type: ignore[union-attr]
                return
            elif state == 0:
                buf = self._head(buf, t)
                if buf is None:
                    return
            else:  # 6: bytes after a finished exchange
                self.reusable = False
                return

    def _head(self, buf: bytes, t: int) -> bytes | None:
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > _HEAD_LIMIT:
                raise WireError("response head too large")
            self.buf = buf
            return None
        lines = buf[:end].decode("latin-1").split("\r\n")
        rest = buf[end + 4 :]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/"):
            raise WireError(f"not an HTTP response: {lines[0][:100]!r}")
        try:
            status = int(parts[1])
        except ValueError:
            raise WireError(f"bad status line: {lines[0][:100]!r}") from None
        if 100 <= status < 200:  # an interim response: the real one follows
            return rest
        length: int | None = None
        codings: list[str] = []  # Transfer-Encoding, in order, over every such header
        content_type = None
        close = parts[0] == "HTTP/1.0"
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            value = value.strip()
            if name == "content-length":
                length = _content_length(value, length)
            elif name == "transfer-encoding":
                codings += [c.strip().lower() for c in value.split(",")]
            elif name == "content-type":
                content_type = value
            elif name == "connection":
                close = "close" in value.lower() or (close and "keep-alive" not in value.lower())
        chunked = bool(codings) and codings[-1] == "chunked"
        if codings and (length is not None or not chunked):
            # Transfer-Encoding overrides Content-Length, and a body not chunked last is framed by the close
            # (RFC 9112 6.1, 6.3): either way the connection is not used again
            close, length = True, None
        if close:
            self.reusable = False
        self.handler.head(status, content_type)  # type: ignore[union-attr]
        if self.handler is None:  # the handler gave up on the head alone
            return None
        if status in (204, 304) or (length == 0 and not chunked):
            if rest:  # bytes after a response without a body: the connection is out of step
                self.reusable = False
            self._finish(t)
            return None
        if chunked:
            self.state = 1
        elif length is not None:
            self.state, self.left = 4, length
        else:
            self.state = 5
            self.reusable = False
        return rest


def _chunk_size(line: bytes) -> int:
    """A chunk-size line's size: 1 to 16 hex digits, then optional whitespace and extensions (RFC 9112 7.1). What
    int(x, 16) also reads (a sign, "0x", "_", leading space) is refused: the server and this reader must not
    disagree on where a chunk ends."""
    size = line.split(b";", 1)[0].rstrip(b" \t")
    if not size or len(size) > _SIZE_DIGITS or size.strip(_HEX_DIGITS):
        raise WireError(f"malformed chunked encoding (bad chunk size {line[:40]!r})")
    return int(size, 16)


def _content_length(value: str, seen: int | None) -> int:
    """A Content-Length value (decimal digits; a list of equal values is that value, RFC 9110 8.6), which must
    agree with one already seen in the same head."""
    values = {v.strip() for v in value.split(",")}
    digits = values.pop() if len(values) == 1 else ""
    if not (digits.isascii() and digits.isdigit()):
        raise WireError(f"bad Content-Length {value[:40]!r}")
    length = int(digits)
    if seen is not None and seen != length:
        raise WireError(f"two Content-Length headers that differ ({seen} and {length})")
    return length


class Pool:
    """Keep-alive connections to one or more hosts (the `session` of vlmkit.perf.client). `limit` caps the
    connections open at once (0: no cap); `timeout` is each request's total time limit, connecting included."""

    def __init__(self, limit: int, timeout: float, kernel_times: bool = True) -> None:
        self.timeout = timeout
        self.kernel_times = kernel_times
        self.idle: dict[tuple[str, int, bool], list[Connection]] = {}
        self.open: set[Connection] = set()
        self.slots = asyncio.Semaphore(limit) if limit else None
        self.heads: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[tuple[str, int, bool], bytes]] = {}
        self._ssl: ssl.SSLContext | None = None

    def head_for(self, url: str, headers: dict[str, str]) -> tuple[tuple[str, int, bool], bytes]:
        """(host, port, tls) and the request head up to the Content-Length line, built once per URL and headers."""
        key = (url, tuple(headers.items()))
        found = self.heads.get(key)
        if found is None:
            parts = urlsplit(url)
            tls = parts.scheme == "https"
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"not an http(s) URL: {url!r}")
            port = parts.port or (443 if tls else 80)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            host = parts.netloc.rpartition("@")[2]
            lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Connection: keep-alive", "Accept-Encoding: identity"]
            lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in ("host", "content-length", "connection")]
            found = ((parts.hostname, port, tls), ("\r\n".join(lines) + "\r\n").encode("latin-1"))
            self.heads[key] = found
        return found

    async def connection(self, where: tuple[str, int, bool]) -> Connection:
        idle = self.idle.get(where)
        while idle:
            conn = idle.pop()
            transport = conn.transport
            if not conn.closed and conn.reusable and transport is not None and not transport.is_closing():
                if not conn.unread():
                    return conn
                conn.abort("bytes or the end of the connection arrived while it was idle")
            self.open.discard(conn)
        host, port, tls = where
        if tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(lambda: Connection(self.kernel_times and not tls), host, port,
                                               ssl=self._ssl if tls else None)
        self.open.add(conn)
        return conn

    def release(self, where: tuple[str, int, bool], conn: Connection) -> None:
        if conn.closed or not conn.reusable or conn.state != 6:
            self.open.discard(conn)
            if conn.transport is not None:
                conn.transport.close()
            return
        self.idle.setdefault(where, []).append(conn)

    async def close(self) -> None:
        for conn in list(self.open):
            if conn.transport is not None:
                conn.transport.close()
        self.open.clear()
        self.idle.clear()
        await asyncio.sleep(0)  # let the transports finish closing


def request_bytes(head: bytes, body: bytes) -> bytes | list[bytes]:
    """The whole request; a large body is handed over apart rather than copied into one buffer."""
    tail = b"Content-Length: %d\r\n\r\n" % len(body)
    return head + tail + body if len(body) < 65536 else [head + tail, body]


def call_later_at(deadline_ns: int, callback: Callable[[], Any]) -> asyncio.TimerHandle:
    """A timer at a monotonic_ns deadline (the loop's clock is time.monotonic)."""
    loop = asyncio.get_running_loop()
    return loop.call_at(loop.time() + (deadline_ns - monotonic_ns()) / 1e9, callback)
