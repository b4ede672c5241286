"""OpenAICompatModel against a real HTTP server on 127.0.0.1 that injects faults and records what it received."""

from __future__ import annotations

import base64
import email.utils
import logging
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PIL import Image

from tests.support.servers import FaultServer, Recorded, Reply, chat_body, chat_reply, script
from vlm.api.http import parse_retry_after
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.model_calls import ModelCallError, error_record
from vlmkit.core.video import VideoError

KEY = "sk-test-VERYSECRET-0123456789abcdef"


def make_model(server: FaultServer, **kwargs) -> OpenAICompatModel:
    kwargs.setdefault("backoff", 0.01)
    kwargs.setdefault("timeout", 10.0)
    return OpenAICompatModel("test-model", api_base=server.base_url, **kwargs)


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def png(tmp_path: Path) -> Path:
    path = tmp_path / "square.png"
    Image.new("RGB", (32, 24), (10, 200, 30)).save(path)
    return path


# ------------------------------------------------------------------------------------------- success path


def test_answer_usage_and_echoed_model() -> None:
    usage = {"prompt_tokens": 42, "completion_tokens": 7, "completion_tokens_details": {"reasoning_tokens": 5}}
    with FaultServer(script(chat_reply("B", model="served/echo-v2", usage=usage))) as server:
        generation = make_model(server).generate_full(["Which option?"])
    assert generation.text == "B"
    assert generation.usage is not None
    assert (generation.usage.input_tokens, generation.usage.output_tokens, generation.usage.reasoning_tokens) == (42, 7, 5)
    assert generation.extra["response_model"] == "served/echo-v2"
    assert generation.extra["finish_reason"] == "stop"
    assert generation.latency_ms is not None and generation.latency_ms > 0


def test_generate_returns_the_text() -> None:
    with FaultServer(script(chat_reply("hello"))) as server:
        assert make_model(server).generate(["hi"]) == "hello"


def test_the_answer_is_stripped_as_vlmevalkit_and_the_local_path_do() -> None:
    with FaultServer(script(chat_reply(" red vs blue: No\n"))) as server:
        assert make_model(server).generate(["hi"]) == "red vs blue: No"


def test_request_body_carries_image_order_system_and_sampling(png: Path) -> None:
    with FaultServer(script(chat_reply("ok"))) as server:
        model = make_model(server, system_prompt="Answer briefly.", max_tokens=77)
        model.generate(["First", {"type": "image", "value": str(png)}, "then this question."])
        (request,) = server.requests
    body = request.body
    assert request.method == "POST" and request.path == "/v1/chat/completions"
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 77
    system, user = body["messages"]
    assert system == {"role": "system", "content": "Answer briefly."}
    assert user["role"] == "user"
    assert [p["type"] for p in user["content"]] == ["text", "image_url", "text"]
    assert user["content"][0]["text"] == "First" and user["content"][2]["text"] == "then this question."
    url = user["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png.read_bytes()


def test_extra_body_is_merged_into_the_request() -> None:
    with FaultServer(script(chat_reply("ok"))) as server:
        make_model(server, extra_body={"top_p": 0.5, "seed": 7}, temperature=0.3).generate(["hi"])
    body = server.requests[0].body
    assert (body["top_p"], body["seed"], body["temperature"]) == (0.5, 7, 0.3)


@pytest.mark.parametrize("suffix", ["/v1", "/v1/", "/v1/chat/completions", "/v1/chat/completions/"])
def test_base_url_forms_all_hit_chat_completions(suffix: str) -> None:
    with FaultServer(script(chat_reply("ok"))) as server:
        model = OpenAICompatModel("m", api_base=server.root + suffix, backoff=0.01)
        model.generate(["hi"])
        assert model.settings()["base_url"] == server.root + "/v1"
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]


def test_base_url_and_key_default_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultServer(script(chat_reply("ok"))) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        OpenAICompatModel("m").generate(["hi"])
    assert server.requests[0].headers.get("Authorization") == f"Bearer {KEY}"


def test_default_base_is_openai() -> None:
    assert OpenAICompatModel("m").settings()["base_url"] == "https://api.openai.com/v1"


def test_authorization_header_only_with_a_key() -> None:
    with FaultServer(script(chat_reply("ok"))) as server:
        make_model(server, api_key=KEY).generate(["hi"])
        make_model(server).generate(["hi"])
    with_key, without_key = server.requests
    assert with_key.headers.get("Authorization") == f"Bearer {KEY}"
    assert "Authorization" not in without_key.headers


def test_credentials_in_the_url_are_refused() -> None:
    with pytest.raises(ValueError, match="must not hold credentials") as info:
        OpenAICompatModel("m", api_base=f"http://user:{KEY}@127.0.0.1:1/v1")
    assert KEY not in str(info.value)


# ------------------------------------------------------------------------------------------- retries and faults


def test_429_retry_after_is_honoured() -> None:
    replies = script(Reply(429, {"error": "slow down"}, headers={"Retry-After": "1"}), chat_reply("done"))
    with FaultServer(replies) as server:
        generation = make_model(server, retries=2).generate_full(["hi"])
    assert generation.text == "done"
    assert generation.extra["attempts"] == 2
    first, second = server.requests
    # backoff alone would have waited ~0.01 s: the second try came after the server's requested second
    assert second.arrived - first.arrived >= 0.95


def test_500_twice_then_success() -> None:
    error = Reply(500, {"error": {"message": "boom"}})
    with FaultServer(script(error, error, chat_reply("third time"))) as server:
        generation = make_model(server, retries=3).generate_full(["hi"])
    assert generation.text == "third time"
    assert len(server.requests) == 3 and generation.extra["attempts"] == 3


def test_500_always_fails_after_all_attempts() -> None:
    with FaultServer(script(Reply(500, {"error": "down"}))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server, retries=2).generate(["hi"])
    assert (info.value.kind, info.value.status) == ("http_5xx", 500)
    assert len(server.requests) == 3
    assert "HTTP 500" in str(info.value)


def test_429_always_is_rate_limited() -> None:
    with FaultServer(script(Reply(429, {"error": "quota"}, headers={"Retry-After": "0"}))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server, retries=1).generate(["hi"])
    assert (info.value.kind, info.value.status) == ("rate_limited", 429)
    assert len(server.requests) == 2


def test_400_is_not_retried() -> None:
    with FaultServer(script(Reply(400, {"error": {"message": "bad image"}}))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server, retries=3).generate(["hi"])
    assert (info.value.kind, info.value.status) == ("http_4xx", 400)
    assert "bad image" in str(info.value)
    assert len(server.requests) == 1


def test_slow_reply_beyond_timeout_is_a_timeout() -> None:
    with FaultServer(script(Reply(200, chat_body("late"), delay=5.0))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server, timeout=0.3, retries=1).generate(["hi"])
    assert info.value.kind == "timeout" and info.value.status is None
    assert len(server.requests) == 2


def test_each_call_takes_its_own_timeout() -> None:
    """The timeout belongs to the call, not to a kept-alive connection: a later call with a shorter one must still
    run out of time, and a longer one must wait again."""
    from vlm.api.connection import Client, Timeout

    replies = script(chat_reply("fast"), Reply(200, chat_body("late"), delay=1.5), Reply(200, chat_body("late"), delay=0.5),
                     chat_reply("no limit"))
    with FaultServer(replies) as server:
        client = Client()
        url = server.base_url + "/chat/completions"
        assert client.post(url, b"{}", {}, timeout=10).json()["choices"][0]["message"]["content"] == "fast"
        with pytest.raises(Timeout):  # the reply would come, after 1.5 s: only the timeout stops it
            client.post(url, b"{}", {}, timeout=0.3)
        assert client.post(url, b"{}", {}, timeout=10).status_code == 200  # waits its 0.5 s, no timeout
        assert client.post(url, b"{}", {}, timeout=float("inf")).status_code == 200  # inf: no limit at all
        client.close()


def test_malformed_json_is_a_bad_response() -> None:
    with FaultServer(script(Reply(200, '{"choices": [ {"message": '))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server).generate(["hi"])
    assert info.value.kind == "bad_response" and info.value.status == 200
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "choices": []},
        {"id": "x"},
        chat_body(None),
        {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "I can't"}}]},
    ],
    ids=["empty-choices", "no-choices", "content-none", "refusal"],
)
def test_answer_without_text_is_a_bad_response(body: dict) -> None:
    with FaultServer(script(Reply(200, body))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server).generate(["hi"])
    assert info.value.kind == "bad_response"


def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAICompatModel("m", api_base=f"http://127.0.0.1:{port}/v1", retries=1, backoff=0.01, timeout=5)
    with pytest.raises(ModelCallError) as info:
        model.generate(["hi"])
    assert info.value.kind == "connection"


def test_retry_after_parsing() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= parse_retry_after(date, now=now) <= 31  # type: ignore[operator]
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0


@pytest.mark.parametrize("video_mode", ["frames", "video_url"])
def test_unreadable_video_is_refused_before_any_request(tmp_path: Path, video_mode: str) -> None:
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\x00" * 32)
    with FaultServer(script(chat_reply("no"))) as server:
        with pytest.raises(VideoError, match="clip.mp4"):
            make_model(server, video_mode=video_mode).generate([str(video), "what happens?"])
    assert server.requests == []


# ------------------------------------------------------------------------------------------- the key stays secret


def test_key_never_in_repr_settings_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)

    def leaky(request: Recorded) -> Reply:
        # a service that echoes the key it was sent, as some error pages do
        sent = request.headers.get("Authorization", "")
        status = 500 if request.number < 2 else 401
        return Reply(status, {"error": f"invalid credentials: {sent}"})

    with FaultServer(leaky) as server:
        model = make_model(server, api_key=KEY, retries=1)
        with pytest.raises(ModelCallError) as first:
            model.generate(["hi"])
        with pytest.raises(ModelCallError) as second:
            model.generate(["hi"])
        assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"  # the key was really sent
    assert (first.value.kind, second.value.kind) == ("http_5xx", "http_4xx")
    texts = [
        repr(model),
        str(model.settings()),
        str(first.value),
        str(second.value),
        str(error_record(first.value)),
        str(error_record(second.value)),
        caplog.text,
    ]
    assert "invalid credentials" in str(first.value)  # the body is reported, scrubbed
    assert any("retrying" in r.getMessage() for r in caplog.records)  # the retry was logged
    for text in texts:
        assert KEY not in text
        assert "VERYSECRET" not in text


# ------------------------------------------------------------------------------------------- concurrency


def test_many_threads_share_one_model() -> None:
    def echo(request: Recorded) -> Reply:
        question = request.body["messages"][-1]["content"]
        return chat_reply(f"answer to {question}")

    with FaultServer(echo) as server:
        model = make_model(server)
        questions = [f"q{i}" for i in range(32)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(lambda q: model.generate([q]), questions))
        model.close()
    assert answers == [f"answer to {q}" for q in questions]
    assert len(server.requests) == 32
