"""The perf client's own HTTP/1.1 reader (vlmkit.perf.wire, driven through vlmkit.perf.client.send) against servers
that break the rules: an extra or pipelined response, a body longer or shorter than its Content-Length, a body that
never ends, one byte a second, non-UTF-8 bytes, malformed chunked encoding, a connection closed mid-chunk.

Every request carries its number n in its body and the server's honest answer to it is unmistakable (n+1 characters
of content, prompt_tokens 1000+n), so each record can be checked to be either its own correct answer or an error
record for that request: never another request's bytes. The hostile behaviour is applied to request 0 only; the
requests after it must be answered correctly, on a fresh connection wherever the framing of the old one was in
doubt. The server is a raw socket server on 127.0.0.1, each connection in a thread of its own, every wait bounded.

Not asked, because no HTTP/1.1 client can do it: a surplus response sent only after the client has written its next
request on that connection is that request's answer as far as the bytes show (responses carry no request id). The
tests send each surplus where a client can see it: in the same write, or while the connection is idle.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Callable

import pytest

from vlmkit.perf.client import Record, make_session, send
from vlmkit.perf.wire import Connection

PROMPT_BASE = 1000
FOREIGN = 7  # the request number of a response nobody asked for (no test sends request 7)
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
JSON = {"Content-Type": "application/json"}
HOLD_S = 20.0  # the longest a server thread holds a connection the client does not close


def events(n: int) -> list[bytes]:
    """The honest answer to request n, event by event."""
    return [
        b'data: {"choices":[{"delta":{"content":"%s"},"finish_reason":null}]}\n\n' % (b"a" * (n + 1)),
        b'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n',
        b'data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d}}\n\n' % (PROMPT_BASE + n, n + 1),
        b"data: [DONE]\n\n",
    ]


def chunk(part: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(part), part)


def by_chunks(n: int) -> bytes:
    return SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(map(chunk, events(n))) + b"0\r\n\r\n"


def by_length(n: int, declared: int | None = None) -> bytes:
    body = b"".join(events(n))
    return SSE_HEAD + b"Content-Length: %d\r\n\r\n" % (len(body) if declared is None else declared) + body


Script = Callable[["HostileServer", socket.socket, int], bool]


def honest(server: "HostileServer", conn: socket.socket, n: int) -> bool:
    conn.sendall(by_chunks(n))
    return True


class HostileServer:
    """Reads each request in full (its JSON body names its number n) and answers request 0 with `first(server,
    conn, 0)`, every other request honestly; a script returns False to close the connection. Stops by itself:
    the listener after HOLD_S * 2, each connection's reads after HOLD_S."""

    def __init__(self, first: Script, every: bool = False) -> None:
        self.first = first
        self.every = every  # every request gets `first`, not request 0 alone
        self.connections = 0
        self.served: list[tuple[int, int]] = []  # (connection number, request number)
        self.event = threading.Event()  # for scripts that tell the test what they have sent
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1/chat/completions"
        self.threads: list[threading.Thread] = []
        self.socks: list[socket.socket] = []
        self.lock = threading.Lock()
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self) -> None:
        deadline = time.monotonic() + HOLD_S * 2
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            with self.lock:
                self.connections += 1
                self.socks.append(conn)
                number = self.connections
            thread = threading.Thread(target=self._serve, args=(conn, number), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        conn.settimeout(HOLD_S)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            with conn:
                while not self.stop.is_set():
                    n = read_request(conn)
                    if n is None:
                        return
                    with self.lock:
                        self.served.append((number, n))
                    script = self.first if n == 0 or self.every else honest
                    if not script(self, conn, n):
                        return
        except (OSError, ValueError, KeyError, StopIteration):  # the client closed or reset the connection, a read
            return  # timed out, or what it sent was no request of this test's (a client out of step)

    def hold(self, conn: socket.socket) -> None:
        """Keep the connection open until the client closes it (or HOLD_S)."""
        deadline = time.monotonic() + HOLD_S
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                conn.settimeout(0.1)
                if not conn.recv(65536):
                    return
            except socket.timeout:
                continue

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.acceptor.join(5)
        with self.lock:
            for sock in self.socks:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in self.threads:
            thread.join(5)


def read_request(conn: socket.socket) -> int | None:
    """The number n of the next request on the connection; None when the client closed it."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        more = conn.recv(65536)
        if not more:
            return None
        buf += more
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:"))
    while len(body) < length:
        more = conn.recv(65536)
        if not more:
            return None
        body += more
    return json.loads(body[:length])["n"]


def exchange(first: Script, count: int = 3, timeout: float = 10.0,
             between: Callable[[HostileServer, int], None] | None = None) -> tuple[list[Record], HostileServer]:
    """Send requests 0..count-1 one after the other on a one-connection pool; `between(server, n)` runs on the
    event loop's thread after request n (blocking it, as a busy loop would be)."""
    server = HostileServer(first)

    async def main() -> list[Record]:
        session = make_session(1, timeout)
        records = []
        try:
            for n in range(count):
                rec = Record(n, n, 16, 0)
                await send(session, server.url, json.dumps({"n": n}).encode(), JSON, rec)
                records.append(rec)
                if between is not None:
                    between(server, n)
        finally:
            await session.close()
        return records

    try:  # a guard against a hang, far above what the requests' own timeouts allow: not a measurement
        records = asyncio.run(asyncio.wait_for(main(), count * timeout + 30))
    finally:
        server.close()
    return records, server


def assert_own(rec: Record) -> None:
    """Request n's own complete answer."""
    assert rec.error is None, (rec.n, rec.error, rec.message)
    assert rec.ok and rec.finished and len(rec.chunks) == 1
    assert (rec.input_tokens, rec.output_tokens, rec.out_chars) == (PROMPT_BASE + rec.n, rec.n + 1, rec.n + 1)
    assert rec.start <= rec.chunks[0] <= rec.end


def assert_rest_own(records: list[Record]) -> None:
    """Every request after the hostile request 0 got its own complete answer."""
    for rec in records[1:]:
        assert_own(rec)


def assert_error(rec: Record, kind: str) -> None:
    """An error record of that kind for request n, holding nothing of another request's answer."""
    assert rec.error == kind, (rec.n, rec.error, rec.message)
    assert not rec.ok and rec.start <= rec.end and rec.message
    assert rec.input_tokens in (None, PROMPT_BASE + rec.n)
    assert rec.out_chars == len(rec.chunks) * (rec.n + 1)  # each content event of its own carries n+1 characters
    assert f"reply-for-{FOREIGN}" not in rec.message


# -- a response more than was asked --------------------------------------------------------------------------------
def pipelined(server: HostileServer, conn: socket.socket, n: int) -> bool:
    conn.sendall(by_chunks(n) + by_chunks(FOREIGN))  # a second response, as if to a request pipelined after this one
    return True


def extra_after_length(server: HostileServer, conn: socket.socket, n: int) -> bool:
    conn.sendall(by_length(n) + by_length(FOREIGN))  # the body is followed by more than its Content-Length
    return True


def junk_after_length(server: HostileServer, conn: socket.socket, n: int) -> bool:
    conn.sendall(by_length(n) + b"\r\n\r\nHTTP/1.1 200 OK\r\n")
    return True


def extra_after_empty_body(server: HostileServer, conn: socket.socket, n: int) -> bool:
    empty = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n\r\n"
    conn.sendall(empty + by_chunks(FOREIGN))
    return True


@pytest.mark.parametrize("first", [pipelined, extra_after_length, junk_after_length])
def test_bytes_after_a_complete_response_never_become_the_next_requests_answer(first: Script) -> None:
    records, server = exchange(first)
    for rec in records:
        assert_own(rec)
    assert server.connections == 2  # the connection that carried the extra bytes was not used again
    assert [n for _, n in server.served] == [0, 1, 2]


def test_bytes_after_an_empty_body_discard_the_connection() -> None:
    records, server = exchange(extra_after_empty_body)
    assert_error(records[0], "dropped")  # an event stream that ended without [DONE] or a finish_reason
    assert_rest_own(records)
    assert server.connections == 2


def smuggled_later(server: HostileServer, conn: socket.socket, n: int) -> bool:
    """The real answer, then, in a write of its own, a response to a request not yet made."""
    conn.sendall(by_chunks(n))
    time.sleep(0.05)
    conn.sendall(by_chunks(FOREIGN))
    server.event.set()
    return True


def closes_when_idle(server: HostileServer, conn: socket.socket, n: int) -> bool:
    conn.sendall(by_chunks(n))
    conn.shutdown(socket.SHUT_WR)
    server.event.set()
    server.hold(conn)
    return False


@pytest.mark.parametrize("first", [smuggled_later, closes_when_idle])
def test_an_idle_connection_with_unread_bytes_or_its_end_is_not_reused_before_the_loop_sees_them(first: Script) -> None:
    """The event loop is blocked (as by a burst of work) from the end of request 0 until the server has sent its
    extra response or closed: the kernel holds bytes the loop has not read when request 1 takes the connection."""

    def busy_loop(server: HostileServer, n: int) -> None:
        if n == 0:
            assert server.event.wait(HOLD_S)
            time.sleep(0.05)  # loopback delivery is immediate; a margin all the same

    records, server = exchange(first, between=busy_loop)
    for rec in records:
        assert_own(rec)
    assert server.connections == 2


@pytest.mark.parametrize("poll", [True, False], ids=["poll", "peek"])
def test_unread_sees_bytes_and_the_end_the_loop_has_not_read(poll: bool) -> None:
    """Connection.unread, by poll and by its fallback (a peek), on a real TCP connection whose loop is not run
    between the server's write and the check."""
    listener = socket.create_server(("127.0.0.1", 0))

    async def main() -> list[bool]:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(lambda: Connection(), *listener.getsockname()[:2])
        listener.settimeout(HOLD_S)
        peer, _ = listener.accept()
        with peer:
            if not poll:
                conn.poller = None
            seen = [conn.unread()]
            peer.sendall(b"HTTP/1.1 200 OK\r\n")
            time.sleep(0.05)  # the loop is blocked: the bytes wait in the kernel
            seen.append(conn.unread())
            conn.sock.recv(100)  # read them behind the loop's back: nothing left, the stream still open
            seen.append(conn.unread())
            peer.shutdown(socket.SHUT_WR)
            time.sleep(0.05)
            seen.append(conn.unread())
        conn.transport.close()
        return seen

    try:
        seen = asyncio.run(asyncio.wait_for(main(), 30))
    finally:
        listener.close()
    assert seen == [False, True, False, True]


def short_length(server: HostileServer, conn: socket.socket, n: int) -> bool:
    """A Content-Length that ends the body inside its first event; what follows it holds another answer."""
    conn.sendall(by_length(n, declared=20) + by_length(FOREIGN))
    return True


def test_a_content_length_shorter_than_the_body_cuts_the_answer_and_discards_the_connection() -> None:
    records, server = exchange(short_length)
    assert_error(records[0], "malformed_sse")  # 'data: {"choices":[{' : the cut event
    assert_rest_own(records)
    assert server.connections == 2


def test_many_requests_in_flight_each_get_their_own_answer_when_every_answer_is_followed_by_another() -> None:
    """Four connections, twelve requests at once, every honest answer followed in the same write by a response to
    another request: each record is its own answer, and no connection carries a second request."""
    server = HostileServer(pipelined, every=True)

    async def main() -> list[Record]:
        session = make_session(4, 10.0)
        records = [Record(n, n, 16, 0) for n in range(12)]
        try:
            await asyncio.gather(*(send(session, server.url, b'{"n": %d}' % r.n, JSON, r) for r in records))
        finally:
            await session.close()
        return records

    try:
        records = asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        server.close()
    for rec in records:
        assert_own(rec)
    assert sorted(n for _, n in server.served) == list(range(12))
    assert server.connections == 12


# -- bodies that never end, or end too slowly -----------------------------------------------------------------------
TIMEOUT = 3.0  # long enough for an honest answer on a loaded machine, short enough for the test


def long_length(server: HostileServer, conn: socket.socket, n: int) -> bool:
    """A Content-Length 100 bytes longer than the body, which holds the first event only."""
    first = events(n)[0]
    conn.sendall(SSE_HEAD + b"Content-Length: %d\r\n\r\n" % (len(first) + 100) + first)
    server.hold(conn)
    return False


def endless_stream(server: HostileServer, conn: socket.socket, n: int) -> bool:
    conn.sendall(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        conn.sendall(chunk(events(n)[0]))  # content without end
        time.sleep(0.1)
    return False


def one_byte_a_second(server: HostileServer, conn: socket.socket, n: int) -> bool:
    reply = by_chunks(n)
    for i in range(min(len(reply), int(HOLD_S))):
        conn.sendall(reply[i : i + 1])
        time.sleep(1.0)
    return False


def endless_head(server: HostileServer, conn: socket.socket, n: int) -> bool:
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(int(HOLD_S * 10)):
        conn.sendall(b"X-Slow: 1\r\n")
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("first", [long_length, endless_stream, one_byte_a_second, endless_head])
def test_a_response_that_never_ends_is_a_timeout_for_its_request_alone(first: Script) -> None:
    records, server = exchange(first, timeout=TIMEOUT)
    assert_error(records[0], "timeout")
    assert_rest_own(records)
    assert server.connections == 2


def done_then_endless(server: HostileServer, conn: socket.socket, n: int) -> bool:
    """The whole answer, [DONE] included, then a chunked body that is never ended."""
    conn.sendall(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(map(chunk, events(n))))
    server.hold(conn)
    return False


def long_length_after_done(server: HostileServer, conn: socket.socket, n: int) -> bool:
    """The whole answer, [DONE] included, under a Content-Length 100 bytes longer."""
    conn.sendall(by_length(n, declared=len(b"".join(events(n))) + 100))
    server.hold(conn)
    return False


@pytest.mark.parametrize("first", [done_then_endless, long_length_after_done])
def test_an_answer_complete_at_done_is_kept_when_its_body_never_ends(first: Script) -> None:
    records, server = exchange(first, timeout=TIMEOUT)
    for rec in records:
        assert_own(rec)
    assert server.connections == 2  # the unended body's connection was given up


def endless_line(server: HostileServer, conn: socket.socket, n: int) -> bool:
    """One SSE line that never ends (64 MiB at most), then silence."""
    conn.sendall(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunk(b'data: {"choices":[{"delta":{"content":"'))
    for _ in range(1024):
        conn.sendall(chunk(b"a" * 65536))
    server.hold(conn)
    return False


def test_an_sse_line_that_never_ends_is_refused_before_the_timeout() -> None:
    """The line is refused once it passes the client's limit on one line, whatever the timeout (30 s here)."""
    records, server = exchange(endless_line, timeout=30.0)
    assert_error(records[0], "malformed_sse")
    assert "line" in records[0].message
    assert_rest_own(records)


# -- bytes that are not UTF-8, or not the shape of a chunk -------------------------------------------------------------
def sse_with(*lines: bytes, head: bytes = SSE_HEAD) -> Script:
    def script(server: HostileServer, conn: socket.socket, n: int) -> bool:
        conn.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(map(chunk, lines)) + b"0\r\n\r\n")
        return True

    script.__name__ = "sse_with"
    return script


BAD_DATA = {
    "non_utf8_content": b'data: {"choices":[{"delta":{"content":"\xff\xfe a"}}]}\n\n',
    "cut_multibyte_char": b'data: {"choices":[{"delta":{"content":"\xc3"}}]}\n\n',
    "delta_not_an_object": b'data: {"choices":[{"delta":"a"}]}\n\n',
    "choices_not_a_list": b'data: {"choices":{"delta":{"content":"a"}}}\n\n',
    "content_not_text": b'data: {"choices":[{"delta":{"content":5}}]}\n\n',
    "usage_not_an_object": b'data: {"choices":[],"usage":[1,2]}\n\n',
    "token_count_not_a_number": b'data: {"choices":[],"usage":{"prompt_tokens":"7","completion_tokens":1}}\n\n',
}


@pytest.mark.parametrize("line", list(BAD_DATA.values()), ids=list(BAD_DATA))
def test_a_data_line_that_is_not_utf8_json_of_a_chunk_is_that_requests_malformed_sse(
    line: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        records, server = exchange(sse_with(line, *events(0)))
    assert_error(records[0], "malformed_sse")
    assert records[0].message == " ".join(line[5:].strip().decode("utf-8", "replace").split())  # the line, quoted
    assert_rest_own(records)
    assert not caplog.records  # recorded, never raised into the event loop


def test_non_utf8_bytes_outside_data_lines_and_in_headers_leave_the_answer_intact() -> None:
    comment = b": \xff\xfe a comment\n\nevent: \xc3\n"
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; x=\xff\r\nX-Junk: \xc3\x28\r\n"
    records, server = exchange(sse_with(comment, *events(0), head=head))
    for rec in records:
        assert_own(rec)
    assert server.connections == 1  # nothing in doubt: the connection is kept


def test_a_non_utf8_error_body_is_quoted_with_replacement_characters() -> None:
    body = b"reply-for-0 \xff\xfe"
    head = b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
    answer = head % len(body) + body

    def first(server: HostileServer, conn: socket.socket, n: int) -> bool:
        conn.sendall(answer)
        return True

    records, server = exchange(first)
    assert_error(records[0], "http_500")
    assert records[0].message == "reply-for-0 \ufffd\ufffd"
    assert_rest_own(records)


# -- framing that is malformed ---------------------------------------------------------------------------------------
def chunk_sized(size: bytes) -> Script:
    """The first event's chunk announced by `size` (which a lenient parser might read as its real length)."""

    def script(server: HostileServer, conn: socket.socket, n: int) -> bool:
        first, *rest = events(n)
        conn.sendall(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + size + b"\r\n" + first + b"\r\n"
                     + b"".join(map(chunk, rest)) + b"0\r\n\r\n")
        return True

    return script


def length_header(*values: bytes, extra: bytes = b"") -> Script:
    def script(server: HostileServer, conn: socket.socket, n: int) -> bool:
        body = b"".join(events(n))
        lines = b"".join(b"Content-Length: %s\r\n" % v for v in values)
        conn.sendall(SSE_HEAD + extra + lines + b"\r\n" + body)
        return True

    return script


def _size(event: bytes, fmt: str) -> bytes:
    return fmt.format(len(event)).encode()


FIRST = events(0)[0]
MALFORMED = {
    "not_hex": b"zz",
    "negative": _size(FIRST, "-{:x}"),
    "hex_prefix": _size(FIRST, "0x{:x}"),
    "underscore": b"_".join(bytes([c]) for c in _size(FIRST, "{:x}")),
    "plus_sign": _size(FIRST, "+{:x}"),
    "empty": b"",
    "too_long": b"1" * 2000,
}


@pytest.mark.parametrize("size", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_chunk_size_drops_that_request_and_its_connection(size: bytes) -> None:
    records, server = exchange(chunk_sized(size))
    assert_error(records[0], "dropped")
    assert "chunk" in records[0].message
    assert_rest_own(records)
    assert server.connections == 2


BAD_LENGTHS = {
    "negative": length_header(b"-1"),
    "plus_sign": length_header(b"+%d" % len(b"".join(events(0)))),
    "underscore": length_header(b"1_0"),
    "two_that_differ": length_header(b"%d" % len(b"".join(events(0))), b"5"),
    "not_a_number": length_header(b"many"),
}


@pytest.mark.parametrize("first", list(BAD_LENGTHS.values()), ids=list(BAD_LENGTHS))
def test_a_malformed_content_length_drops_that_request_and_its_connection(first: Script) -> None:
    records, server = exchange(first)
    assert_error(records[0], "dropped")
    assert "Content-Length" in records[0].message
    assert_rest_own(records)
    assert server.connections == 2


def test_chunked_with_a_content_length_is_read_as_chunked_and_the_connection_given_up() -> None:
    """RFC 9112 6.3: Transfer-Encoding overrides Content-Length, and the connection must be closed after."""
    body = b"".join(map(chunk, events(0))) + b"0\r\n\r\n"

    def first(server: HostileServer, conn: socket.socket, n: int) -> bool:
        conn.sendall(SSE_HEAD + b"Content-Length: 30\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
        return True

    records, server = exchange(first)
    for rec in records:
        assert_own(rec)
    assert server.connections == 2


def closed_mid_chunk(server: HostileServer, conn: socket.socket, n: int) -> bool:
    first = events(n)[0]
    conn.sendall(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(first) + first[:30])
    return False


def test_a_connection_closed_mid_chunk_drops_that_request_alone() -> None:
    records, server = exchange(closed_mid_chunk)
    assert_error(records[0], "dropped")
    assert_rest_own(records)
    assert server.connections == 2
