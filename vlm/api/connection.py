"""The HTTP client of the API models: aiohttp (a maintained client with a C parser), on the caller's event loop or on
one of its own.

Two ways in, the same exchange and the same guarantees:
- `await Client.arequest(...)` runs on the event loop that awaits it, over one pool of kept-alive connections per
  loop. The run loop (vlmkit.run.inference.run_api) drives every request of a run this way, from one loop with
  bounded concurrency: no thread per call and no hop between threads. `aclose_here()` closes what that loop opened.
- `Client.request(...)` may be called from any number of threads; each call is handed to an event loop thread of the
  client's own (one pool of kept-alive connections) and the calling thread waits for its answer. Used by the probe
  and by callers of the blocking `generate`.
Cost, measured with tools/bench_run_loop.py against an instant local server (client CPU a sample, one core): the
thread hand-over costs ~30-40 us a call beyond the exchange itself, which is why the run loop awaits instead.

What a call gets is bounded, whatever the server does:
- time: `timeout` bounds the whole answer (connecting, the head, every byte of the body), not each read, so a server
  that trickles one byte a second or never ends its body costs at most `timeout` seconds; then `Timeout`.
- size: a body larger than `MAX_BODY_BYTES` is refused (`ResponseTooLarge`), so a body that never ends cannot fill
  the memory before the timeout.
- framing: bytes that arrive on an idle kept-alive connection (a response nobody asked for, the rest of a body longer
  than its Content-Length) were never an answer to anything this client asked: such a connection is closed, never
  used for the next request, so no call can read another's answer. A reply that breaks HTTP's framing is
  `ConnectionFailed`, never a reply. (A server that sends an unasked response after the next request has gone out
  cannot be told from one that answers it: HTTP/1.1 has no request ids. What a client can do is done here.)

Other choices: no redirects followed (an API endpoint answers where it is asked), no decompression asked for or done
(`Accept-Encoding: identity`), no cookies kept; a proxy named by the environment for a URL (requests' reading of
HTTP_PROXY / NO_PROXY and friends, once per origin) is used. Failures are this module's exceptions (`Timeout`,
`ConnectionFailed`, `ResponseTooLarge`), each with a short reason that holds no request header.

`close()` (from any thread) closes every connection, on every loop, and ends the client's own loop; a call in flight
then fails with `ConnectionFailed` at once, and a later call opens new connections: the client stays usable.
"""

from __future__ import annotations

import asyncio
import functools
import json as _json
import os
import select
import socket
import threading
import weakref
from collections.abc import Mapping
from typing import Any

import aiohttp
import requests.utils

_DECODER = _json.JSONDecoder()  # what json.loads uses for a call without options
MAX_BODY_BYTES = 256 * 1024 * 1024  # an answer larger than this is refused (a chat completion is far smaller)
_STALE_TRIES = 3  # pooled connections found holding unasked bytes before a call gives up
_SHUTDOWN_S = 10.0  # the most close() waits for the loop to wind down


class HTTPFailure(Exception):
    """A call that got no usable reply; `reason` is short and holds nothing of the request."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Timeout(HTTPFailure):
    """No complete answer within the timeout."""


class ConnectionFailed(HTTPFailure):
    """No connection, a connection lost before the whole answer, or an answer that breaks HTTP's framing."""


class ResponseTooLarge(HTTPFailure):
    """An answer larger than MAX_BODY_BYTES."""


class Reply:
    """A response read in full: status, headers (a case-insensitive mapping) and body bytes."""

    __slots__ = ("status_code", "headers", "content")

    def __init__(self, status_code: int, headers: Mapping[str, str], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def text(self) -> str:
        """The body as text: the charset the server names (UTF-8 otherwise), undecodable bytes replaced."""
        charset = _charset(self.headers.get("Content-Type") or "")
        try:
            return self.content.decode(charset or "utf-8", "replace")
        except LookupError:
            return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON; ValueError (JSONDecodeError, UnicodeDecodeError) when it is not JSON. A body that opens
        with `{` then a byte other than NUL is UTF-8 to json.loads's encoding detection: decoded here directly."""
        content = self.content
        if content[:1] == b"{" and content[1:2] != b"\x00":
            return _DECODER.decode(content.decode("utf-8", "surrogatepass"))
        return _json.loads(content)


def _charset(content_type: str) -> str | None:
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"').lower()
    return None


class _FreshConnector(aiohttp.TCPConnector):
    """A pool that never hands out a kept-alive connection on which bytes arrived while it was idle: those bytes
    answer nothing this client asked (a response too many, the tail of a body longer than its Content-Length), and
    the next request would read them as its own answer. Such a connection is closed and another taken. Both places
    such bytes can wait are looked at: aiohttp's buffer (read by the loop already) and the socket (not yet read)."""

    async def connect(self, req: Any, traces: Any, timeout: Any) -> Any:
        for _ in range(_STALE_TRIES):
            conn = await super().connect(req, traces, timeout)
            if not _holds_unasked_bytes(conn):
                return conn
            conn.close()
        raise ConnectionFailed("the server sends bytes before it is asked anything")


def _holds_unasked_bytes(conn: Any) -> bool:
    protocol = conn.protocol
    if protocol is None or protocol.should_close:  # should_close: bytes parsed and unread, or the server said so
        return True
    sock = conn.transport.get_extra_info("socket") if conn.transport is not None else None
    if sock is None:
        return False
    # bytes (or the server's close) that the loop has not read yet; poll where there is one (select cannot take a
    # descriptor above 1023), select elsewhere (Windows)
    if not hasattr(select, "poll"):
        return bool(select.select([sock], [], [], 0)[0])
    poll = select.poll()
    poll.register(sock.fileno(), select.POLLIN | select.POLLPRI)
    return bool(poll.poll(0))


def new_session() -> aiohttp.ClientSession:
    """The session every exchange goes through, on the running loop: the fresh-connection pool, no cookies, no
    decompression, no environment read by aiohttp (the proxy is chosen per origin by `Client`)."""
    connector = _FreshConnector(limit=0, enable_cleanup_closed=False)  # callers bound the concurrency
    return aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=None), auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(), trust_env=False, headers={"Accept-Encoding": "identity"},
    )


class _Loop:
    """One event loop thread with its aiohttp session; the thread closes the loop when it ends."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pid = os.getpid()
        self.thread = threading.Thread(target=self._run, name="vlmkit-http", daemon=True)
        self.thread.start()
        self.session: aiohttp.ClientSession = asyncio.run_coroutine_threadsafe(self._session(), self.loop).result()

    def _run(self) -> None:
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    @staticmethod
    async def _session() -> aiohttp.ClientSession:
        return new_session()

    async def _finish(self) -> None:
        """Close every connection (a request in flight fails at once), end every task still running, stop."""
        try:
            me = asyncio.current_task()
            tasks = [task for task in asyncio.all_tasks() if task is not me]
            await self.session.close()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.sleep(0)  # the closed transports' last callbacks (their sockets are closed there)
        finally:
            self.loop.stop()

    def stop(self) -> None:
        """End the loop; waits for it unless called from the loop's own thread (a garbage collection there)."""
        if self.pid != os.getpid() or self.loop.is_closed():  # a forked child's copy, or ended already
            return
        finish = self._finish()
        try:
            asyncio.run_coroutine_threadsafe(finish, self.loop)
        except RuntimeError:  # closed in the meantime
            finish.close()
            return
        if threading.current_thread() is not self.thread:
            self.thread.join(_SHUTDOWN_S)


class Client:
    """HTTP for one API model, shared by all its calling threads (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: _Loop | None = None
        self._finalizer: weakref.finalize | None = None
        self._proxies: dict[str, str | None] = {}
        self._epoch = 0
        # the sessions opened by arequest, one per event loop that awaited it, with the epoch each was opened in: one
        # of an earlier epoch is being closed by close() and takes no new request
        self._here: dict[asyncio.AbstractEventLoop, tuple[int, aiohttp.ClientSession]] = {}

    @property
    def epoch(self) -> int:
        """How many times close() was called: a call that began under another epoch was abandoned by its owner."""
        return self._epoch

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> Reply:
        return self.request("POST", url, body, headers, timeout)

    def get(self, url: str, headers: Mapping[str, str], timeout: float) -> Reply:
        return self.request("GET", url, None, headers, timeout)

    def request(self, method: str, url: str, body: bytes | None, headers: Mapping[str, str], timeout: float) -> Reply:
        """The whole reply within `timeout` seconds (inf: no limit); Timeout, ConnectionFailed or ResponseTooLarge."""
        proxy = self._proxy(url)
        with self._lock:  # submitted under the lock: close() ends every call submitted before it
            loop = self._loop
            if loop is None or loop.pid != os.getpid():
                loop = self._loop = _Loop()
                self._finalizer = weakref.finalize(self, loop.stop)  # dropped without close(): the loop ends too
            call = _Call()
            loop.loop.call_soon_threadsafe(_start, loop.loop, call, method, url, body, headers, timeout, proxy, loop)
        call.done.acquire()  # released by _finished on the loop thread
        if call.error is not None:
            raise call.error
        return call.reply

    async def arequest(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str], timeout: float
    ) -> Reply:
        """As `request`, awaited on the running event loop (its own pool of connections, opened on first use)."""
        entry = self._here.get(asyncio.get_running_loop())
        session = entry[1] if entry is not None and entry[0] == self._epoch else self._open_here()
        return await _exchange(session, method, url, body, headers, timeout, self._proxy(url))

    def _open_here(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._here.get(loop)
            if entry is not None and entry[0] == self._epoch:
                return entry[1]
            session = new_session()
            self._here[loop] = (self._epoch, session)  # one of an earlier epoch: close() has its closing in hand
        return session

    async def aclose_here(self) -> None:
        """Close the connections `arequest` opened on the running loop (a later call there opens new ones)."""
        with self._lock:
            entry = self._here.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].close()  # also when close() is closing it already: a session closes once

    def close(self) -> None:
        """Close every connection on every loop and end the client's own loop (from any thread); a call in flight fails
        at once; a later call starts afresh."""
        with self._lock:
            loop, self._loop = self._loop, None
            finalizer, self._finalizer = self._finalizer, None
            for ended in [other for other in self._here if other.is_closed()]:
                del self._here[ended]  # a loop that ended without aclose_here: its connections went with it
            here = [(other, session) for other, (_, session) in self._here.items()]
            self._epoch += 1
        if finalizer is not None:
            finalizer.detach()
        if loop is not None:
            loop.stop()
        for other, session in here:
            _close_on(other, session)

    def _proxy(self, url: str) -> str | None:
        """The proxy the environment names for this URL's origin (read once per origin; remembered per URL too, so a
        call to a URL asked before costs one dict look-up)."""
        try:
            return self._proxies[url]
        except KeyError:
            pass
        scheme, _, rest = url.partition("://")
        origin = f"{scheme}://{rest.split('/', 1)[0]}"
        if origin not in self._proxies:
            proxies = requests.utils.get_environ_proxies(url)
            self._proxies[origin] = proxies.get(scheme.lower()) or proxies.get("all")
        if len(self._proxies) < 1024:  # URLs are few (a model's endpoints); never let odd callers grow it
            self._proxies[url] = self._proxies[origin]
        return self._proxies[origin]


def _close_on(loop: asyncio.AbstractEventLoop, session: aiohttp.ClientSession) -> None:
    """Close a session on the loop it belongs to, from any thread, without waiting (that loop may be the caller's)."""
    def close() -> None:
        if not session.closed:
            loop.create_task(session.close())

    try:
        loop.call_soon_threadsafe(close)
    except RuntimeError:  # that loop has ended: its connections went with it
        pass


class _Call:
    """One call handed to the loop thread: the caller waits on `done` (a lock the loop releases), a lighter hand-over
    than a concurrent.futures.Future."""

    __slots__ = ("done", "reply", "error")

    def __init__(self) -> None:
        self.done = threading.Lock()
        self.done.acquire()
        self.reply: Reply | None = None
        self.error: BaseException | None = None


def _start(loop: asyncio.AbstractEventLoop, call: _Call, method: str, url: str, body: bytes | None,
           headers: Mapping[str, str], timeout: float, proxy: str | None, owner: _Loop) -> None:
    task = loop.create_task(_exchange(owner.session, method, url, body, headers, timeout, proxy))
    task.add_done_callback(functools.partial(_finished, call))


def _finished(call: _Call, task: asyncio.Task) -> None:
    if task.cancelled():
        call.error = ConnectionFailed("the model was closed during the call")
    else:
        call.error = task.exception()
        if call.error is None:
            call.reply = task.result()
    call.done.release()


async def _exchange(session: aiohttp.ClientSession, method: str, url: str, body: bytes | None,
                    headers: Mapping[str, str], timeout: float, proxy: str | None) -> Reply:
    deadline = _Deadline(timeout) if timeout != _INF else None
    try:
        async with session.request(method, url, data=body, headers=headers, proxy=proxy, allow_redirects=False) as resp:
            return Reply(resp.status, resp.headers, await _body(resp))
    except asyncio.CancelledError:
        if deadline is None or not deadline.expired:
            raise  # cancelled by its owner (close(), Ctrl-C): not a timeout
        deadline.uncancel()
        raise Timeout(f"no complete answer within {timeout:g} s") from None
    except asyncio.TimeoutError:  # before OSError: from Python 3.11 on it is the built-in TimeoutError
        raise Timeout(f"no complete answer within {timeout:g} s") from None
    except aiohttp.ClientError as exc:
        raise ConnectionFailed(failure_reason(exc)) from None
    except OSError as exc:
        raise ConnectionFailed(failure_reason(exc)) from None
    finally:
        if deadline is not None:
            deadline.handle.cancel()


_INF = float("inf")


class _Deadline:
    """The deadline of one exchange (connecting, the head and every byte of the body): at `timeout` seconds the task
    that runs the exchange is cancelled, and `_exchange` turns that cancellation into `Timeout`.

    One timer a call, on the running loop, and nothing more: aiohttp's own total timeout (`ClientTimeout(total=...)`)
    adds a timeout context entered around every read of the exchange as well (3% more instructions a call against an
    instant server, counted with callgrind); the sessions here have no aiohttp timeout at all."""

    __slots__ = ("task", "handle", "expired")

    def __init__(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        self.task = asyncio.current_task(loop)
        self.expired = False
        self.handle = loop.call_at(loop.time() + timeout, self._expire)

    def _expire(self) -> None:
        if self.task is not None and not self.task.done():
            self.expired = True
            self.task.cancel()

    def uncancel(self) -> None:
        """Take back the cancellation this deadline asked for (Python >= 3.11 counts them), so that the task's owner
        sees a Timeout, not a cancelled task."""
        uncancel = getattr(self.task, "uncancel", None)
        if uncancel is not None:
            uncancel()


async def _body(resp: aiohttp.ClientResponse) -> bytes:
    """The body, refused once it passes MAX_BODY_BYTES (before reading it when Content-Length says so)."""
    length = resp.content_length
    if length is not None and length > MAX_BODY_BYTES:
        raise ResponseTooLarge(f"an answer of {length} bytes (Content-Length), over the limit of {MAX_BODY_BYTES}")
    if length is not None:
        return await resp.read()
    parts: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_any():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ResponseTooLarge(f"an answer longer than the limit of {MAX_BODY_BYTES} bytes")
        parts.append(chunk)
    return b"".join(parts)


def failure_reason(exc: BaseException) -> str:
    """A short reason for a failed call: "connection refused", "host name not found", "the server closed the
    connection before the whole answer", "malformed HTTP answer (...)", else the library's own words."""
    causes = [exc, getattr(exc, "os_error", None), exc.__cause__, exc.__context__]
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return "connection refused"
    if any(isinstance(c, socket.gaierror) for c in causes) or type(exc).__name__ == "ClientConnectorDNSError":
        return "host name not found"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection before answering"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the answer was cut short (the connection ended inside its body)"
    if isinstance(exc, aiohttp.ClientResponseError):  # raised here only by the parser: we never raise_for_status
        return f"malformed HTTP answer ({' '.join(str(exc.message).split())[:150]})"
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__
