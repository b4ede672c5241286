"""OpenAICompatModel.probe(): one GET {base}/models before a run, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import logging
import socket

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, models_reply, script
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.model_calls import ModelCallError

KEY = "sk-probe-TOPSECRET-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def dead_port() -> int:
    """A port that was free a moment ago and has no listener now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_model(base_url: str, **kwargs) -> OpenAICompatModel:
    kwargs.setdefault("retries", 3)
    kwargs.setdefault("backoff", 0.01)
    return OpenAICompatModel(kwargs.pop("model", "test-model"), api_base=base_url, **kwargs)


def test_refused_port_is_one_line_naming_the_url_and_the_fix() -> None:
    base = f"http://127.0.0.1:{dead_port()}/v1"
    with pytest.raises(ModelCallError) as info:
        make_model(base).probe()
    message = str(info.value)
    assert info.value.kind == "connection" and info.value.status is None
    assert message == f"cannot reach {base}/models (connection refused): is the server running and --api-base right?"
    assert not info.value.fatal


def test_unknown_host_is_a_connection_error() -> None:
    with pytest.raises(ModelCallError) as info:  # .invalid never resolves (RFC 2606)
        make_model("http://no-such-host.invalid/v1").probe()
    assert info.value.kind == "connection"
    assert "cannot reach http://no-such-host.invalid/v1/models (host name not found)" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_silent_server_is_a_timeout_within_the_model_timeout_and_is_asked_once() -> None:
    with FaultServer(script(Reply(200, {"object": "list", "data": []}, delay=5.0))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server.base_url, timeout=0.3, retries=4).probe()
        assert len(server.requests) == 1  # no retries
    assert info.value.kind == "timeout"
    assert str(info.value).startswith(f"no answer from {server.base_url}/models within 0.3 s")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_quotes_the_server_without_the_key(status: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)

    def refuse(request: Recorded) -> Reply:
        sent = request.headers.get("Authorization", "")
        return Reply(status, {"error": {"message": f"Incorrect API key provided: {sent}.\nSee the docs.", "type": "auth"}})

    with FaultServer(refuse) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server.base_url, api_key=KEY).probe()
        (request,) = server.requests
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.headers["Authorization"] == f"Bearer {KEY}"  # the key is sent as on chat calls
    message = str(info.value)
    assert (info.value.kind, info.value.status, info.value.fatal) == ("http_4xx", status, True)
    assert message.startswith(f"{server.base_url}/models refused the request with HTTP {status}: Incorrect API key")
    assert "check --api-key" in message and "\n" not in message
    for text in (message, caplog.text, str(info.value.to_record())):
        assert KEY not in text and "TOPSECRET" not in text


@pytest.mark.parametrize(
    "reply",
    [Reply(404, {"detail": "Not Found"}), Reply(405, {"detail": "Method Not Allowed"}), Reply(500, "oops"),
     Reply(200, "<html>a web page</html>"), Reply(200, {"models": ["x"]})],
    ids=["404", "405", "500", "html", "not-a-list"],
)
def test_a_server_without_a_model_list_is_reachable_with_models_none(reply: Reply) -> None:
    with FaultServer(script(reply)) as server:
        assert make_model(server.base_url).probe() == {"reachable": True, "models": None}
        assert len(server.requests) == 1


def test_a_list_with_the_model_reports_its_max_model_len() -> None:
    reply = models_reply("other", "test-model", max_model_len={"test-model": 512, "other": 4096})
    with FaultServer(script(reply)) as server:
        result = make_model(server.base_url).probe()
        assert [r.path for r in server.requests] == ["/v1/models"]
        assert "Authorization" not in server.requests[0].headers  # no key given, none sent
    assert result == {"reachable": True, "models": ["other", "test-model"], "max_model_len": 512}


def test_a_list_without_max_model_len_gives_none() -> None:
    with FaultServer(script(models_reply("test-model"))) as server:
        assert make_model(server.base_url).probe() == {"reachable": True, "models": ["test-model"], "max_model_len": None}


def test_a_list_without_the_model_warns_in_one_line() -> None:
    with FaultServer(script(models_reply("served/a", "served/b", max_model_len={"served/a": 512}))) as server:
        result = make_model(server.base_url, model="served/c").probe()
    assert result["models"] == ["served/a", "served/b"] and result["max_model_len"] is None
    assert result["warning"] == (
        f"{server.base_url}/models does not list model 'served/c'; it serves 'served/a', 'served/b': check the model name"
    )


def test_an_empty_list_gives_no_warning() -> None:  # transformers serve lists only its cache, often nothing
    with FaultServer(script(models_reply())) as server:
        assert make_model(server.base_url).probe() == {"reachable": True, "models": [], "max_model_len": None}


def test_probe_from_a_full_chat_completions_url_asks_the_models_url_beside_it() -> None:
    with FaultServer(script(models_reply("test-model"))) as server:
        make_model(server.root + "/v1/chat/completions").probe()
        assert server.requests[0].path == "/v1/models"
