"""`--system-prompt` (and `system_prompt` in a --config file's options): a system turn before each conversation that
has none, for served models (the request body) and local ones (the text the chat template renders); a row's own
system turn wins; it is part of the run's fingerprint, so a changed prompt asks again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.run_helpers import chat_only, chat_requests, vlmkit_cli
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tiny_models import build_tiny_gemma3, build_tiny_qwen2_vl
from vlm.local.generic import HFVisionModel
from vlmkit.core.errors import ConfigError
from vlmkit.run.resolve import ModelOptions, resolve_model

OWN_SYSTEM = "You only answer in numbers."


def answer(request: Recorded) -> Reply:
    return chat_reply("2")


def _system_turns(request: Recorded) -> list[Any]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "system"]


# ------------------------------------------------------------------------------------------------- served models


def test_served_model_sends_the_system_prompt_unless_the_row_has_its_own() -> None:
    with FaultServer(chat_only(answer)) as server:
        spec = resolve_model("served", ModelOptions(api_base=server.base_url, system_prompt="Be brief."))
        assert spec.kwargs["system_prompt"] == "Be brief." and spec.public_kwargs()["system_prompt"] == "Be brief."
        model = spec.build()
        model.generate(["1+1?"])
        model.generate([{"role": "system", "content": OWN_SYSTEM}, {"role": "user", "content": "1+1?"}])
        plain = resolve_model("served", ModelOptions(api_base=server.base_url)).build()
        plain.generate(["1+1?"])
        first, own, none = chat_requests(server.requests)
    assert first.body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert _system_turns(first) == ["Be brief."]
    assert _system_turns(own) == [OWN_SYSTEM]  # the row's own turn wins, and is not doubled
    assert _system_turns(none) == []


def test_a_system_prompt_that_is_not_text_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="--system-prompt"):
        resolve_model("served", ModelOptions(api_base="http://127.0.0.1:9/v1", system_prompt=3))  # type: ignore[arg-type]


def _conversation_file(path: Path) -> Path:
    rows = [
        {"query": "1+1", "response": "2"},
        {"system": OWN_SYSTEM, "query": "2+2", "response": "4"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_config_file_and_flag_reach_the_request_body_and_the_fingerprint(tmp_path: Path) -> None:
    data = _conversation_file(tmp_path / "chat.jsonl")
    work = tmp_path / "out"
    env = {"LMUData": str(tmp_path / "LMUData")}
    with FaultServer(chat_only(answer)) as server:
        config = tmp_path / "run.json"
        config.write_text(json.dumps({
            "model": ["served"], "custom_datasets": [str(data)],
            "options": {"api_base": server.base_url, "system_prompt": "Answer with one number.", "retries": 0},
        }))
        first = vlmkit_cli("run", "--config", str(config), "--work-dir", str(work), env=env)
        asked_first = chat_requests(server.requests)
        again = vlmkit_cli("run", "--config", str(config), "--work-dir", str(work), env=env)
        asked_again = chat_requests(server.requests)[len(asked_first):]
        other = vlmkit_cli("run", "--config", str(config), "--work-dir", str(work), "--system-prompt", "Be terse.",
                           env=env)
        asked_other = chat_requests(server.requests)[len(asked_first) + len(asked_again):]
    for result in (first, again, other):
        assert result.returncode == 0, result.stderr
    by_question = {r.body["messages"][-1]["content"]: _system_turns(r) for r in asked_first}
    assert by_question == {"1+1": ["Answer with one number."], "2+2": [OWN_SYSTEM]}
    assert asked_again == []  # same settings: resumed from the journal
    # the flag wins over the config file, and a changed system prompt is another run: both rows are asked again
    assert {r.body["messages"][-1]["content"]: tuple(_system_turns(r)) for r in asked_other} == {
        "1+1": ("Be terse.",), "2+2": (OWN_SYSTEM,)}
    results = json.loads(next(work.rglob("results.json")).read_text())
    assert results["model"]["kwargs"]["system_prompt"] == "Be terse."
    assert results["model"]["settings"]["system_prompt"] == "Be terse."


# ------------------------------------------------------------------------------------------------- local models


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_system")
    return {"qwen2_vl": build_tiny_qwen2_vl(root / "qwen2_vl"), "gemma3": build_tiny_gemma3(root / "gemma3")}


def rendered(model: HFVisionModel, msgs: list[Any]) -> str:
    """The prompt text that reaches the model: the processor's chat template output for this message, tokenized
    and decoded back (special tokens kept)."""
    inputs = model._model_inputs([model._conversation(model.prepare(msgs))])
    return model.processor.tokenizer.decode(inputs["input_ids"][0].tolist(), skip_special_tokens=False)


def test_local_model_renders_the_system_turn_unless_the_row_has_its_own(tiny: dict[str, Path]) -> None:
    spec = resolve_model("mine", ModelOptions(model_path=str(tiny["qwen2_vl"]), system_prompt="Be brief.", max_tokens=2))
    assert spec.kwargs["system_prompt"] == "Be brief."
    model = spec.build()
    text = rendered(model, ["What is shown?"])
    assert text.startswith("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is shown?")
    assert "You are a helpful assistant." not in text  # the template's default system turn is replaced
    own = rendered(model, [{"role": "system", "content": OWN_SYSTEM}, {"role": "user", "content": "What is shown?"}])
    assert own.startswith(f"<|im_start|>system\n{OWN_SYSTEM}<|im_end|>\n") and "Be brief." not in own
    assert model.settings()["system_prompt"] == "Be brief."
    assert isinstance(model.generate(["What is shown?"]), str)
    default = HFVisionModel(str(tiny["qwen2_vl"]), max_new_tokens=2)
    assert rendered(default, ["What is shown?"]).startswith("<|im_start|>system\nYou are a helpful assistant.")


def test_preset_system_prompt_and_what_replaces_it(tiny: dict[str, Path]) -> None:
    """Gemma 3's VLMEvalKit preset sends "You are a helpful assistant. "; --system-prompt replaces it; "" sends none."""
    path = str(tiny["gemma3"])
    preset = resolve_model("gemma-3-4b-it", ModelOptions(model_path=path, max_tokens=2)).build()
    assert "<start_of_turn>system\nYou are a helpful assistant. <end_of_turn>" in rendered(preset, ["Hi"])
    assert preset.settings()["preset"]["overridden"] == ["max_new_tokens"]
    mine = resolve_model("gemma-3-4b-it", ModelOptions(model_path=path, max_tokens=2, system_prompt="Be brief.")).build()
    text = rendered(mine, ["Hi"])
    assert "<start_of_turn>system\nBe brief.<end_of_turn>" in text and "helpful" not in text
    assert mine.settings()["preset"]["overridden"] == ["max_new_tokens", "system_prompt"]
    none = resolve_model("gemma-3-4b-it", ModelOptions(model_path=path, max_tokens=2, system_prompt="")).build()
    assert "<start_of_turn>system" not in rendered(none, ["Hi"])
