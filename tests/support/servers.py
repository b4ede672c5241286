"""A small OpenAI-compatible HTTP server for tests: answers from a callback, injects faults, records requests.

    with FaultServer(script(Reply(429, headers={"Retry-After": "1"}), chat_reply("ok"))) as server:
        model = OpenAICompatModel("m", api_base=server.base_url)
        ...
        server.requests  # what arrived: path, headers, parsed JSON body, arrival time, client (host, port)

It binds 127.0.0.1 on a free port, serves from daemon threads, and stops on leaving the `with` block (a reply
that is still sleeping is woken and abandoned).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None when the body was not JSON
    raw: bytes
    arrived: float  # time.monotonic() when the request line was read
    number: int  # 0 for the first request the server received
    client: tuple[str, int] | None = None  # the client's (host, port): one port per connection


@dataclass
class Reply:
    """What to answer: a status, a JSON-able body (or raw bytes/str sent as is), headers, a delay first."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Responder = Callable[[Recorded], Reply]


def chat_body(text: str | None, *, model: str = "served-model", usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """A non-streaming chat-completions response object."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage if usage is not None else {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    }


def chat_reply(text: str | None, **kwargs: Any) -> Reply:
    return Reply(200, chat_body(text, **kwargs))


def models_reply(*ids: str, max_model_len: dict[str, int] | None = None) -> Reply:
    """An OpenAI `GET /v1/models` list; `max_model_len` adds that field to the named entries, as vLLM reports it."""
    entries = []
    for model_id in ids:
        entry: dict[str, Any] = {"id": model_id, "object": "model", "created": 0, "owned_by": "test"}
        if max_model_len and model_id in max_model_len:
            entry["max_model_len"] = max_model_len[model_id]
        entries.append(entry)
    return Reply(200, {"object": "list", "data": entries})


def script(*replies: Reply) -> Responder:
    """Answer the n-th request with the n-th reply; the last reply repeats once the script runs out."""
    if not replies:
        raise ValueError("script needs at least one reply")
    return lambda request: replies[min(request.number, len(replies) - 1)]


class FaultServer:
    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[Recorded] = []
        self.disconnected: list[tuple[str, int]] = []  # client (host, port) of each connection that has ended
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> "FaultServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like real services (exercises the client's pool)
            timeout = 30  # an idle keep-alive connection frees its thread after this

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def finish(self) -> None:
                super().finish()
                with server._lock:
                    server.disconnected.append(tuple(self.client_address[:2]))

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                with server._lock:
                    number = next(server._counter)
                    record = Recorded(
                        self.command, self.path, dict(self.headers), body, raw, arrived, number,
                        client=tuple(self.client_address[:2]),
                    )
                    server.requests.append(record)
                reply = server.responder(record)
                if reply.delay and server._stopping.wait(reply.delay):
                    return
                if isinstance(reply.body, bytes):
                    payload, ctype = reply.body, "application/octet-stream"
                elif isinstance(reply.body, str):
                    payload, ctype = reply.body.encode(), "application/json"  # e.g. deliberately broken JSON
                else:
                    payload, ctype = json.dumps(reply.body).encode(), "application/json"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FaultServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def wait_disconnected(self, ports: set[int], within: float = 10.0) -> bool:
        """True once the connections from all these client ports have ended (False after `within` seconds)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            with self._lock:
                if ports <= {port for _, port in self.disconnected}:
                    return True
            time.sleep(0.01)
        return False

    def bodies(self) -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests]
