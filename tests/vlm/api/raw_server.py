"""A raw-socket HTTP server for byte-level faults: each request's answer is whatever bytes a test's function writes.

    def answer(conn: RawConnection, request: RawRequest) -> None:
        conn.send(http_response(200, chat_json(f"answer to {request.question}")))
        conn.send(http_response(200, chat_json("an answer nobody asked for")))  # one response too many

    with RawServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.base_url)

It binds 127.0.0.1 on a free port and serves each connection from a daemon thread, one request after another, until
the client closes it, the answer function returns False (the server then closes the connection) or the server stops
on leaving the `with` block: every socket is shut then, so a function that is still writing (a body that never ends)
fails its next write and its thread ends. Waits inside answer functions go through `RawConnection.wait`, which wakes
at once when the server stops.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_HEAD = 65536


@dataclass
class RawRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    number: int  # 0 for the first request the server received (over all connections)
    connection: int  # 0 for the first connection the server accepted

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def question(self) -> str:
        """The text of the last message of a chat-completions body (the prompt a test sent)."""
        content = self.json["messages"][-1]["content"]
        return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def chat_json(text: str, *, model: str = "raw-model") -> bytes:
    """A non-streaming chat-completions response body."""
    return json.dumps({
        "id": "chatcmpl-raw", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }).encode()


def http_response(
    status: int, body: bytes, *, length: int | None = None, headers: dict[str, str] | None = None
) -> bytes:
    """One HTTP/1.1 response: `length` is the Content-Length it claims (the body's own length unless a test lies)."""
    head = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}", "Content-Type: application/json",
            f"Content-Length: {len(body) if length is None else length}"]
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


class RawConnection:
    def __init__(self, sock: socket.socket, stopping: threading.Event) -> None:
        self.sock = sock
        self._stopping = stopping
        self._buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def wait(self, seconds: float) -> bool:
        """Sleep; True when the server is stopping (the caller should return)."""
        return self._stopping.wait(seconds)

    def read_request(self, number: Callable[[], int], connection: int) -> RawRequest | None:
        """The next request on this connection; None when the client closed it."""
        while b"\r\n\r\n" not in self._buf:
            if len(self._buf) > MAX_HEAD or not self._recv():
                return None
        head, _, self._buf = self._buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        size = int(headers.get("content-length") or 0)
        while len(self._buf) < size:
            if not self._recv():
                return None
        body, self._buf = self._buf[:size], self._buf[size:]
        return RawRequest(method, path, headers, body, number(), connection)

    def _recv(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except OSError:
            return False
        self._buf += data
        return bool(data)


Answer = Callable[[RawConnection, RawRequest], "bool | None"]


class RawServer:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[RawRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._count = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> "RawServer":
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        with self._lock:
            socks = list(self._socks)
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()

    def _next_number(self) -> int:
        with self._lock:
            number, self._count = self._count, self._count + 1
            return number

    def _accept(self) -> None:
        connections = 0
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(None)
            with self._lock:
                self._socks.append(sock)
            thread = threading.Thread(target=self._serve, args=(sock, connections), daemon=True)
            connections += 1
            thread.start()
            self._threads.append(thread)

    def _serve(self, sock: socket.socket, connection: int) -> None:
        conn = RawConnection(sock, self._stopping)
        try:
            while not self._stopping.is_set():
                request = conn.read_request(self._next_number, connection)
                if request is None:
                    return
                with self._lock:
                    self.requests.append(request)
                if self.answer(conn, request) is False:
                    return
        except OSError:
            return  # the client went away mid-answer (a timeout test) or the server is stopping
        finally:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
