"""tools/mock_openai_server.py plays a slow server for `vlmkit run` too: a plain (non-streamed) answer is sent when
the last token of a streamed one would have been, and answers on one kept-alive connection stay in order."""

from __future__ import annotations

import time

import requests

from tests.vlmkit.perf.conftest import Mock


def _ask(session: requests.Session, mock: Mock, max_tokens: int) -> tuple[float, dict]:
    started = time.monotonic()
    reply = session.post(f"{mock.base_url}/chat/completions", timeout=30,
                         json={"model": "m", "max_tokens": max_tokens, "messages": [{"role": "user", "content": "hi"}]})
    return time.monotonic() - started, reply.json()


def test_a_plain_answer_waits_for_its_tokens(mock_server):
    mock = mock_server("--ttft-ms", "300", "--itl-ms", "100", "--tokens", "4")
    with requests.Session() as session:
        waited, body = _ask(session, mock, 4)
        # 300 ms to the first token, then 3 more at 100 ms: never sooner than 0.6 s (later only if the host is busy)
        assert waited >= 0.6
        assert body["choices"][0]["message"]["content"] == "tok " * 4 and body["usage"]["completion_tokens"] == 4
        waited, body = _ask(session, mock, 1)  # the same connection, a one-token answer: the first token's delay
        assert waited >= 0.3 and body["choices"][0]["message"]["content"] == "tok "


def test_without_delays_a_plain_answer_is_immediate_and_unchanged(mock_server):
    mock = mock_server("--tokens", "3")
    with requests.Session() as session:
        _, body = _ask(session, mock, 8)
    assert body["choices"][0]["message"]["content"] == "tok " * 3 and body["choices"][0]["finish_reason"] == "stop"
