"""A standalone mock OpenAI-compatible streaming server with injected delays, for load-testing the load tester.

    python tools/mock_openai_server.py --port 8000 --ttft-ms 20 --itl-ms 20 --tokens 32

It prints `listening on http://127.0.0.1:PORT` once it accepts connections (`--port 0` picks a free port) and
serves until SIGTERM/SIGINT. Raw asyncio, no framework, so that the server is never the bottleneck of a
benchmark of the client (one core drives well above 10,000 short streams per second).

POST /v1/chat/completions (or /chat/completions) with `"stream": true` answers Server-Sent Events, chunked:
- the first content chunk `ttft_ms` (plus `--ttft-per-kb-ms` per KB of the body) after the request body was received, then one chunk every `itl_ms`, each
  one token (the text `tok `); token k is sent at received + ttft + k*itl (absolute deadlines: no drift);
- tokens: `--tokens`, capped by the request's max_tokens; with `"ignore_eos": true`, exactly max_tokens;
- a final chunk with finish_reason, then (when `stream_options.include_usage` is asked) a usage chunk with
  completion_tokens = tokens sent and prompt_tokens = body bytes // 4 (a stand-in, not a tokenizer), then
  `data: [DONE]`. `--no-usage` never sends usage.
Without `"stream": true` (or with `--no-stream`) the answer is one chat.completion JSON object, sent when the last
token would have been (ttft + (tokens - 1) * itl after the body arrived), so it plays a slow server for `vlmkit run`.
GET /health and GET .../models answer 200; GET /metrics answers vLLM's Prometheus names for what this server counts
(streams running, prompt/generation tokens, --prefix-cache queries and hits in tokens of 4 bytes); anything else 404.
`--answer-from-prompt` answers the text of the prompt's first `[answer:X]` directive (X: letters and digits) as one
token, for accuracy under load (`vlmkit perf --score`); with `--wrong-above N`, a stream that arrives while N or more
are already being answered gets a wrong answer instead (`A`, or `B` when X is `A`): right at low concurrency, wrong
at high.
`--ttft-per-running-ms X` adds X ms to the first token's delay per stream already being answered (a latency that
grows with the load, for the SLO search); `--prefix-cache` plays a prefix cache over the bodies' leading bytes.

Faults for tests (with `--faults`), chosen per request by a directive in the prompt text: `[mock:http500]` (HTTP 500),
`[mock:drop]` (two chunks, then the connection is cut), `[mock:malformed]` (a `data:` line that is not JSON),
`[mock:hang]` (one chunk, then silence until the client goes away), `[mock:error]` (an error object in the
stream). `--record FILE` appends every request body (parsed JSON) as one line to FILE. `--require-key KEY`
answers 401 to requests without `Authorization: Bearer KEY`, echoing the key it was given in the error message
(as some servers do: a client must keep even a wrong key out of what it writes).

`--stats FILE` records, per streamed request, `time.monotonic_ns()` times (CLOCK_MONOTONIC: one clock for every
process on the host, so a client on the same host can compare its own timestamps with them): `arrived`, when the
server handled the request's complete body (the data_received call that completed it: late by however long the
server's own event loop was busy); `arrived_kernel`, when the kernel received the bytes that completed it (the
socket's SO_TIMESTAMPNS receive time, a CLOCK_REALTIME stamp moved to CLOCK_MONOTONIC by the offset between the two
clocks read at that moment; null where the platform gives none): free of the server's lag; `first` and `last`,
just before the first and the last token chunks were handed to the socket (a write is a send(2) at once). With the request's tag, the first `[req:TAG]` in
the body (TAG: letters, digits, `_`, `-`), which the first token then echoes (content `[req:TAG] `) so that a client
that keeps only the generated text can still be matched. The records are written to FILE as JSON lines when the
server stops (SIGTERM/SIGINT).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from time import monotonic_ns
from typing import Any

from vlmkit.perf.wire import stamp_reads

_MAX_TOKENS = re.compile(rb'"max_tokens"\s*:\s*(\d+)')
_STREAM = re.compile(rb'"stream"\s*:\s*true')
_IGNORE_EOS = re.compile(rb'"ignore_eos"\s*:\s*true')
_FAULT = re.compile(rb"\[mock:([a-z0-9]+)\]")
_TAG = re.compile(rb"\[req:([A-Za-z0-9_-]+)\]")
_ANSWER = re.compile(rb"\[answer:([A-Za-z0-9]+)\]")
CACHE_BLOCK = 64  # bytes per --prefix-cache block
CACHE_LIMIT = 1_000_000  # blocks remembered at most
_STATUS_TEXT = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 411: "Length Required",
                500: "Internal Server Error"}


def _chunk(payload: bytes) -> bytes:
    """One HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _event(obj: dict[str, Any]) -> bytes:
    return _chunk(b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n")


def _delta(content: str | None, finish: str | None = None, role: bool = False) -> dict[str, Any]:
    delta: dict[str, Any] = {"role": "assistant"} if role else {}
    if content is not None:
        delta["content"] = content
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Settings:
    def __init__(self, args: argparse.Namespace) -> None:
        self.ttft = args.ttft_ms / 1000.0
        self.ttft_per_kb = args.ttft_per_kb_ms / 1000.0
        self.ttft_per_running = args.ttft_per_running_ms / 1000.0
        self.prefix_cache: set[int] | None = set() if args.prefix_cache else None
        self.running = 0  # streams being answered (the /metrics gauge; --ttft-per-running-ms)
        self.counters = {"prompt_tokens": 0, "generation_tokens": 0, "prefix_cache_queries": 0, "prefix_cache_hits": 0,
                         "requests": 0}
        self.itl = args.itl_ms / 1000.0
        self.tokens = args.tokens
        self.usage = not args.no_usage
        self.stream = not args.no_stream
        self.answer_from_prompt = args.answer_from_prompt
        self.wrong_above = args.wrong_above
        self.record = open(args.record, "a", encoding="utf-8") if args.record else None
        self.faults = args.faults
        self.key = args.require_key
        self.stats_path = args.stats
        self.stats: list[list[Any]] | None = [] if args.stats else None  # [tag, arrived, first, last, kernel]
        self.first = _event(_delta("tok ", role=True))
        self.token = _event(_delta("tok "))
        self.done = _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
        self.headers_sse = (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )

    def cached_bytes(self, body: bytes) -> int:
        """--prefix-cache: how many leading bytes of `body` an earlier request had already sent, in whole blocks of
        CACHE_BLOCK bytes (a chain of block hashes, as a server's prefix cache chains its token blocks); the body's
        blocks are cached from now on. Counted as tokens of 4 bytes in the /metrics counters."""
        if self.prefix_cache is None:
            return 0
        hits = 0
        chain = 0
        matching = True
        blocks = len(body) // CACHE_BLOCK
        for i in range(blocks):
            chain = hash((chain, body[i * CACHE_BLOCK:(i + 1) * CACHE_BLOCK]))
            if matching and chain in self.prefix_cache:
                hits += 1
            else:
                matching = False
                if len(self.prefix_cache) < CACHE_LIMIT:
                    self.prefix_cache.add(chain)
        self.counters["prefix_cache_queries"] += blocks * CACHE_BLOCK // 4
        self.counters["prefix_cache_hits"] += hits * CACHE_BLOCK // 4
        return hits * CACHE_BLOCK

    def metrics_text(self) -> bytes:
        """GET /metrics: vLLM's names for what this server knows, in Prometheus' text format."""
        label = '{model_name="mock-model"}'
        lines = []
        for name, kind, value in (
            ("vllm:num_requests_running", "gauge", self.running),
            ("vllm:num_requests_waiting", "gauge", 0),
            ("vllm:kv_cache_usage_perc", "gauge", min(1.0, self.running / 64)),
            ("vllm:prompt_tokens_total", "counter", self.counters["prompt_tokens"]),
            ("vllm:generation_tokens_total", "counter", self.counters["generation_tokens"]),
            ("vllm:prefix_cache_queries_total", "counter", self.counters["prefix_cache_queries"]),
            ("vllm:prefix_cache_hits_total", "counter", self.counters["prefix_cache_hits"]),
            ("vllm:request_success_total", "counter", self.counters["requests"]),
        ):
            lines += [f"# HELP {name} mock figure", f"# TYPE {name} {kind}", f"{name}{label} {float(value)}"]
        return ("\n".join(lines) + "\n").encode()

    def first_for(self, tag: str | None) -> bytes:
        return self.first if tag is None else _event(_delta(f"[req:{tag}] ", role=True))

    def write_stats(self) -> None:
        if self.stats_path is None or self.stats is None:
            return
        with open(self.stats_path, "w", encoding="utf-8") as handle:
            for tag, arrived, first, last, kernel in self.stats:
                handle.write(json.dumps({"tag": tag, "arrived_ns": arrived, "arrived_kernel_ns": kernel,
                                         "first_ns": first, "last_ns": last}) + "\n")

    def tail(self, n: int, prompt_tokens: int, usage: bool, finish: str) -> bytes:
        out = _event(_delta(None, finish))
        if usage and self.usage:
            out += _event(
                {
                    "id": "chatcmpl-mock",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "mock-model",
                    "choices": [],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": n, "total_tokens": prompt_tokens + n},
                }
            )
        return out + self.done


def _last(body: bytes, key: bytes, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
    """The pattern matched at the last occurrence of a top-level key (found from the end: a body's media come
    first, its settings last, so a 4 MB body is not scanned)."""
    at = body.rfind(key)
    return pattern.match(body, at) if at >= 0 else None


def _plain(status: int, obj: Any, close: bool = False) -> bytes:
    body = json.dumps(obj).encode()
    head = (
        f"HTTP/1.1 {status} {_STATUS_TEXT.get(status, 'Status')}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{'Connection: close' + chr(13) + chr(10) if close else ''}\r\n"
    )
    return head.encode() + body


class Connection(asyncio.Protocol):
    def __init__(self, settings: Settings) -> None:
        self.s = settings
        self.parts: list[bytes] = []  # bytes received and not yet answered
        self.size = 0
        self.transport: asyncio.Transport | None = None
        self.busy = False  # a response is being streamed; later bytes wait in parts
        self.need = 0  # bytes the request being received needs (headers + body), once known
        self.timer: asyncio.TimerHandle | None = None
        self.stat: list[Any] | None = None  # the --stats record of the request being streamed
        self.stamped: Any = None  # vlmkit.perf.wire.stamp_reads: the kernel receive time of the last read
        self.ttft = settings.ttft  # the request being answered: --ttft-ms plus --ttft-per-kb-ms of its body
        self.counted = False  # the stream being answered counts in Settings.running
        self.answer: bytes | None = None  # --answer-from-prompt: the first (only) chunk of the stream being answered

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.stamped = stamp_reads(transport) if self.s.stats is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.transport = None
        self._uncount()

    def _uncount(self) -> None:
        if self.counted:
            self.counted = False
            self.s.running -= 1

    def data_received(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)
        if not self.busy and self.size >= self.need:  # a large body is joined once, when complete
            self._next_request()

    def _next_request(self) -> None:
        while not self.busy and self.transport is not None and self.parts:
            buf = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
            self.parts = [buf]
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = buf[:end].decode("latin-1").split("\r\n")
            try:
                method, path, _ = lines[0].split(" ", 2)
            except ValueError:
                self.transport.write(_plain(400, {"error": "bad request line"}, close=True))
                self.transport.close()
                return
            length = 0
            authorization = ""
            for line in lines[1:]:
                name, _, value = line.partition(":")
                lname = name.strip().lower()
                if lname == "content-length":
                    length = int(value.strip())
                elif lname == "authorization":
                    authorization = value.strip()
                elif lname == "transfer-encoding" and "chunked" in value.lower():
                    self.transport.write(_plain(411, {"error": "send a Content-Length"}, close=True))
                    self.transport.close()
                    return
            total = end + 4 + length
            if len(buf) < total:
                self.need = total
                return  # wait for the rest of the body
            body = buf[end + 4 : total]
            rest = buf[total:]
            self.parts = [rest] if rest else []
            self.size, self.need = len(rest), 0
            if self.s.key and authorization != f"Bearer {self.s.key}":
                presented = authorization.removeprefix("Bearer ").strip() or "none"
                message = f"Incorrect API key provided: {presented}"  # echoed, as some servers do
                self.transport.write(_plain(401, {"error": {"message": message, "code": 401}}))
                continue
            self._respond(method, path.split("?", 1)[0], body)

    def _respond(self, method: str, path: str, body: bytes) -> None:
        assert self.transport is not None
        arrived = monotonic_ns()
        if method == "GET" and path == "/metrics":
            text = self.s.metrics_text()
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: "
                                 + str(len(text)).encode() + b"\r\n\r\n" + text)
            return
        if method == "GET" and (path == "/health" or path.endswith("/models")):
            self.transport.write(_plain(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}]}))
            return
        if method != "POST" or path not in ("/v1/chat/completions", "/chat/completions"):
            self.transport.write(_plain(404, {"error": {"message": f"no route {method} {path}", "code": 404}}))
            return
        if self.s.record is not None:
            try:
                self.s.record.write(json.dumps(json.loads(body)) + "\n")
            except ValueError:
                self.s.record.write(json.dumps({"unparsable_body_bytes": len(body)}) + "\n")
            self.s.record.flush()
        fault_match = _FAULT.search(body) if self.s.faults else None
        fault = fault_match.group(1).decode() if fault_match else ""
        if fault == "http500":
            self.transport.write(_plain(500, {"error": {"message": "injected failure", "code": 500}}))
            return
        found = _last(body, b'"max_tokens"', _MAX_TOKENS)
        max_tokens = int(found.group(1)) if found else None
        ignore_eos = _last(body, b'"ignore_eos"', _IGNORE_EOS) is not None
        n = max_tokens if (ignore_eos and max_tokens) else min(self.s.tokens, max_tokens or self.s.tokens)
        n = max(n, 1)
        self.answer = self._answer_chunk(body) if self.s.answer_from_prompt else None
        if self.answer is not None:
            n = 1
        finish = "length" if max_tokens is not None and n >= max_tokens else "stop"
        stream = self.s.stream and _last(body, b'"stream"', _STREAM) is not None
        prompt_tokens = len(body) // 4
        fresh = len(body) - self.s.cached_bytes(body)  # the bytes a prefill would have to read
        self.ttft = self.s.ttft + self.s.ttft_per_kb * fresh / 1024 + self.s.ttft_per_running * self.s.running
        self.s.counters["prompt_tokens"] += prompt_tokens
        self.s.counters["generation_tokens"] += n
        self.s.counters["requests"] += 1
        if not stream:
            reply = {
                "id": "chatcmpl-mock", "object": "chat.completion", "created": 0, "model": "mock-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "tok " * n}, "finish_reason": finish}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": n, "total_tokens": prompt_tokens + n},
            }
            delay = self.ttft + (n - 1) * self.s.itl  # the whole answer, as a streamed one would have taken
            if delay <= 0:
                self.transport.write(_plain(200, reply))
                return
            self.busy = True
            self.timer = asyncio.get_running_loop().call_later(delay, self._answer_whole, _plain(200, reply))
            return
        usage = body.rfind(b'"include_usage"') >= 0
        tail = self.s.tail(n, prompt_tokens, usage, finish)
        stat: list[Any] | None = None
        if self.s.stats is not None:
            tagged = _TAG.search(body)
            kernel = self.stamped.received_ns if self.stamped is not None else None
            stat = [tagged.group(1).decode() if tagged else None, arrived, 0, 0, kernel]
            self.s.stats.append(stat)
        if not fault and self.ttft == 0 and self.s.itl == 0:
            first = self.answer or (self.s.first if stat is None else self.s.first_for(stat[0]))
            if stat is not None:
                stat[2] = stat[3] = monotonic_ns()
            self.transport.write(self.s.headers_sse + first + self.s.token * (n - 1) + tail)
            return
        self.busy = True
        self.counted = True
        self.s.running += 1
        self.transport.write(self.s.headers_sse)
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.stat = stat
        self.timer = loop.call_at(start + self.ttft, self._stream, loop, start, 0, n, tail, fault)

    def _answer_chunk(self, body: bytes) -> bytes | None:
        """--answer-from-prompt: the chunk carrying the prompt's `[answer:X]` (wrong past --wrong-above streams)."""
        found = _ANSWER.search(body)
        if found is None:
            return None
        right = found.group(1).decode()
        limit = self.s.wrong_above
        text = right if limit is None or self.s.running < limit else ("B" if right == "A" else "A")
        return _event(_delta(text, role=True))

    def _stream(self, loop: asyncio.AbstractEventLoop, start: float, k: int, n: int, tail: bytes, fault: str) -> None:
        """Send token k (at its absolute deadline) and schedule token k+1."""
        self.timer = None
        transport = self.transport
        if transport is None:
            return
        stat = self.stat
        if k == 0 and self.answer is not None:
            transport.write(self.answer)
        elif k == 0:
            if stat is not None:
                first = self.s.first_for(stat[0])
                stat[2] = monotonic_ns()
                transport.write(first)
            else:
                transport.write(self.s.first)
        elif fault == "drop" and k == 2:
            transport.abort()  # cut mid-stream: no terminating chunk
            return
        elif fault == "malformed" and k == 1:
            transport.write(_chunk(b"data: {this is not json\n\n"))
        elif fault == "error" and k == 1:
            transport.write(_event({"error": {"message": "injected stream error", "code": 500}}) + self.s.done)
            self._finish()
            return
        elif fault == "hang":
            return  # never another byte; the client times out
        else:
            transport.write(self.s.token)
        if k + 1 >= n:
            if stat is not None:
                stat[3] = monotonic_ns() if k else stat[2]  # the last token chunk went out just now (or was the first)
            transport.write(tail)
            self._finish()
            return
        due = start + self.ttft + (k + 1) * self.s.itl
        self.timer = loop.call_at(due, self._stream, loop, start, k + 1, n, tail, fault)

    def _answer_whole(self, payload: bytes) -> None:
        """A plain (non-streamed) answer, sent once its delay has passed."""
        self.timer = None
        if self.transport is not None:
            self.transport.write(payload)
            self._finish()

    def _finish(self) -> None:
        self.busy = False
        self._uncount()
        if self.parts:
            self._next_request()


async def serve(args: argparse.Namespace) -> None:
    settings = Settings(args)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Connection(settings), args.host, args.port, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on http://{args.host}:{port}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    settings.write_stats()
    if settings.record is not None:
        settings.record.close()


@contextlib.contextmanager
def running_server(*args: str, core: int | None = None) -> Iterator[str]:
    """This server in a subprocess on a free port (pinned to `core` when given), for the benchmark tools; yields its
    /v1 base URL. Stopped with SIGTERM on exit (it then writes --stats)."""
    pin = (lambda: os.sched_setaffinity(0, {core})) if core is not None else None
    proc = subprocess.Popen([sys.executable, __file__, "--port", "0", *args], stdout=subprocess.PIPE, text=True,
                            preexec_fn=pin)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("listening on "):
            raise RuntimeError(f"mock server did not start: {line!r}")
        yield line.split()[-1] + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    parser.add_argument("--ttft-ms", type=float, default=0.0, help="delay before the first token")
    parser.add_argument("--itl-ms", type=float, default=0.0, help="delay between tokens")
    parser.add_argument("--ttft-per-kb-ms", type=float, default=0.0,
                        help="more delay before the first token per KB of request body (a prefill that grows with the prompt)")
    parser.add_argument("--ttft-per-running-ms", type=float, default=0.0,
                        help="more delay before the first token per stream already being answered (latency that grows "
                             "with the load)")
    parser.add_argument("--prefix-cache", action="store_true",
                        help="remember the leading bytes of bodies in blocks of 64; a request's bytes already seen "
                             "are cached (no --ttft-per-kb-ms for them) and counted in /metrics' prefix-cache hits")
    parser.add_argument("--tokens", type=int, default=16, help="tokens per answer (capped by max_tokens)")
    parser.add_argument("--answer-from-prompt", action="store_true",
                        help="answer the prompt's [answer:X] directive as one token (accuracy under load)")
    parser.add_argument("--wrong-above", type=int, default=None, metavar="N",
                        help="--answer-from-prompt: a stream arriving while N or more are answered gets a wrong answer")
    parser.add_argument("--no-usage", action="store_true", help="never send a usage chunk")
    parser.add_argument("--no-stream", action="store_true", help="answer plain JSON even when asked to stream")
    parser.add_argument("--require-key", default=None, metavar="KEY", help="answer 401 unless `Authorization: Bearer KEY`")
    parser.add_argument("--faults", action="store_true", help="honour [mock:<fault>] directives in prompts")
    parser.add_argument("--stats", default=None, metavar="FILE",
                        help="write per-request body-arrival, first- and last-token times (monotonic ns) here at exit")
    parser.add_argument("--record", default=None, help="append each request body as a JSON line to this file")
    args = parser.parse_args(argv)
    if args.tokens < 1 or min(args.ttft_ms, args.itl_ms, args.ttft_per_kb_ms, args.ttft_per_running_ms) < 0:
        parser.error("--tokens must be >= 1 and the delays >= 0")
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
