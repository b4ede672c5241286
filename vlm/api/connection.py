"""A small kept-alive HTTP/1.1 client for API models: `Session` (the part of `requests.Session` the callers use:
`post`, `get`, `close`) and `ThreadSessions`, which gives each calling thread its own `Session`.

Why it exists: a run against a local server (vLLM, SGLang) spends its client time in requests and urllib3, which
cost about 0.6 ms of CPU per call (the environment read again for proxies and CA bundles, the head and body written
apart, pools, hooks, cookies), 4-5x the whole direct call. So plain `http://` URLs that no proxy setting of the
environment covers go out on one kept-alive connection per host (`_Connection`): the request's head and body in one
write, the answer read by a small parser (http.client costs about twice as much per call, mostly in parsing the
headers through the email package), each send and receive bounded by the kernel (SO_SNDTIMEO/SO_RCVTIMEO) rather
than by Python's socket timeout, which polls before every call and so doubles the system calls and the hand-overs
of the interpreter lock between the request threads. Anything else (https, a proxy, credentials in the URL) goes
through a `requests.Session`. Failures are raised as requests' exceptions on both paths (Timeout, ConnectionError),
so callers (the retry policy in `vlm.api.http`) handle them alike.

A `Session` is for one thread (so is `requests.Session`, which it uses for https and proxied URLs): `ThreadSessions`
gives each thread that calls the model its own session (and connections) and closes them all on `close()`.
"""

from __future__ import annotations

import http.client
import json as _json
import socket
import struct
import sys
import threading
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter


def make_session() -> Session:
    """A session for one thread (it holds one kept-alive connection per host)."""
    return Session()


class Reply:
    """A response read in full by the direct path: what the callers use of requests.Response."""

    __slots__ = ("status_code", "headers", "content")

    def __init__(self, status_code: int, headers: Any, content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers  # http.client.HTTPMessage: .get() is case-insensitive
        self.content = content

    @property
    def text(self) -> str:
        charset = self.headers.get_content_charset() if hasattr(self.headers, "get_content_charset") else None
        try:
            return self.content.decode(charset or "utf-8", "replace")
        except LookupError:
            return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return _json.loads(self.content)  # ValueError (JSONDecodeError, UnicodeDecodeError) when it is not JSON


_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class Session:
    """One thread's HTTP session: the direct path for plain `http://` URLs (one `_Connection` per host), a
    `requests.Session` made on first need for the rest (see the module docstring). A kept-alive connection the
    server had already closed is opened again once (nothing was read from it, so the request never reached the
    server)."""

    def __init__(self) -> None:
        self._fallback: requests.Session | None = None
        self._conns: dict[tuple[str, int], _Connection] = {}
        self._direct: dict[str, tuple[str, int, str] | None] = {}
        self._lock = threading.Lock()
        self._agent = requests.utils.default_user_agent()

    # -- the requests.Session surface the callers use ---------------------------------------------------------
    def post(self, url: str, *, json: Any = None, headers: dict[str, str] | None = None,
             timeout: float | None = None) -> Reply | requests.Response:
        where = self._where(url)
        if where is None:
            return self._requests().post(url, json=json, headers=headers, timeout=timeout)
        try:
            body = _json.dumps(json, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise requests.exceptions.InvalidJSONError(str(exc)) from None
        head = {"Content-Type": "application/json", **(headers or {})}
        return self._send(where, "POST", body, head, timeout)

    def get(self, url: str, *, headers: dict[str, str] | None = None,
            timeout: float | None = None) -> Reply | requests.Response:
        where = self._where(url)
        if where is None:
            return self._requests().get(url, headers=headers, timeout=timeout)
        return self._send(where, "GET", None, dict(headers or {}), timeout)

    def close(self) -> None:
        """Close every connection; safe from another thread (a call blocked on one is woken with an error)."""
        with self._lock:
            conns, self._conns = list(self._conns.values()), {}
            fallback, self._fallback = self._fallback, None
        for conn in conns:
            conn.close()
        if fallback is not None:
            fallback.close()

    # -- the direct path ---------------------------------------------------------------------------------------
    def _requests(self) -> requests.Session:
        with self._lock:
            if self._fallback is None:
                session = requests.Session()
                adapter = HTTPAdapter(pool_connections=4, pool_maxsize=1, max_retries=0)
                session.mount("http://", adapter)
                session.mount("https://", adapter)
                self._fallback = session
            return self._fallback

    def _where(self, url: str) -> tuple[str, int, str] | None:
        """(host, port, path) of a URL the direct path serves; None for the requests path."""
        scheme, _, rest = url.partition("://")
        origin, slash, path = rest.partition("/")
        key = f"{scheme}://{origin}"
        if key not in self._direct:
            self._direct[key] = _direct_origin(scheme, origin, url)
        found = self._direct[key]
        if found is None:
            return None
        return found[0], found[1], slash + path.split("#", 1)[0] if slash else "/"

    def _send(self, where: tuple[str, int, str], method: str, body: bytes | None, headers: dict[str, str],
              timeout: float | None) -> Reply:
        host, port, path = where
        headers.setdefault("User-Agent", self._agent)
        headers.setdefault("Accept", "*/*")
        for fresh in (False, True):
            conn, reused = self._connection(host, port, timeout, fresh)
            try:
                status, reply_headers, content, keep = conn.exchange(method, path, headers, body)
            except _STALE as exc:
                stale = reused and not fresh and not conn.closed_here  # closed by the server, not by close()
                self._drop(host, port, conn)
                if stale:
                    continue  # the server closed the idle connection: open another, send again
                raise requests.ConnectionError(exc) from None
            except (TimeoutError, BlockingIOError) as exc:  # connected, no (complete) answer in time
                self._drop(host, port, conn)
                raise requests.exceptions.ReadTimeout(exc) from None
            except (OSError, http.client.HTTPException) as exc:
                self._drop(host, port, conn)
                raise requests.ConnectionError(exc) from None
            if not keep:
                self._drop(host, port, conn)
            return Reply(status, reply_headers, content)
        raise AssertionError("unreachable")

    def _connection(self, host: str, port: int, timeout: float | None, fresh: bool) -> tuple[_Connection, bool]:
        with self._lock:
            conn = None if fresh else self._conns.get((host, port))
            if conn is not None and not conn.closed:
                conn.set_timeout(timeout)
                return conn, True
        try:
            conn = _Connection(host, port, timeout)
        except TimeoutError as exc:
            raise requests.exceptions.ConnectTimeout(exc) from None
        except OSError as exc:  # refused, unreachable, name not found
            raise requests.ConnectionError(exc) from None
        with self._lock:
            self._conns[(host, port)] = conn
        return conn, False

    def _drop(self, host: str, port: int, conn: _Connection) -> None:
        with self._lock:
            if self._conns.get((host, port)) is conn:
                del self._conns[(host, port)]
        conn.close()


class _Headers(dict):
    """Response headers by lower-cased name (a repeated header keeps its last value)."""

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)

    def get_content_charset(self) -> str | None:
        for param in (self.get("content-type") or "").split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"').lower()
        return None


class _Connection:
    """One kept-alive HTTP/1.1 connection, blocking. The request's head and body go out in one write; the answer is
    read by a small parser: the status line, the headers, a body framed by Content-Length, chunked transfer encoding
    or the end of the connection (1xx interim answers skipped). http.client costs about twice as much per call,
    mostly in parsing the headers through the email package."""

    def __init__(self, host: str, port: int, timeout: float | None) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout: float | None = None
        self.set_timeout(timeout)
        self.host = f"[{host}]" if ":" in host else host
        self.host = self.host if port == 80 else f"{self.host}:{port}"
        self.buf = b""
        self.closed = False
        self.closed_here = False  # by close() (the owner gave up), not by the server

    def set_timeout(self, timeout: float | None) -> None:
        """Each send and receive waits at most `timeout` seconds (None: as long as it takes), kept by the kernel
        (SO_SNDTIMEO/SO_RCVTIMEO on a blocking socket): Python's own socket timeout polls before every call, which
        doubles the system calls and the hand-overs of the interpreter lock between the request threads. A call
        that runs out of time raises BlockingIOError (EAGAIN), which `Session._send` reports as a timeout.
        Elsewhere than Linux and macOS, Python's own timeout is used."""
        if sys.platform not in ("linux", "darwin"):
            self.sock.settimeout(timeout)
            return
        if timeout == self.timeout and self.sock.gettimeout() is None:
            return
        self.sock.settimeout(None)
        seconds = 0.0 if timeout is None or timeout == float("inf") else max(timeout, 1e-6)  # 0: no limit
        value = struct.pack("ll", int(seconds), int((seconds % 1) * 1_000_000))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)
        self.timeout = timeout

    def close(self) -> None:
        self.closed = self.closed_here = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it
        except OSError:
            pass
        self.sock.close()

    def exchange(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> tuple[int, _Headers, bytes, bool]:
        """(status, headers, body, keep the connection) for one request."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}", "Accept-Encoding: identity"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if body is not None and len(body) < 65536:
            self.sock.sendall(head + body)
        else:
            self.sock.sendall(head)
            if body:
                self.sock.sendall(body)
        first = True
        while True:
            status, version, reply_headers = self._head(first)
            first = False
            if not 100 <= status < 200:
                break
        connection = (reply_headers.get("connection") or "").lower()
        keep = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        if method == "HEAD" or status in (204, 304):
            return status, reply_headers, b"", keep
        if "chunked" in (reply_headers.get("transfer-encoding") or "").lower():
            return status, reply_headers, self._chunked(), keep
        length = reply_headers.get("content-length")
        if length is not None:
            try:
                size = int(length)
            except ValueError:
                raise http.client.HTTPException(f"bad Content-Length {length!r}") from None
            return status, reply_headers, self._exactly(size), keep
        return status, reply_headers, self._to_the_end(), False

    def _more(self, first: bool = False) -> None:
        data = self.sock.recv(65536)
        if not data:
            self.closed = True
            if first and not self.buf:
                raise http.client.RemoteDisconnected("Remote end closed connection without response")
            raise http.client.IncompleteRead(self.buf)
        self.buf += data

    def _line(self, first: bool = False) -> bytes:
        while True:
            at = self.buf.find(b"\r\n")
            if at >= 0:
                line, self.buf = self.buf[:at], self.buf[at + 2 :]
                return line
            if len(self.buf) > 65536:
                raise http.client.LineTooLong("header line")
            self._more(first)

    def _head(self, first: bool) -> tuple[int, str, _Headers]:
        """The status line and headers, cut from the buffer at the blank line in one piece (a server's head nearly
        always arrives in the read that brings it)."""
        while (end := self.buf.find(b"\r\n\r\n")) < 0:
            if len(self.buf) > 65536:
                raise http.client.LineTooLong("header block")
            self._more(first)
            first = first and not self.buf
        lines = self.buf[:end].decode("latin-1").split("\r\n")
        self.buf = self.buf[end + 4 :]
        status_line = lines[0]
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise http.client.BadStatusLine(status_line[:100])
        headers = _Headers()
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(parts[1]), parts[0], headers

    def _exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            try:
                self._more()
            except http.client.IncompleteRead:
                raise http.client.IncompleteRead(self.buf, size - len(self.buf)) from None
        data, self.buf = self.buf[:size], self.buf[size:]
        return data

    def _chunked(self) -> bytes:
        parts = []
        while True:
            try:
                size = int(self._line().split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise http.client.HTTPException("malformed chunked encoding") from None
            if size == 0:
                while self._line():  # trailers, up to the empty line
                    pass
                return b"".join(parts)
            parts.append(self._exactly(size))
            if self._exactly(2) != b"\r\n":
                raise http.client.HTTPException("malformed chunked encoding")

    def _to_the_end(self) -> bytes:
        while True:
            data = self.sock.recv(65536)
            if not data:
                self.closed = True
                data, self.buf = self.buf, b""
                return data
            self.buf += data


def _direct_origin(scheme: str, origin: str, url: str) -> tuple[str, int, str] | None:
    """(host, port, "") when `url` can go out directly: http, no credentials in it, no proxy for it in the
    environment (requests' own reading of HTTP_PROXY/NO_PROXY and friends, once per origin)."""
    if scheme.lower() != "http" or "@" in origin:
        return None
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    try:
        port = parts.port or 80
    except ValueError:
        return None
    if requests.utils.get_environ_proxies(url):
        return None
    return parts.hostname, port, ""


class ThreadSessions:
    """One `requests.Session` per calling thread, created on first use. `close()` closes every session made so far
    (from any thread), and a thread that calls again afterwards gets a new one, so the owner stays usable. The
    sessions of threads that have ended (a finished worker pool) are closed when the next session is made, so a
    model that serves several runs keeps no idle connections for threads that are gone."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._sessions: list[tuple[threading.Thread, requests.Session]] = []
        self._epoch = 0  # bumped by close(): a thread's session from an earlier epoch is closed, make a new one

    @property
    def epoch(self) -> int:
        """How many times close() was called: a call that began under another epoch was abandoned by its owner."""
        return self._epoch

    def get(self) -> Session:
        session = getattr(self._local, "session", None)
        if session is not None and self._local.epoch == self._epoch:
            return session
        session = make_session()
        with self._lock:
            gone = [s for thread, s in self._sessions if not thread.is_alive()]
            self._sessions = [(t, s) for t, s in self._sessions if t.is_alive()]
            self._sessions.append((threading.current_thread(), session))
            self._local.session, self._local.epoch = session, self._epoch
        for old in gone:
            old.close()
        return session

    def __len__(self) -> int:
        """How many sessions are open (one per thread that has called since the last close)."""
        with self._lock:
            return len(self._sessions)

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = self._sessions, []
            self._epoch += 1
        for _, session in sessions:
            session.close()
