"""vlmkit.perf.wire's response reader (Connection._feed and _head), fed responses cut at every byte and at random
places over a real asyncio transport (a socket pair), against a second reader written here: a whole-buffer HTTP/1.1
response decoder (status, Content-Type, the de-chunked body, whether the connection may be used again). Broken
framing is checked to end the exchange with `lost` and a reason naming what was wrong."""

from __future__ import annotations

import asyncio
import random
import socket

import pytest

from vlmkit.perf.wire import Connection, WireError, _chunk_size, _content_length, request_bytes


def _feed(pieces: list[bytes], *, close_after: bool = False) -> tuple[dict, Connection]:
    """Start an exchange on a Connection over a real socket pair, hand it `pieces` as reads, then (close_after) the
    end of the connection; what its handler saw."""

    seen: dict = {"heads": [], "body": [], "ends": 0, "lost": []}

    class Handler:
        def head(self, status: int, content_type: str | None) -> None:
            seen["heads"].append((status, content_type))

        def body(self, data: bytes, t: int) -> None:
            seen["body"].append(bytes(data))

        def end(self, t: int) -> None:
            assert isinstance(t, int)  # the time the last bytes were read
            seen["ends"] += 1

        def lost(self, reason: str) -> None:
            seen["lost"].append(reason)

    async def run() -> Connection:
        a, b = socket.socketpair()
        try:
            loop = asyncio.get_running_loop()
            _, conn = await loop.create_connection(Connection, sock=a)
            conn.start(b"GET / HTTP/1.1\r\n\r\n", Handler())
            for piece in pieces:
                conn.data_received(piece)
            if close_after and not conn.closed:
                conn.connection_lost(None)
            if conn.transport is not None:
                conn.transport.close()
            await asyncio.sleep(0)
            return conn
        finally:
            b.close()

    conn = asyncio.run(run())
    seen["body"] = b"".join(seen["body"])
    return seen, conn


# -- the second reader -------------------------------------------------------------------------------------------
def _decode(response: bytes) -> tuple[int, str | None, bytes, bool]:
    """(status, content type, body, reusable) of one whole response (after any 1xx), read with plain string work."""
    while True:
        head, _, rest = response.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        version, status = lines[0].split(" ")[0], int(lines[0].split(" ")[1])
        if status >= 200:
            break
        response = rest
    fields = [(n.strip().lower(), v.strip()) for n, _, v in (line.partition(":") for line in lines[1:])]
    get = lambda name: [v for n, v in fields if n == name]  # noqa: E731
    ctype = (get("content-type") or [None])[-1]
    connection = ",".join(get("connection")).lower()
    reusable = ("close" not in connection) and (version != "HTTP/1.0" or "keep-alive" in connection)
    if status in (204, 304):
        return status, ctype, b"", reusable
    if get("transfer-encoding"):
        body, data = b"", rest
        while True:
            line, _, data = data.partition(b"\r\n")
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            body, data = body + data[:size], data[size + 2:]
        return status, ctype, body, reusable and not get("content-length")
    if get("content-length"):
        return status, ctype, rest[: int(get("content-length")[0].split(",")[0])], reusable
    return status, ctype, rest, False  # framed by the close


def _random_response(rng: random.Random) -> tuple[bytes, bool]:
    """(a valid response, whether it is framed by the close)."""
    body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    status = rng.choice([200, 200, 200, 404, 500, 204])
    version = rng.choice(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0"])
    head = [f"{version} {status} {'OK' if status == 200 else 'Other reason'}"]
    if rng.random() < 0.7:
        head.append(f"{rng.choice(['Content-Type', 'content-type', 'CONTENT-TYPE'])}:  text/event-stream ")
    if rng.random() < 0.3:
        head.append(f"Connection: {rng.choice(['close', 'keep-alive', 'Keep-Alive', 'upgrade, close'])}")
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" if rng.random() < 0.2 else b""
    framing = "none" if status == 204 else rng.choice(["chunked", "length", "close"])
    if framing == "chunked":
        head.append(rng.choice(["Transfer-Encoding: chunked", "transfer-encoding: gzip, Chunked"]))
        data, at = b"", 0
        while at < len(body):
            n = rng.randint(1, 40)
            piece = body[at:at + n]
            at += n
            size = rng.choice(["%x", "%X", "%04x"]) % len(piece)
            data += size.encode() + rng.choice([b"", b";ext=1", b" ;name", b"\t"]) + b"\r\n" + piece + b"\r\n"
        data += b"0\r\n" + (b"X-Trailer: yes\r\n" if rng.random() < 0.5 else b"") + b"\r\n"
    elif framing == "length":
        head.append(f"Content-Length: {len(body)}" + (f", {len(body)}" if rng.random() < 0.2 else ""))
        data = body
    else:
        data = body if status != 204 else b""
    return interim + ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data, framing == "close"


def _cuts(data: bytes, rng: random.Random) -> list[bytes]:
    points = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(0, 12)))) if len(data) > 1 else []
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


@pytest.mark.parametrize("seed", range(60))
def test_responses_cut_anywhere_read_as_the_second_reader_reads_them(seed: int):
    rng = random.Random(seed)
    response, by_close = _random_response(rng)
    status, ctype, body, reusable = _decode(response)
    for pieces in (_cuts(response, rng), [response[i:i + 1] for i in range(len(response))]):
        seen, conn = _feed(pieces, close_after=by_close)
        assert seen["lost"] == [] and seen["ends"] == 1
        assert seen["heads"] == [(status, ctype)] and seen["body"] == body
        assert conn.reusable == reusable


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * 17 + b"5\r\nhello\r\n0\r\n\r\n",
         "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n", "no CRLF after a chunk"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"5" * 1100, "chunk size line too long"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello", "bad Content-Length '5, 6'"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello", "bad Content-Length '-5'"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
         "two Content-Length headers that differ (5 and 6)"),
        (b"SMTP ready\r\n\r\n", "not an HTTP response: 'SMTP ready'"),
        (b"HTTP/1.1\r\n\r\n", "not an HTTP response"),
        (b"HTTP/1.1 2OO OK\r\n\r\n", "bad status line: 'HTTP/1.1 2OO OK'"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: " + b"y" * 70000, "response head too large"),
    ],
)
def test_broken_framing_loses_the_exchange_saying_why(response: bytes, reason: str):
    for pieces in ([response], [response[i:i + 7] for i in range(0, len(response), 7)]):
        seen, conn = _feed(pieces)
        assert seen["ends"] == 0 and len(seen["lost"]) == 1 and reason in seen["lost"][0]
        assert not conn.reusable


def test_a_head_split_across_reads_is_not_cut_by_the_size_limit_below_it():
    response = b"HTTP/1.1 200 OK\r\nX: " + b"y" * 60000 + b"\r\nContent-Length: 2\r\n\r\nok"
    seen, _ = _feed([response[:30000], response[30000:]])
    assert seen["lost"] == [] and seen["body"] == b"ok"


def test_bytes_after_a_complete_response_make_the_connection_unusable():
    for response in (
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nEXTRA",
        b"HTTP/1.1 204 No Content\r\n\r\nEXTRA",
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nEXTRA",
    ):
        seen, conn = _feed([response])
        assert seen["ends"] == 1 and seen["lost"] == [] and not conn.reusable
        assert seen["body"] in (b"ok", b"")
    # the same without the extra bytes: reusable
    seen, conn = _feed([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"])
    assert seen["ends"] == 1 and conn.reusable


def test_a_body_framed_by_the_close_ends_with_the_connection_and_a_cut_one_is_lost():
    seen, conn = _feed([b"HTTP/1.1 200 OK\r\n\r\npart one, ", b"part two"], close_after=True)
    assert seen["body"] == b"part one, part two" and seen["ends"] == 1 and not conn.reusable
    seen, _ = _feed([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"], close_after=True)
    assert seen["ends"] == 0 and "closed before the response ended" in seen["lost"][0]
    seen, _ = _feed([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"], close_after=True)
    assert seen["ends"] == 0 and seen["body"] == b"hel" and len(seen["lost"]) == 1


def test_transfer_encoding_not_chunked_last_is_framed_by_the_close():
    seen, conn = _feed([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nraw bytes"], close_after=True)
    assert seen["body"] == b"raw bytes" and seen["ends"] == 1 and not conn.reusable


def test_chunk_size_and_content_length_values():
    assert [_chunk_size(v) for v in (b"a", b"FF", b"10;x=1", b"10 \t;x", b"0" * 15 + b"1", b"5;a=1;b=2")] == [
        10, 255, 16, 16, 1, 5]
    for bad in (b"", b";x", b"0x1", b"-1", b"1_0", b" 1", b"g", b"1" * 17, b"5\x0c", b"5X"):
        with pytest.raises(WireError):
            _chunk_size(bad)
    assert _content_length("12", None) == 12 and _content_length(" 7 , 7", 7) == 7
    for bad in ("", "1.5", "+3", "٣", "3, 4"):
        with pytest.raises(WireError):
            _content_length(bad, None)


def test_a_request_is_one_buffer_unless_its_body_is_large():
    head = b"POST /v1 HTTP/1.1\r\nHost: x\r\n"
    assert request_bytes(head, b"{}") == head + b"Content-Length: 2\r\n\r\n{}"
    big = b"x" * 65536
    assert request_bytes(head, big) == [head + b"Content-Length: 65536\r\n\r\n", big]
    assert request_bytes(head, big[:-1]) == head + b"Content-Length: 65535\r\n\r\n" + big[:-1]


@pytest.mark.parametrize(
    ("pieces", "reason"),
    [
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n"],
         "malformed chunked encoding (no CRLF after a chunk)"),
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"5" * 1025],
         "malformed chunked encoding (chunk size line too long)"),
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"5" * 1024, b"\r\n"],
         f"malformed chunked encoding (bad chunk size {(b'5' * 40)!r})"),
        ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n5\r\nhello\r\n0\r\n\r\n"],
         "malformed chunked encoding (bad chunk size b'')"),
        ([b"HTTP/1.1 200 OK\r\n" + b"X: " + b"y" * 70000], "response head too large"),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 50 + b"x\r\n\r\n"], f"bad Content-Length {'9' * 40!r}"),
        ([b"\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"], "not an HTTP response: ''"),
        ([b"HTTP/1.1  200 OK\r\n\r\n"], "bad status line: 'HTTP/1.1  200 OK'"),
        ([b"HTTP/1.1 2OO " + b"r" * 120 + b"\r\n\r\n"], f"bad status line: {('HTTP/1.1 2OO ' + 'r' * 120)[:100]!r}"),
        ([b"NOPE/1.1 200 " + b"r" * 120 + b"\r\n\r\n"],
         f"not an HTTP response: {('NOPE/1.1 200 ' + 'r' * 120)[:100]!r}"),
    ],
)
def test_what_was_wrong_is_said_exactly(pieces: list[bytes], reason: str):
    seen, conn = _feed(pieces)
    assert seen["lost"] == [reason] and seen["ends"] == 0 and not conn.reusable


def test_a_head_of_exactly_the_limit_is_still_read():
    head = b"HTTP/1.1 200 OK\r\nX: "
    first = head + b"y" * (65536 - len(head))
    assert len(first) == 65536
    seen, _ = _feed([first, b"\r\nContent-Length: 0\r\n\r\n"])
    assert seen["lost"] == [] and seen["ends"] == 1


@pytest.mark.parametrize(
    ("response", "status", "ctype", "body", "reusable"),
    [
        (b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", 200, None, b"ok", True),  # no reason phrase
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, None, b"", True),  # ends at once
        (b"HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n", 304, None, b"", True),  # never a body
        (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; note=a:b\r\nContent-Length: 1\r\n\r\nx", 200,
         "text/plain; note=a:b", b"x", True),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip,chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 200, None, b"ok", True),
        # chunked and a length: read as chunked, the connection not used again
        (b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 200,
         None, b"ok", False),
    ],
)
def test_framing_cases_read_to_their_end_without_the_connection_closing(
        response: bytes, status: int, ctype: str | None, body: bytes, reusable: bool):
    seen, conn = _feed([response])
    assert seen["lost"] == [] and seen["ends"] == 1
    assert seen["heads"] == [(status, ctype)] and seen["body"] == body and conn.reusable == reusable
