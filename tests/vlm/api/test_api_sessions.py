"""The API model's connections (vlm.api.connection.Client: one pool of kept-alive connections on one event loop
thread, shared by every calling thread): answers stay matched under concurrency, connections are reused, close()
from any thread closes them all (a call in flight ends at once) and the model stays usable. Observed from the
server's side: one client port per connection."""

from __future__ import annotations

import gc
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlm.api.openai_compat import OpenAICompatModel

THREADS = 4
CALLS = 3


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def echo(request: Recorded) -> Reply:
    return chat_reply(f"answer to {request.body['messages'][-1]['content']}")


def http_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "vlmkit-http"}


def test_concurrent_answers_stay_matched_and_connections_are_kept_alive() -> None:
    barrier = threading.Barrier(THREADS)
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)

        def worker(t: int) -> list[str]:
            barrier.wait()
            return [model.generate([f"t{t}-q{i}"]) for i in range(CALLS)]

        with ThreadPoolExecutor(THREADS) as pool:
            answers = list(pool.map(worker, range(THREADS)))
        ports = {r.client[1] for r in server.requests}
        model.close()
    assert answers == [[f"answer to t{t}-q{i}" for i in range(CALLS)] for t in range(THREADS)]
    assert len(server.requests) == THREADS * CALLS
    assert len(ports) <= THREADS  # never more connections than calls at once: each is kept alive and reused
    assert {r.headers["Accept-Encoding"] for r in server.requests} == {"identity"}  # nothing to decompress


def test_close_from_one_thread_closes_every_connection_and_each_thread_calls_again() -> None:
    barrier = threading.Barrier(3)  # two workers and the main thread
    closed = threading.Event()
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)

        def worker(t: int) -> None:
            model.generate([f"t{t}-before"])
            barrier.wait(10)  # both calls answered: their connections are idle in the pool now
            closed.wait(60)
            model.generate([f"t{t}-after"])

        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(worker, t) for t in range(2)]
            try:
                barrier.wait(10)
                before = {r.client[1] for r in server.requests}
                assert not server.wait_disconnected(before, within=0.2)  # idle keep-alive connections stay open...
                model.close()  # ...until close() from the main thread, which never called, closes them
                assert server.wait_disconnected(before, within=5)
            finally:
                closed.set()
            for future in futures:
                future.result()
        after = {r.client[1] for r in server.requests if r.body["messages"][-1]["content"].endswith("after")}
        model.close()
    assert len(server.requests) == 4
    assert not after & before  # the calls after close() went out on new connections


def test_the_model_stays_usable_after_close_on_a_new_connection() -> None:
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        assert model.generate(["one"]) == "answer to one"
        assert model.generate(["two"]) == "answer to two"
        model.close()
        assert model.generate(["three"]) == "answer to three"
        model.close()
        first, second, third = (r.client[1] for r in server.requests)
    assert first == second  # kept alive between calls
    assert third != first  # close() really closed the connection; the next call opened another


def test_close_ends_the_loop_thread_and_a_dropped_model_ends_its_own() -> None:
    with FaultServer(echo) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, retries=0, timeout=10)
        before = http_threads()
        model.generate(["one"])
        (mine,) = http_threads() - before  # the model's loop thread, started by its first call
        model.close()
        assert not mine.is_alive()
        model.generate(["two"])  # never closed: dropping the model must end its loop and its connection
        (mine,) = http_threads() - before
        port = server.requests[-1].client[1]
        del model
        gc.collect()
        mine.join(5)
        assert not mine.is_alive()
        assert server.wait_disconnected({port}, within=5)


def _close_while_a_call_waits(server: FaultServer, **model_kwargs: float) -> list[BaseException]:
    """Start one call on a thread, close the model once the server has seen it, and return what the call raised."""
    from vlmkit.core.model_calls import ModelCallError

    model = OpenAICompatModel("m", api_base=server.base_url, retries=3, **model_kwargs)
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            model.generate_full(["hello"])
        except ModelCallError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    while not server.requests:  # the first attempt is out (or has failed once the server recorded it)
        threading.Event().wait(0.01)
    model.close()
    thread.join(timeout=30)  # far less than the server or the retries would take
    assert not thread.is_alive()
    return outcome


def test_a_call_in_flight_when_close_is_called_ends_at_once_and_is_not_retried() -> None:
    """A stopped or interrupted run closes the model while a call waits for its answer: the call ends then (as
    "cancelled"), not when the answer or the timeout comes, and it is not asked again."""
    with FaultServer(lambda request: Reply(200, {"choices": []}, delay=60)) as server:
        outcome = _close_while_a_call_waits(server, backoff=0.01, timeout=120)
        assert len(outcome) == 1 and outcome[0].kind == "cancelled"
        assert len(server.requests) == 1


def test_a_call_left_behind_by_close_is_not_retried() -> None:
    """An interrupted or stopped run closes the model while a call waits to retry: it ends as "cancelled" instead of
    asking the server again in the background."""
    with FaultServer(lambda request: Reply(503, {"error": {"message": "busy"}})) as server:
        outcome = _close_while_a_call_waits(server, backoff=0.5)
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
