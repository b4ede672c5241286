"""The perf client's own HTTP/1.1 reader (vlmkit.perf.wire) against a raw socket server that frames its answers in
every way HTTP/1.1 allows: chunked (cut at every byte), by Content-Length, by the end of the connection, after a
100 Continue; keep-alive reuse, and an idle connection the server closed."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable

import pytest

from vlmkit.perf.client import Record, make_session, send

EVENTS = [
    b'data: {"choices":[{"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n',
    b'data: {"choices":[{"delta":{"content":"lo"},"finish_reason":null}]}\n\n',
    b'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n',
    b'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}\n\n',
    b"data: [DONE]\n\n",
]
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"


def chunked(parts: list[bytes]) -> bytes:
    return b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\nX-Trailer: 1\r\n\r\n"


class RawServer:
    """Answers each request on a connection with the next scripted reply: (bytes, byte_by_byte, close_after)."""

    def __init__(self, replies: list[tuple[bytes, bool, bool]]) -> None:
        self.replies = list(replies)
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1/chat/completions"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.replies:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                while self.replies:
                    if not self._read_request(conn):
                        break
                    data, slow, close = self.replies.pop(0)
                    if slow:
                        for i in range(len(data)):
                            conn.sendall(data[i : i + 1])
                            time.sleep(0.0005)
                    else:
                        conn.sendall(data)
                    if close:
                        break

    @staticmethod
    def _read_request(conn: socket.socket) -> bool:
        buf = b""
        while b"\r\n\r\n" not in buf:
            more = conn.recv(65536)
            if not more:
                return False
            buf += more
        head, _, body = buf.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(body) < length:
            body += conn.recv(65536)
        return True

    def close(self) -> None:
        self.sock.close()


def exchange(server: RawServer, count: int, between: Callable[[], None] | None = None) -> list[Record]:
    async def main() -> list[Record]:
        session = make_session(1, 10)
        records = []
        try:
            for n in range(count):
                rec = Record(n, 0, 16, 0)
                await send(session, server.url, json.dumps({"n": n}).encode(), {"Content-Type": "application/json"}, rec)
                records.append(rec)
                if between is not None:
                    await asyncio.get_running_loop().run_in_executor(None, between)
        finally:
            await session.close()
        return records

    return asyncio.run(main())


def assert_complete(rec: Record) -> None:
    assert rec.error is None, (rec.error, rec.message)
    assert rec.ok and len(rec.chunks) == 2 and rec.finished
    assert (rec.input_tokens, rec.output_tokens, rec.out_chars) == (7, 2, 5)
    assert rec.start <= rec.chunks[0] <= rec.chunks[1] <= rec.end


@pytest.mark.parametrize("slow", [False, True], ids=["whole", "byte_by_byte"])
def test_chunked_streams_parse_however_they_are_cut_and_the_connection_is_reused(slow: bool) -> None:
    reply = SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(EVENTS)
    server = RawServer([(reply, slow, False), (reply, slow, False)])
    try:
        records = exchange(server, 2)
    finally:
        server.close()
    for rec in records:
        assert_complete(rec)
    assert server.connections == 1  # kept alive


def test_a_body_framed_by_length_or_by_the_end_of_the_connection_and_an_interim_100() -> None:
    body = b"".join(EVENTS)
    by_length = SSE_HEAD + b"Content-Length: %d\r\n\r\n" % len(body) + body
    by_close = b"HTTP/1.0 100 Continue\r\n\r\n" + SSE_HEAD.replace(b"1.1", b"1.0") + b"\r\n" + body
    server = RawServer([(by_length, False, False), (by_close, False, True)])
    try:
        records = exchange(server, 2)
    finally:
        server.close()
    for rec in records:
        assert_complete(rec)


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error() -> None:
    reply = SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(EVENTS)
    server = RawServer([(reply, False, True), (reply, False, False)])  # closes after the first answer
    try:
        records = exchange(server, 2, between=lambda: time.sleep(0.05))
    finally:
        server.close()
    for rec in records:
        assert_complete(rec)
    assert server.connections == 2


def test_an_error_status_keeps_the_servers_words_and_a_cut_stream_is_dropped() -> None:
    error = b'{"error": {"message": "no such model"}}'
    not_found = b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(error) + error
    cut = SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(EVENTS[:1])[:-20]  # no terminating chunk
    server = RawServer([(not_found, False, False), (cut, False, True)])
    try:
        first, second = exchange(server, 2)
    finally:
        server.close()
    assert (first.error, first.status) == ("http_404", 404) and "no such model" in (first.message or "")
    assert second.error == "dropped" and len(second.chunks) == 1


@pytest.mark.parametrize("kernel_times", [True, False], ids=["kernel_times", "read_times"])
def test_a_chunk_is_timed_when_the_kernel_received_it_not_when_a_busy_loop_read_it(kernel_times: bool) -> None:
    """The loop is kept busy while the whole answer arrives: with kernel times the chunks are timed before the loop
    could read them; with read times, after."""
    reply = SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(EVENTS)
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"
    asked, go, sent = threading.Event(), threading.Event(), threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            RawServer._read_request(conn)
            asked.set()
            go.wait(10)  # answer only once the client's loop is blocked
            conn.sendall(reply)
            sent.set()
            conn.recv(1)  # until the client closes

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    async def main() -> tuple[Record, int]:
        session = make_session(1, 10, kernel_times=kernel_times)
        rec = Record(0, 0, 16, 0)
        task = asyncio.ensure_future(send(session, url, b"{}", {"Content-Type": "application/json"}, rec))
        while not asked.is_set():  # let the loop connect and write the request
            await asyncio.sleep(0.001)
        go.set()
        assert sent.wait(10)  # the loop is blocked while the whole answer arrives
        unblocked = time.monotonic_ns()
        await task
        await session.close()
        return rec, unblocked

    try:
        rec, unblocked = asyncio.run(main())
    finally:
        listener.close()
    assert_complete(rec)
    if kernel_times:
        assert rec.chunks[0] < unblocked and rec.end < unblocked
    else:
        assert rec.chunks[0] >= unblocked
