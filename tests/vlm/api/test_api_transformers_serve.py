"""OpenAICompatModel against a real third-party server: `transformers serve` on a tiny random LLaVA, on CPU
(the session fixture `served_llava` of tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from PIL import Image

from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.core.model_calls import ModelCallError

MAX_TOKENS = 8


@pytest.fixture(scope="module")
def model(served_llava: tuple[str, str]) -> OpenAICompatModel:
    api_base, model_path = served_llava
    return OpenAICompatModel(model_path, api_base=api_base, max_tokens=MAX_TOKENS, timeout=120, retries=0)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve_images") / "red.png"
    Image.new("RGB", (40, 30), (220, 20, 20)).save(path)
    return path


def _check(generation, model_path: str) -> None:
    assert isinstance(generation.text, str)
    assert generation.usage is not None
    assert generation.usage.input_tokens > 0
    assert 0 < generation.usage.output_tokens <= MAX_TOKENS
    assert model_path in str(generation.extra["response_model"])


def test_image_and_text(model: OpenAICompatModel, served_llava: tuple[str, str], image: Path) -> None:
    generation = model.generate_full([str(image), "What is shown in the image?"])
    _check(generation, served_llava[1])


def test_text_only(model: OpenAICompatModel, served_llava: tuple[str, str]) -> None:
    generation = model.generate_full(["What is shown in the image?"])
    _check(generation, served_llava[1])


def test_the_image_reaches_the_model(model: OpenAICompatModel, image: Path) -> None:
    """The same question costs more prompt tokens with the image: the server expanded it into image tokens."""
    with_image = model.generate_full([str(image), "Describe the image in one sentence."])
    without = model.generate_full(["Describe the image in one sentence."])
    assert with_image.usage is not None and without.usage is not None
    assert with_image.usage.input_tokens > without.usage.input_tokens


def test_system_turn_and_multi_turn(model: OpenAICompatModel, served_llava: tuple[str, str]) -> None:
    conversation = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Is there a cat in the picture?"},
        {"role": "assistant", "content": "No."},
        {"role": "user", "content": "Yes or no: a dog?"},
    ]
    _check(model.generate_full(conversation), served_llava[1])


def test_probe_reaches_the_real_server(model: OpenAICompatModel, served_llava: tuple[str, str]) -> None:
    """The probe reaches the server and reports its model list as the server gives it, whatever that list holds
    (transformers serve listed its empty hub cache before 5.24 and lists the path it serves from 5.24 on): vlmkit
    warns only when a non-empty list lacks the requested model."""
    api_base, _ = served_llava
    served = requests.get(f"{api_base}/models", timeout=60).json()["data"]  # the server's own answer, read apart
    ids = [entry["id"] for entry in served]
    for asked in (model, OpenAICompatModel("no-such-model", api_base=api_base, timeout=120, retries=0)):
        result = asked.probe()
        assert result["reachable"] is True
        assert result["models"] == ids
        mine = [entry.get("max_model_len") for entry in served if entry["id"] == asked.model]
        assert result["max_model_len"] == (mine[0] if mine and isinstance(mine[0], int) else None)
        assert ("warning" in result) == (bool(ids) and asked.model not in ids)
        if "warning" in result:
            assert "'no-such-model'" in result["warning"] and "\n" not in result["warning"]


def test_a_wrong_model_id_is_fatal_and_quotes_the_server(served_llava: tuple[str, str]) -> None:
    api_base, _ = served_llava
    wrong = OpenAICompatModel("no-such-model", api_base=api_base, max_tokens=MAX_TOKENS, timeout=120, retries=2)
    with pytest.raises(ModelCallError) as info:
        wrong.generate(["hi"])
    assert (info.value.kind, info.value.status, info.value.fatal) == ("http_4xx", 400, True)
    # the server's own words from its JSON `detail` (5.x: "Server is pinned to '<path>'; requested '<id>'."), not
    # the JSON around them
    message = str(info.value)
    assert message.startswith(f"{api_base}/chat/completions: HTTP 400: ") and "after" not in message  # one attempt
    assert "'no-such-model'" in message and '"detail"' not in message and "\n" not in message
