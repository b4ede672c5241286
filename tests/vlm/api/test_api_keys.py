"""The API key on its way into the request headers (vlm.api.auth and OpenAICompatModel.auth_headers): a key holding
control characters is refused in one line that never shows it (a `\\r\\n` would add a header of its own to every
request); white space around it (the newline YAML's `|` leaves) is stripped with a one-line note; a provider with
another header overrides only the classmethod."""

from __future__ import annotations

import logging

import pytest

from tests.support.servers import FaultServer, chat_reply, script
from vlm.api.auth import auth_headers, checked_key
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.errors import ConfigError

KEY = "sk-keys-QUIETPLEASE-77aa88bb"


@pytest.fixture(autouse=True)
def _no_env_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    "bad",
    [f"{KEY}\r\nX-Injected: 1", f"{KEY}\nX-Injected: 1", f"sk-\x00{KEY}", f"{KEY}\x7f", f"sk-\u2028{KEY}",
     f"sk-a\tb{KEY}"],
    ids=["crlf-header", "lf-header", "nul", "del", "line-separator", "inner-tab"],
)
def test_a_key_with_control_characters_is_refused_in_one_line_that_never_shows_it(bad: str) -> None:
    with FaultServer(script(chat_reply("never"))) as server:
        with pytest.raises(ConfigError) as made:
            OpenAICompatModel("m", api_base=server.base_url, api_key=bad)
        with pytest.raises(ConfigError) as headers:
            OpenAICompatModel.auth_headers(bad)  # what `vlmkit perf` asks
        assert not server.requests  # refused before anything was sent
    for info in (made, headers):
        message = str(info.value)
        assert "control characters" in message and "\n" not in message
        assert KEY not in message and "QUIET" not in message and "X-Injected" not in message


def test_a_key_from_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"{KEY}\r\nX-Injected: 1")
    with pytest.raises(ConfigError) as info:
        OpenAICompatModel("m", api_base="http://127.0.0.1:9/v1")
    assert KEY not in str(info.value)


@pytest.mark.parametrize("given", [f"{KEY}\n", f"  {KEY} ", f"\t{KEY}\r\n"], ids=["yaml-block", "spaces", "tab-crlf"])
def test_white_space_around_a_key_is_stripped_with_a_one_line_note(
    given: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FaultServer(script(chat_reply("fine"))) as server:
        with caplog.at_level(logging.WARNING):
            model = OpenAICompatModel("m", api_base=server.base_url, api_key=given, retries=0)
            assert model.generate(["hi"]) == "fine"
            model.close()
        sent = server.requests[0].headers
    assert sent["Authorization"] == f"Bearer {KEY}"
    assert "X-Injected" not in sent
    notes = [r.getMessage() for r in caplog.records if "white space" in r.getMessage()]
    assert len(notes) == 1 and "\n" not in notes[0]
    assert all(KEY not in r.getMessage() for r in caplog.records)


def test_checked_key_keeps_a_clean_key_as_it_is_and_empty_means_none(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert checked_key(KEY) == KEY
        assert checked_key(None) is None
    assert not caplog.records  # nothing to note about a clean key
    assert checked_key(" \n") is None
    assert auth_headers(KEY) == {"Authorization": f"Bearer {KEY}"}
    assert auth_headers(None) == {} and auth_headers("") == {}
    assert OpenAICompatModel.auth_headers(KEY) == auth_headers(KEY)


def test_a_provider_with_another_header_overrides_only_auth_headers() -> None:
    class AzureLike(OpenAICompatModel):
        @classmethod
        def auth_headers(cls, api_key: str | None) -> dict[str, str]:
            return {"api-key": api_key} if api_key else {}

    with FaultServer(script(chat_reply("fine"))) as server:
        model = AzureLike("m", api_base=server.base_url, api_key=f"{KEY}\n", retries=0)
        assert model.generate(["hi"]) == "fine"
        model.close()
        sent = server.requests[0].headers
    assert sent["api-key"] == KEY  # the key was checked (stripped) before the override saw it
    assert "Authorization" not in sent
    assert KEY not in repr(model) and KEY not in str(model.settings())


def test_the_unused_pool_size_argument_is_gone_and_unknown_arguments_are_refused() -> None:
    with pytest.raises(TypeError):
        OpenAICompatModel("m", api_base="http://127.0.0.1:9/v1", pool_size=4)
