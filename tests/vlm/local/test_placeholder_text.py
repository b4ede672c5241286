"""A question that quotes a processor's placeholder token (`<image>` in an HTML question) stays text: the
processor never takes it for an image slot. Before, LLaVA-style processors counted one slot more than images and
the row failed (issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from tests.support.tiny_models import build_tiny_llava, build_tiny_qwen2_vl
from vlm.local.generic import HFVisionModel
from vlm.local.processors import placeholder_tokens
from vlmkit.formats.transformers_chat import NEUTRAL_JOIN, neutralise, to_hf_conversation


def test_neutralise_breaks_each_token_and_nothing_else():
    text = "Is <image> an HTML tag? <|image_pad|> too; <imag> and image stay."
    out = neutralise(text, ("<|image_pad|>", "<image>"))
    assert out == text.replace("<image>", f"<{NEUTRAL_JOIN}image>").replace("<|image_pad|>", f"<{NEUTRAL_JOIN}|image_pad|>")
    assert "<image>" not in out and out.replace(NEUTRAL_JOIN, "") == text
    assert neutralise(text, ()) == text


def test_only_text_parts_are_touched():
    conversation = to_hf_conversation([{"type": "image", "value": "http://h/x.png"}, "say <image>"],
                                      load_images=False, placeholders=("<image>",))
    items = conversation[0]["content"]
    assert items[0] == {"type": "image", "url": "http://h/x.png"}
    assert items[1]["text"] == f"say <{NEUTRAL_JOIN}image>"


@pytest.mark.parametrize("build", [build_tiny_llava, build_tiny_qwen2_vl])
def test_a_quoted_placeholder_reaches_the_model_as_text(tmp_path: Path, build, one_torch_thread):
    model = HFVisionModel(str(build(tmp_path / "m")), max_new_tokens=2)
    token = model.processor.image_token
    assert token in placeholder_tokens(model.processor)
    picture = tmp_path / "red.png"
    Image.new("RGB", (32, 32), (200, 10, 10)).save(picture)
    message = [{"type": "image", "value": str(picture)}, f"What does {token} mean in a web page?"]
    conversation, _ = model._conversation([{"role": "user", "content": message}])
    inputs = model._model_inputs([(conversation, [])])
    ids = inputs["input_ids"][0].tolist()
    token_id = model.processor.tokenizer.convert_tokens_to_ids(token)
    plain, _ = model._conversation([{"role": "user", "content": [message[0], "What does it mean in a web page?"]}])
    plain_ids = model._model_inputs([(plain, [])])["input_ids"][0].tolist()
    assert ids.count(token_id) == plain_ids.count(token_id) > 0  # the quoted token added no image slot
    assert isinstance(model.generate(message), str)  # and the row is answered
