"""A second API provider is two things: its class (here a subclass of the OpenAI-compatible model whose
`auth_headers` sends the key as `api-key: KEY`, as Azure OpenAI does) and its registry line (`provider="api"`).
Registered so, it resolves like the built-in API model (--api-base, --api-key, --max-tokens, the API options; no
--backend vllm), and `vlmkit run`, `vlmkit run --mode perf` and `vlmkit perf` send its header, never a Bearer one, to
a real server on 127.0.0.1 that records every request. A user's own class (an entry without a provider) still takes
only its entry's kwargs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import FaultServer, Recorded, Reply, chat_reply, models_reply
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.cli.main import main
from vlmkit.core.errors import ConfigError
from vlmkit.core.registry import Registry
from vlmkit.run.resolve import ModelOptions, resolve_model

KEY = "sk-acme-7f3a"
SERVED_ID = "acme-1"  # the id the entry asks the server for
HEADER_CLASS = f"{__name__}:HeaderKeyModel"


class HeaderKeyModel(OpenAICompatModel):
    """The provider's class: the key goes in an `api-key` header."""

    @classmethod
    def auth_headers(cls, api_key: str | None) -> dict[str, str]:
        return {"api-key": api_key} if api_key else {}


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The shipped model registry plus the provider's one line ("acme-chat") and a user's own class ("mine"), in
    place of vlm.registry.model_registry for the test."""
    from vlm import registry as models

    registry = Registry("model")
    for entry in models.model_registry():
        registry.add(entry.name, entry.target, entry.description, provider=entry.provider, **entry.kwargs)
    registry.add("acme-chat", HEADER_CLASS, "Acme chat completions", provider="api", model=SERVED_ID)
    registry.add("mine", HEADER_CLASS, "a user's class: only its entry's kwargs", model=SERVED_ID)
    monkeypatch.setattr(models, "model_registry", lambda: registry)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    yield "acme-chat"


def _sse(text: str) -> bytes:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _answer(request: Recorded) -> Reply:
    """`GET /v1/models`, a plain chat completion, or a streamed one (what perf asks), as an OpenAI server answers."""
    if request.method == "GET":
        return models_reply(SERVED_ID)
    if isinstance(request.body, dict) and request.body.get("stream"):
        return Reply(200, _sse("Yes"), headers={"Content-Type": "text/event-stream"})
    return chat_reply("Yes", model=SERVED_ID)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(_answer) as running:
        yield running


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    rows = [{"question": f"Is {n} a number?", "answer": "Yes"} for n in ("one", "two", "three")]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _header(request: Recorded, name: str) -> str | None:
    return {k.lower(): v for k, v in request.headers.items()}.get(name.lower())


def _key_in_files(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]


def test_the_provider_resolves_like_the_built_in_api_model(acme: str) -> None:
    base = "http://127.0.0.1:9/v1"
    options = ModelOptions(api_base=base, api_key=KEY, max_tokens=5, temperature=0.5, system_prompt="Be brief.",
                           timeout=7, retries=0, fps=1.0, video_mode="video_url")
    spec = resolve_model(acme, options)
    builtin = resolve_model("gpt-4o-mini", options)
    assert spec.target == HEADER_CLASS and spec.is_api and not spec.is_local
    assert builtin.target == "vlm.api.openai_compat:OpenAICompatModel" and builtin.is_api
    # the same API kwargs, worked out by hand from the options; only the model id differs (the entry's)
    expected = {"api_base": base, "api_key": KEY, "max_tokens": 5, "temperature": 0.5, "system_prompt": "Be brief.",
                "timeout": 7.0, "retries": 0, "fps": 1.0, "video_mode": "video_url"}
    assert spec.kwargs == {"model": SERVED_ID, **expected} and builtin.kwargs == {"model": "gpt-4o-mini", **expected}
    assert isinstance(spec.build(), HeaderKeyModel)
    with pytest.raises(ConfigError, match="--backend vllm runs local weights; acme-chat is a served model"):
        resolve_model(acme, ModelOptions(backend="vllm"))
    # a name the registry does not know, with --api-base, runs on the registry's API class
    assert resolve_model("other", ModelOptions(api_base=base)).target == "vlm.api.openai_compat:OpenAICompatModel"


def test_a_users_class_still_takes_only_its_entry(acme: str, tmp_path: Path) -> None:
    spec = resolve_model("mine", ModelOptions(max_tokens=5, temperature=0.5))
    assert spec.target == HEADER_CLASS and not spec.is_api and not spec.is_local
    assert spec.kwargs == {"model": SERVED_ID}


def test_run_sends_the_providers_header_and_max_tokens(acme: str, server: FaultServer, questions: Path,
                                                       tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    code = main(["run", "--model", acme, "--api-base", server.base_url, "--api-key", KEY, "--max-tokens", "5",
                 "--custom-dataset-path", str(questions), "--mode", "infer", "--work-dir", str(work), "--nproc", "1"])
    assert code == 0, capsys.readouterr().err
    asked = [r for r in server.requests if r.method == "POST"]
    assert len(asked) == 3 and all(r.body["model"] == SERVED_ID and r.body["max_tokens"] == 5 for r in asked)
    assert all(_header(r, "api-key") == KEY and _header(r, "Authorization") is None for r in server.requests)
    results = json.loads(next(work.rglob("results.json")).read_text())
    assert results["model"]["target"] == HEADER_CLASS
    predictions = [json.loads(line) for line in next(work.rglob("predictions.jsonl")).read_text().splitlines()]
    assert [p["prediction"] for p in predictions] == ["Yes", "Yes", "Yes"]
    assert _key_in_files(work) == []


def test_run_mode_perf_sends_the_providers_header(acme: str, server: FaultServer, questions: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    code = main(["run", "--mode", "perf", "--model", acme, "--api-base", server.base_url, "--api-key", KEY,
                 "--max-tokens", "6", "--nproc", "2", "--custom-dataset-path", str(questions), "--work-dir", str(work)])
    assert code == 0, capsys.readouterr().err
    streamed = [r for r in server.requests if r.method == "POST"]
    assert len(streamed) == 1 + 3  # the one-token probe, then one request per row
    assert all(r.body["stream"] is True and r.body["model"] == SERVED_ID for r in streamed)
    assert [r.body["max_tokens"] for r in streamed[1:]] == [6, 6, 6]
    assert all(_header(r, "api-key") == KEY and _header(r, "Authorization") is None for r in streamed)
    summary = json.loads(next(work.rglob("perf_summary.json")).read_text())
    assert summary["levels"][0]["requests"]["successful"] == 3
    assert _key_in_files(work) == []


def test_vlmkit_perf_sends_the_providers_header_and_the_built_in_one_a_bearer(
        acme: str, server: FaultServer, questions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def perf(model: str, out: Path) -> list[Recorded]:
        before = len(server.requests)
        code = main(["perf", "--model", model, "--api-base", server.base_url, "--api-key", KEY, "--data",
                     str(questions), "--num-requests", "2", "--out", str(out), "--no-plots"])
        assert code == 0, capsys.readouterr().err
        assert _key_in_files(out) == []
        return server.requests[before:]

    ours = perf(acme, tmp_path / "acme")
    assert len(ours) == 3 and all(r.body["model"] == SERVED_ID for r in ours)
    assert all(_header(r, "api-key") == KEY and _header(r, "Authorization") is None for r in ours)
    builtin = perf("served-by-name", tmp_path / "builtin")
    assert len(builtin) == 3 and all(r.body["model"] == "served-by-name" for r in builtin)
    assert all(_header(r, "Authorization") == f"Bearer {KEY}" and _header(r, "api-key") is None for r in builtin)


def test_perf_and_resolve_import_no_model_class_until_asked() -> None:
    """perf reaches the API class through the registry when it builds a target, not when it is imported."""
    import subprocess
    import sys

    code = ("import sys; import vlmkit.perf.api, vlmkit.perf.run_mode, vlmkit.perf.cli, vlmkit.perf.requests, "
            "vlmkit.perf.source, vlmkit.run.resolve; print(sorted(m for m in sys.modules if m.startswith('vlm.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
