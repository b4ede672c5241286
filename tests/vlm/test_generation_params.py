"""Per-request generation parameters (a dataset row's max_tokens, temperature, stop, ...) reach every model kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from tests.support.servers import FaultServer, chat_reply
from tests.support.tiny_models import build_tiny_llava
from vlm.api.openai_compat import OpenAICompatModel
from vlm.base import BaseModel
from vlmkit.core.model_calls import UnsupportedInputError, check_params


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory) -> Path:
    return build_tiny_llava(tmp_path_factory.mktemp("params") / "llava")


@pytest.fixture(scope="module")
def hf_model(tiny_llava: Path):
    import torch

    from vlm.local.generic import HFVisionModel

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield HFVisionModel(str(tiny_llava), max_new_tokens=8, batch_size=4)
    torch.set_num_threads(before)


@pytest.fixture
def image(tmp_path: Path) -> str:
    path = tmp_path / "x.png"
    Image.new("RGB", (32, 32), "green").save(path)
    return str(path)


def test_unknown_parameter_names_are_refused():
    assert check_params({"max_tokens": 4}) == {"max_tokens": 4}
    with pytest.raises(ValueError, match="row 3: unknown generation parameter.*max_token\\b"):
        check_params({"max_token": 4}, where="row 3")


def test_api_body_takes_row_parameters_over_the_model_settings():
    with FaultServer(lambda r: chat_reply("ok")) as server:
        model = OpenAICompatModel("m", api_base=server.base_url, max_tokens=64, temperature=0.0, extra_body={"top_p": 0.5})
        model.generate_full(["hi"], None, {"max_tokens": 3, "top_p": 0.9, "stop": ["\n"], "ignore_eos": True})
        model.generate_full(["hi"])
    with_params, plain = server.requests[0].body, server.requests[1].body
    assert with_params["max_tokens"] == 3 and with_params["top_p"] == 0.9 and with_params["stop"] == ["\n"]
    assert with_params["ignore_eos"] is True and with_params["temperature"] == 0.0
    assert plain["max_tokens"] == 64 and plain["top_p"] == 0.5 and "stop" not in plain


def test_local_batch_applies_each_rows_max_tokens(hf_model, image: str):
    msgs = [image, "describe"]
    results = hf_model.generate_batch([msgs, msgs, msgs], None, [{"max_tokens": 2, "ignore_eos": True}, None, {"max_tokens": 5, "ignore_eos": True}])
    assert results[0].usage.output_tokens == 2
    assert results[2].usage.output_tokens == 5
    assert results[1].usage.output_tokens <= 8
    one = hf_model.generate_full(msgs, None, {"max_tokens": 5, "ignore_eos": True})
    assert one.text == results[2].text  # grouping by parameters keeps greedy answers identical


def test_local_model_refuses_what_generate_cannot_do(hf_model, image: str):
    with pytest.raises(UnsupportedInputError, match="presence_penalty"):
        hf_model.generate_full([image, "hi"], None, {"presence_penalty": 0.5})


def test_a_generate_only_model_says_it_cannot_take_parameters():
    class Echo(BaseModel):
        def generate(self, msgs, dataset=None):
            return "echo"

    assert Echo().generate_full(["hi"]).text == "echo"
    [failed] = Echo().generate_batch([["hi"]], None, [{"max_tokens": 2}])
    assert isinstance(failed, UnsupportedInputError) and "max_tokens" in str(failed)
