"""The API model against servers that misbehave on purpose, byte by byte (tests/vlm/api/raw_server.py).

What must hold whatever the server sends: every answer a call returns is the answer to that call's own question (an
answer nobody asked for, or the bytes past a Content-Length, never become the next call's answer); a call costs at
most about its timeout per attempt however slowly the bytes come; what cannot be read is an error record of that
row, in one line, never a prediction. Each server answers with the question it was asked ("answer to q3"), so a
shifted answer shows.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.servers import FaultServer, Reply, script
from tests.vlm.api.raw_server import RawConnection, RawRequest, RawServer, chat_json, http_response
from vlm.api import connection
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.model_calls import ModelCallError

ROWS = 12
LIVENESS_S = 30.0  # a call still running after this outlived its timeout many times over: it would hang


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)


def model_for(base_url: str, **kwargs) -> OpenAICompatModel:
    kwargs.setdefault("retries", 0)  # each call's outcome is its own: no retry hides a desynchronised connection
    kwargs.setdefault("timeout", 10.0)
    kwargs.setdefault("backoff", 0.01)
    return OpenAICompatModel("m", api_base=base_url, **kwargs)


def ask_in_turn(model: OpenAICompatModel, rows: int = ROWS, between=None) -> list[str]:
    """Ask q0..q{rows-1} one after another (as `--nproc 1` does); each outcome: the answer or 'error: <kind>'."""
    outcomes = []
    for i in range(rows):
        try:
            outcomes.append(model.generate([f"q{i}"]))
        except ModelCallError as exc:
            outcomes.append(f"error: {exc.kind}")
        if between is not None:
            between(i)
    model.close()
    return outcomes


def own_answer(request: RawRequest) -> bytes:
    return chat_json(f"answer to {request.question}")


def call_in_thread(model: OpenAICompatModel) -> tuple[threading.Thread, list[BaseException]]:
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            model.generate_full(["q0"])
        except ModelCallError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread, outcome


# ------------------------------------------------------------------------------- answers stay with their rows


def test_a_response_too_many_in_the_same_write_never_answers_the_next_row() -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        extra = http_response(200, chat_json(f"stale answer sent after {request.question}"))
        conn.send(http_response(200, own_answer(request)) + (extra if request.number % 3 != 2 else b""))

    with RawServer(answer) as server:
        outcomes = ask_in_turn(model_for(server.base_url))
    assert outcomes == [f"answer to q{i}" for i in range(ROWS)]


def test_responses_too_many_never_answer_another_row_with_calls_in_parallel() -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        extra = http_response(200, chat_json(f"stale answer sent after {request.question}"))
        conn.send(http_response(200, own_answer(request)) + extra)

    with RawServer(answer) as server:
        model = model_for(server.base_url)

        def rows(t: int) -> list[str]:
            return [model.generate([f"t{t}-q{i}"]) for i in range(ROWS // 2)]

        with ThreadPoolExecutor(4) as pool:
            outcomes = list(pool.map(rows, range(4)))
        model.close()
    assert outcomes == [[f"answer to t{t}-q{i}" for i in range(ROWS // 2)] for t in range(4)]


def test_a_response_too_many_sent_after_the_real_one_never_answers_the_next_row() -> None:
    """The extra response arrives on the idle kept-alive connection before the next call (the server has sent it
    when the next call starts): that connection is never used again."""
    sent = threading.Event()

    def answer(conn: RawConnection, request: RawRequest) -> None:
        conn.send(http_response(200, own_answer(request)))
        conn.send(http_response(200, chat_json(f"stale answer sent after {request.question}")))
        sent.set()

    def wait_for_the_extra(_: int) -> None:
        assert sent.wait(10)
        sent.clear()

    with RawServer(answer) as server:
        outcomes = ask_in_turn(model_for(server.base_url), between=wait_for_the_extra)
    assert outcomes == [f"answer to q{i}" for i in range(ROWS)]


def test_a_body_longer_than_its_content_length_never_answers_the_next_row() -> None:
    """The bytes past Content-Length hold a whole response (a smuggled one): they are not the next call's answer."""
    def answer(conn: RawConnection, request: RawRequest) -> None:
        body = own_answer(request)
        smuggled = http_response(200, chat_json(f"smuggled after {request.question}"))
        conn.send(http_response(200, body + smuggled, length=len(body)))

    with RawServer(answer) as server:
        outcomes = ask_in_turn(model_for(server.base_url))
    assert outcomes == [f"answer to q{i}" for i in range(ROWS)]


def test_a_content_length_shorter_than_the_body_fails_that_row_only() -> None:
    """Every other answer claims 10 bytes fewer than it sends: that row is an error (its JSON is cut), and the bytes
    it leaves behind never reach the next row, which gets its own answer."""
    def answer(conn: RawConnection, request: RawRequest) -> None:
        body = own_answer(request)
        conn.send(http_response(200, body, length=len(body) - 10 if request.number % 2 == 0 else None))

    with RawServer(answer) as server:
        outcomes = ask_in_turn(model_for(server.base_url))
    for i, outcome in enumerate(outcomes):
        if i % 2 == 0:
            assert outcome.startswith("error: "), outcome
        else:
            assert outcome == f"answer to q{i}"


def test_a_content_length_longer_than_the_body_costs_the_timeout_then_the_next_row_is_answered() -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        body = own_answer(request)
        conn.send(http_response(200, body, length=len(body) + 100 if request.number == 0 else None))

    with RawServer(answer) as server:
        outcomes = ask_in_turn(model_for(server.base_url, timeout=1.0), rows=3)
    assert outcomes == ["error: timeout", "answer to q1", "answer to q2"]


# -------------------------------------------------------------------------------- the timeout bounds the answer


def trickle(conn: RawConnection, data: bytes, gap: float) -> None:
    for i in range(len(data)):
        if conn.wait(gap):
            return
        conn.send(data[i : i + 1])


def test_a_server_that_sends_one_byte_at_a_time_costs_the_timeout_per_attempt() -> None:
    """A byte every 0.25 s: no single read waits as long as the 1 s timeout, the whole answer would take minutes."""
    with RawServer(lambda conn, request: trickle(conn, http_response(200, own_answer(request)), 0.25)) as server:
        thread, outcome = call_in_thread(model_for(server.base_url, timeout=1.0, retries=1))
        thread.join(LIVENESS_S)
        assert not thread.is_alive(), "the call outlived its timeout: each byte restarted the clock"
        assert len(server.requests) == 2  # the first attempt, then one retry
    assert len(outcome) == 1 and outcome[0].kind == "timeout"
    assert "after 2 attempts" in str(outcome[0]) and "\n" not in str(outcome[0])


def test_a_body_that_never_ends_costs_the_timeout_per_attempt() -> None:
    """A chunked body whose chunks keep coming (one every 0.1 s) and never reach the last chunk."""
    def answer(conn: RawConnection, request: RawRequest) -> None:
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        conn.send(b'1\r\n{\r\n')
        for _ in range(3000):  # 5 minutes at most, ended earlier by the server's stop
            if conn.wait(0.1):
                return
            conn.send(b"1\r\n \r\n")

    with RawServer(answer) as server:
        thread, outcome = call_in_thread(model_for(server.base_url, timeout=1.0, retries=1))
        thread.join(LIVENESS_S)
        assert not thread.is_alive(), "the call outlived its timeout: a body that never ends held it"
        assert len(server.requests) == 2
    assert len(outcome) == 1 and outcome[0].kind == "timeout"


def test_a_fast_body_that_never_ends_is_refused_at_the_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """As fast as the socket takes it: the size limit ends it before the memory fills (the limit lowered here)."""
    monkeypatch.setattr(connection, "MAX_BODY_BYTES", 1 << 20)

    def answer(conn: RawConnection, request: RawRequest) -> None:
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        for _ in range(10_000):  # 640 MiB at most
            conn.send(chunk)

    with RawServer(answer) as server:
        with pytest.raises(ModelCallError) as info:
            model_for(server.base_url, timeout=60.0, retries=2).generate(["q0"])
        assert len(server.requests) == 1  # a body too large is final: asking again would bring the same
    assert info.value.kind == "bad_response" and "limit" in str(info.value)


def test_a_content_length_over_the_size_limit_is_refused_before_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "MAX_BODY_BYTES", 1 << 20)
    with RawServer(lambda conn, request: conn.send(http_response(200, b"{}", length=1 << 30))) as server:
        with pytest.raises(ModelCallError) as info:
            model_for(server.base_url, timeout=60.0).generate(["q0"])
    assert info.value.kind == "bad_response" and str(1 << 30) in str(info.value)


# ------------------------------------------------------------------------------------------ what cannot be read


def test_a_body_that_is_not_utf8_is_an_error_of_that_row_in_one_line() -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        if request.number == 0:
            conn.send(http_response(200, own_answer(request).replace(b"answer to", b"answer \xff\xfe to")))
        else:
            conn.send(http_response(200, own_answer(request)))

    with RawServer(answer) as server:
        model = model_for(server.base_url)
        with pytest.raises(ModelCallError) as info:
            model.generate(["q0"])
        assert model.generate(["q1"]) == "answer to q1"
        model.close()
    assert info.value.kind == "bad_response" and info.value.status == 200
    assert "\n" not in str(info.value) and "not JSON" in str(info.value)


def test_an_error_body_that_is_not_utf8_is_quoted_with_replacement_characters() -> None:
    body = "le modèle est surchargé".encode("latin-1")
    with RawServer(lambda conn, request: conn.send(http_response(503, body))) as server:
        with pytest.raises(ModelCallError) as info:
            model_for(server.base_url).generate(["q0"])
    assert (info.value.kind, info.value.status) == ("http_5xx", 503)
    assert str(info.value).endswith("HTTP 503: le mod\ufffdle est surcharg\ufffd")


def test_a_header_that_is_not_ascii_does_not_stop_the_answer() -> None:
    def answer(conn: RawConnection, request: RawRequest) -> None:
        conn.send(http_response(200, own_answer(request), headers={"X-Note": "caf\xe9"}))

    with RawServer(answer) as server:
        assert ask_in_turn(model_for(server.base_url), rows=2) == ["answer to q0", "answer to q1"]


def test_an_answer_that_breaks_http_framing_is_an_error_never_an_answer() -> None:
    with RawServer(lambda conn, request: conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: nine\r\n\r\n{}")) as server:
        with pytest.raises(ModelCallError) as info:
            model_for(server.base_url, retries=1).generate(["q0"])
    assert info.value.kind == "connection" and "\n" not in str(info.value)


# ---------------------------------------------------------------------------------- an error carried by a 200


def test_a_200_carrying_an_error_object_is_an_error_quoting_the_server() -> None:
    body = {"error": {"message": "Upstream provider returned an error: model overloaded", "type": "upstream_error"}}
    with FaultServer(script(Reply(200, body))) as server:
        with pytest.raises(ModelCallError) as info:
            model_for(server.base_url, retries=2).generate(["q0"])
        assert len(server.requests) == 1  # no code that says a retry could help: final
    assert (info.value.kind, info.value.status) == ("bad_response", 200)
    assert str(info.value).endswith("HTTP 200 carrying an error: Upstream provider returned an error: model overloaded")


@pytest.mark.parametrize(
    ("code", "kind", "retried"),
    [(429, "rate_limited", True), (503, "http_5xx", True), ("502", "http_5xx", True), (400, "http_4xx", False)],
)
def test_a_200_carrying_an_error_with_an_http_code_counts_as_that_status(code, kind: str, retried: bool) -> None:
    body = {"error": {"message": "try later", "code": code}}
    with FaultServer(script(Reply(200, body))) as server:
        with pytest.raises(ModelCallError) as info:
            model_for(server.base_url, retries=1).generate(["q0"])
        assert len(server.requests) == (2 if retried else 1)
    assert (info.value.kind, info.value.status) == (kind, int(code))
    assert "try later" in str(info.value)


def test_a_200_with_an_error_string_quotes_it_and_an_answer_beside_an_error_field_is_an_answer() -> None:
    with FaultServer(script(Reply(200, {"error": "quota exhausted"}))) as server:
        with pytest.raises(ModelCallError) as info:
            model_for(server.base_url).generate(["q0"])
    assert str(info.value).endswith("HTTP 200 carrying an error: quota exhausted")
    answer = json.loads(chat_json("fine"))
    answer["error"] = None  # some servers always send the field
    with FaultServer(script(Reply(200, answer))) as server:
        assert model_for(server.base_url).generate(["q0"]) == "fine"
