"""Each worker thread calls the API through its own session (vlm.api.connection.Session); close() closes them all and the
model stays usable. Observed from the server's side: one keep-alive connection (one client port) per thread."""

from __future__ import annotations

import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlm.api.connection import ThreadSessions
from vlm.api.openai_compat import OpenAICompatModel

THREADS = 4
CALLS = 3


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def echo(request: Recorded) -> Reply:
    return chat_reply(f"answer to {request.body['messages'][-1]['content']}")


def test_thread_sessions_are_distinct_per_thread_and_stable_within_one() -> None:
    sessions = ThreadSessions()
    barrier = threading.Barrier(THREADS)

    def twice(_: int) -> tuple[int, int]:
        barrier.wait()  # all threads alive at once: none can reuse another's thread-local slot
        return id(sessions.get()), id(sessions.get())

    with ThreadPoolExecutor(THREADS) as pool:
        pairs = list(pool.map(twice, range(THREADS)))
    assert all(first == second for first, second in pairs)
    assert len({first for first, _ in pairs}) == THREADS
    assert len(sessions) == THREADS
    main = sessions.get()
    assert sessions.get() is main
    assert len(sessions) == 1  # the pool's threads have ended: their sessions were closed and dropped


def test_close_from_one_thread_closes_the_connections_of_all_and_each_thread_reconnects() -> None:
    barrier = threading.Barrier(3)  # two workers and the main thread
    closed = threading.Event()
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)

        def worker(t: int) -> None:
            model.generate([f"t{t}-before"])
            barrier.wait(10)  # both threads hold a keep-alive connection now
            closed.wait(60)  # no call (which would replace this thread's session) until the main thread has looked
            model.generate([f"t{t}-after"])

        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(worker, t) for t in range(2)]
            try:
                barrier.wait(10)
                before = {r.client[1] for r in server.requests}
                assert not server.wait_disconnected(before, within=0.2)  # idle keep-alive connections stay open...
                model.close()  # ...until close() from the main thread, which never called, closes both
                assert server.wait_disconnected(before, within=5)
            finally:
                closed.set()
            for future in futures:
                future.result()
        port = {r.body["messages"][-1]["content"]: r.client[1] for r in server.requests}
    assert len(set(port.values())) == 4  # each thread reconnected on a new session


def test_each_thread_keeps_its_own_connection_and_answers_stay_matched() -> None:
    barrier = threading.Barrier(THREADS)
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)

        def worker(t: int) -> list[str]:
            barrier.wait()
            return [model.generate([f"t{t}-q{i}"]) for i in range(CALLS)]

        with ThreadPoolExecutor(THREADS) as pool:
            answers = list(pool.map(worker, range(THREADS)))
        ports = defaultdict(set)
        for request in server.requests:
            ports[request.body["messages"][-1]["content"].split("-")[0]].add(request.client[1])
        model.close()
    assert answers == [[f"answer to t{t}-q{i}" for i in range(CALLS)] for t in range(THREADS)]
    assert len(server.requests) == THREADS * CALLS
    # a thread's calls reuse its one keep-alive connection; no two threads share one
    assert all(len(p) == 1 for p in ports.values()), dict(ports)
    assert len(set().union(*ports.values())) == THREADS


def test_the_model_stays_usable_after_close_on_a_new_connection() -> None:
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        assert model.generate(["one"]) == "answer to one"
        assert model.generate(["two"]) == "answer to two"
        model.close()
        assert model.generate(["three"]) == "answer to three"
        first, second, third = (r.client[1] for r in server.requests)
    assert first == second  # keep-alive within one session
    assert third != first  # close() really closed the connection; the next call opened another


def test_sessions_of_finished_threads_are_closed_when_a_new_one_is_made() -> None:
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        for run in range(2):  # two runs, each with its own short-lived worker pool
            with ThreadPoolExecutor(2) as pool:
                barrier = threading.Barrier(2)
                list(pool.map(lambda t: (barrier.wait(10), model.generate([f"r{run}-t{t}"])), range(2)))
        first_run = {r.client[1] for r in server.requests if r.body["messages"][-1]["content"].startswith("r0")}
        assert server.wait_disconnected(first_run, within=5)  # the first pool's connections did not linger
        model.close()
    assert len(first_run) == 2


def test_a_call_left_behind_by_close_is_not_retried() -> None:
    """An interrupted or stopped run closes the model while a call waits to retry: it ends as "cancelled" instead of
    asking the server again in the background."""
    from vlmkit.core.model_calls import ModelCallError

    with FaultServer(lambda request: Reply(503, {"error": {"message": "busy"}})) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=3, backoff=0.5)
        outcome: list[BaseException] = []

        def call() -> None:
            try:
                model.generate_full(["hello"])
            except ModelCallError as exc:
                outcome.append(exc)

        thread = threading.Thread(target=call)
        thread.start()
        while not server.requests:  # the first attempt has failed once the server recorded it
            threading.Event().wait(0.01)
        model.close()
        thread.join(timeout=30)
        assert not thread.is_alive()
        assert len(outcome) == 1 and outcome[0].kind == "cancelled"
        assert "not retried" in str(outcome[0])
        assert len([r for r in server.requests if r.method == "POST"]) == 1


def test_a_kept_alive_connection_the_server_closed_is_reopened_and_the_call_succeeds() -> None:
    """The server answers, keeps the connection open, then closes it while idle: the next call opens another."""
    import json
    import socket
    import time

    answer = json.dumps(chat_reply("fine").body).encode()
    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(answer) + answer
    server = socket.create_server(("127.0.0.1", 0))
    connections: list[int] = []

    def serve() -> None:
        for _ in range(2):
            conn, _ = server.accept()
            connections.append(1)
            with conn:
                buf = b""
                while b"\r\n\r\n" not in buf:
                    buf += conn.recv(65536)
                head, _, body = buf.partition(b"\r\n\r\n")
                length = int(next(x.split(b":")[1] for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(reply)  # keep-alive as far as the client knows...
                time.sleep(0.05)  # ...then closed while idle

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        model = OpenAICompatModel("m", api_base=f"http://127.0.0.1:{server.getsockname()[1]}/v1", retries=0, timeout=10)
        assert model.generate(["one"]) == "fine"
        time.sleep(0.2)  # the server has closed the first connection by now
        assert model.generate(["two"]) == "fine"  # retries=0: no retry of the call itself was needed
        thread.join(5)
        assert len(connections) == 2
    finally:
        server.close()


def test_a_proxy_from_the_environment_is_still_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain http goes out directly unless the environment names a proxy for it (then requests takes it there)."""
    with FaultServer(chat_only_reply("via proxy")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.root)
        monkeypatch.setenv("http_proxy", proxy.root)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        model = OpenAICompatModel("m", api_base="http://model-host.invalid:8000/v1", retries=0, timeout=10)
        assert model.generate(["hi"]) == "via proxy"
        assert proxy.requests[-1].path == "http://model-host.invalid:8000/v1/chat/completions"  # absolute-form: a proxy


def chat_only_reply(text: str):
    return lambda request: chat_reply(text)
