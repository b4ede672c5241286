"""What a failed API call says and how the model is configured: the server's own message on one line, which
statuses are fatal, error records by kind, max_tokens left to the server, URL and setting errors as one line,
and no key anywhere in what is raised, logged or shown."""

from __future__ import annotations

import logging

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_reply, script
from vlm.api.openai_compat import OpenAICompatModel, chat_completions_url
from vlmkit.core.errors import ConfigError, DataError
from vlmkit.core.model_calls import FATAL_STATUSES, ModelCallError, UnsupportedInputError, error_record
from vlmkit.core.media import MediaError
from vlmkit.core.video import VideoError

KEY = "sk-errors-HUSHHUSH-0a1b2c3d4e5f6a7b"


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def make_model(server: FaultServer, **kwargs) -> OpenAICompatModel:
    kwargs.setdefault("backoff", 0.01)
    kwargs.setdefault("timeout", 10.0)
    return OpenAICompatModel("test-model", api_base=server.base_url, **kwargs)


def failure(reply: Reply, **kwargs) -> tuple[ModelCallError, FaultServer]:
    with FaultServer(script(reply)) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server, **kwargs).generate(["hi"])
    return info.value, server


# ------------------------------------------------------------------------------------------- fatal statuses


def test_fatal_statuses_are_the_ones_a_retry_cannot_fix() -> None:
    assert FATAL_STATUSES == {400, 401, 403, 404, 422}
    assert all(ModelCallError("http_4xx", "x", s).fatal for s in (400, 401, 403, 404, 422))
    assert not any(ModelCallError("k", "x", s).fatal for s in (408, 429, 500, 503, 200, None))
    assert not UnsupportedInputError("video").fatal


def test_vllm_max_model_len_refusal_is_quoted_cleanly_fatal_and_not_retried() -> None:
    vllm = {
        "object": "error",
        "message": "max_tokens=1024 cannot be greater than max_model_len=512. Please request fewer output tokens.",
        "type": "BadRequestError", "param": None, "code": 400,
    }
    error, server = failure(Reply(400, vllm), retries=3)
    assert len(server.requests) == 1
    assert (error.kind, error.status, error.fatal) == ("http_4xx", 400, True)
    assert str(error) == (
        f"{server.base_url}/chat/completions: HTTP 400: max_tokens=1024 cannot be greater than max_model_len=512. "
        "Please request fewer output tokens."
    )
    assert error.to_record() == {"kind": "http_4xx", "message": str(error), "status": 400}


@pytest.mark.parametrize(
    ("reply", "quoted"),
    [
        (Reply(404, {"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error"}}),
         "HTTP 404: The model `gpt-9` does not exist"),
        (Reply(400, {"detail": "Server is pinned to '/m'; requested 'x'."}), "HTTP 400: Server is pinned to '/m'; requested 'x'."),
        (Reply(404, {"error": "no such route"}), "HTTP 404: no such route"),
        (Reply(422, {"message": "bad\n  field\tnames"}), "HTTP 422: bad field names"),
        (Reply(404, "<html>\n<body>Not Found</body>\n</html>"), "HTTP 404: <html> <body>Not Found</body> </html>"),
        (Reply(422, {"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}),
         'HTTP 422: {"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}'),
        (Reply(400, b""), "HTTP 400: (empty body)"),
    ],
    ids=["openai", "fastapi-detail", "error-string", "multi-line", "html", "detail-list", "empty"],
)
def test_the_servers_own_message_on_one_line(reply: Reply, quoted: str) -> None:
    error, server = failure(reply)
    assert str(error) == f"{server.base_url}/chat/completions: {quoted}"
    assert error.fatal


def test_a_long_body_is_cut_to_300_characters() -> None:
    error, _ = failure(Reply(400, "x" * 1000))
    assert str(error).endswith(": HTTP 400: " + "x" * 297 + "...")


def test_a_key_across_the_cut_leaves_no_part_behind() -> None:
    def echo_at_the_cut(request: Recorded) -> Reply:
        return Reply(401, "e" * 280 + request.headers["Authorization"] + " tail")  # the raw key would cross 300

    with FaultServer(echo_at_the_cut) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server, api_key=KEY).generate(["hi"])
    assert KEY[:9] not in str(info.value)  # cut first, scrubbed after, the message would end "sk-errors-HUS"
    assert "Bearer ***" in str(info.value)


def test_retries_zero_is_one_attempt_and_settings_record_timeout_and_retries() -> None:
    error, server = failure(Reply(503, {"error": {"message": "overloaded"}}), retries=0, timeout=7.5)
    assert len(server.requests) == 1 and error.kind == "http_5xx" and not error.fatal
    assert str(error).endswith("HTTP 503: overloaded")  # no "after N attempts" for a single one
    settings = make_model(server, retries=0, timeout=7.5).settings()
    assert (settings["timeout"], settings["retries"]) == (7.5, 0)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"timeout": 0}, r"^timeout must be a positive number of seconds, got 0$"),
        ({"retries": -1}, r"^retries must be a whole number >= 0 \(0: one attempt\), got -1$"),
        ({"retries": 1.5}, r"^retries must be a whole number"),
        ({"max_tokens": 0}, r"^max_tokens must be a positive whole number or None"),
    ],
)
def test_impossible_settings_are_config_errors(kwargs: dict, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        OpenAICompatModel("m", api_base="http://127.0.0.1:9/v1", **kwargs)


# ------------------------------------------------------------------------------------------- error records


def test_error_records_by_kind() -> None:
    assert error_record(MediaError("image 3: not a PNG")) == {"kind": "bad_media", "message": "image 3: not a PNG", "status": None}
    assert error_record(VideoError("clip.mp4: cannot open"))["kind"] == "bad_media"  # a MediaError too
    assert error_record(DataError("x.tsv: row 3, field image: empty")) == {
        "kind": "bad_input", "message": "x.tsv: row 3, field image: empty", "status": None
    }
    assert error_record(ModelCallError("timeout", "slow")) == {"kind": "timeout", "message": "slow", "status": None}
    assert error_record(KeyError("answer")) == {"kind": "exception", "message": "KeyError: 'answer'", "status": None}


# ------------------------------------------------------------------------------------------- max_tokens


def test_no_max_tokens_is_sent_by_default_and_settings_say_none() -> None:
    with FaultServer(script(chat_reply("ok"))) as server:
        model = make_model(server)
        model.generate(["hi"])
    assert "max_tokens" not in server.requests[0].body
    assert model.settings()["max_tokens"] is None


def test_a_users_max_tokens_is_still_sent() -> None:
    with FaultServer(script(chat_reply("ok"))) as server:
        make_model(server, max_tokens=64).generate(["hi"])
        make_model(server).generate_full(["hi"], None, {"max_tokens": 9})  # a row's own parameter
    assert [r.body["max_tokens"] for r in server.requests] == [64, 9]


# ------------------------------------------------------------------------------------------- api_base


@pytest.mark.parametrize(
    ("api_base", "message"),
    [
        ("127.0.0.1:8000", "--api-base '127.0.0.1:8000' is not an http(s) URL; write http://127.0.0.1:8000/v1"),
        ("localhost:8000/v1/", "--api-base 'localhost:8000/v1/' is not an http(s) URL; write http://localhost:8000/v1"),
        ("ftp://host/v1", "--api-base 'ftp://host/v1' is not an http(s) URL; write a URL such as http://127.0.0.1:8000/v1"),
        ("http://host:port/v1", "--api-base 'http://host:port/v1' is not an http(s) URL; write a URL such as http://127.0.0.1:8000/v1"),
        ("http://[::1/v1", "--api-base 'http://[::1/v1' is not an http(s) URL; write a URL such as http://127.0.0.1:8000/v1"),
    ],
)
def test_an_api_base_that_is_not_a_url_is_one_config_error(api_base: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        OpenAICompatModel("m", api_base=api_base)
    assert str(info.value) == message
    with pytest.raises(ValueError):  # callers that catch ValueError (vlmkit perf) still do
        chat_completions_url(api_base)


def test_credentials_without_a_scheme_are_refused_without_echoing_them() -> None:
    with pytest.raises(ConfigError, match="must not hold credentials") as info:
        chat_completions_url(f"user:{KEY}@127.0.0.1:8000/v1")
    assert KEY not in str(info.value)


# ------------------------------------------------------------------------------------------- the key stays secret


def test_an_echoed_key_reaches_no_message_log_or_setting(caplog: pytest.LogCaptureFixture) -> None:
    """A server that echoes the Authorization header into a 500 (retried, logged) and then a 401 body, in the
    shapes servers use (OpenAI error.message, FastAPI detail, plain text), probe included."""
    caplog.set_level(logging.DEBUG)  # urllib3's own debug lines too

    def leaky(request: Recorded) -> Reply:
        sent = request.headers.get("Authorization", "")
        if request.method == "GET":
            return Reply(401, {"detail": f"bad token {sent}"})
        if request.number < 3:
            return Reply(500, {"error": {"message": f"upstream said: {sent}"}}, headers={"X-Echo": sent})
        return Reply(401, f"denied for {sent}\nheaders: Authorization: {sent}")

    with FaultServer(leaky) as server:
        model = make_model(server, api_key=KEY, retries=1)
        with pytest.raises(ModelCallError) as probed:
            model.probe()
        with pytest.raises(ModelCallError) as first:
            model.generate(["hi"])
        with pytest.raises(ModelCallError) as second:
            model.generate(["hi"])
        assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in server.requests)  # it was really sent
    assert (probed.value.status, first.value.status, second.value.status) == (401, 500, 401)
    assert "upstream said: Bearer ***" in str(first.value) and "denied for Bearer ***" in str(second.value)
    assert any("retrying" in r.getMessage() for r in caplog.records)
    texts = [repr(model), str(model.settings()), caplog.text]
    for exc in (probed.value, first.value, second.value):
        texts += [str(exc), repr(exc), str(error_record(exc)), str(exc.args)]
    for text in texts:
        assert KEY not in text and "HUSHHUSH" not in text


def test_a_body_json_cannot_carry_is_a_bad_input_error_and_nothing_is_sent() -> None:
    with FaultServer(script(chat_reply("never"))) as server:
        with pytest.raises(ModelCallError) as info:
            make_model(server, retries=3, extra_body={"top_p": float("nan")}).generate(["hi"])
        assert not server.requests
    assert info.value.kind == "bad_input" and "\n" not in str(info.value)
