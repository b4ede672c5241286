"""vlm.local.vllm_likelihood's parts that need no engine (issue 28): placeholders put back as the chat template wrote
them, which options the prompt pass scores, and the images read from OpenAI messages. Expectations written by hand;
the engine's side is tests/vlm/local/test_vllm_likelihood.py."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from vlm.local.vllm_likelihood import Prompt, _images, collapsed, first_token_steps, letter_figures
from vlmkit.core.media import bytes_to_b64


def test_each_images_placeholders_collapse_to_one() -> None:
    # 9 is the image token: two images of 3 tokens each, apart and adjacent
    assert collapsed([1, 9, 9, 9, 2, 9, 9, 9, 3], 9, 2) == [1, 9, 2, 9, 3]
    assert collapsed([1, 9, 9, 9, 9, 9, 9, 3], 9, 2) == [1, 9, 9, 3]
    # images of different sizes apart (Qwen's dynamic resolution): each run is one image
    assert collapsed([9, 9, 5, 9, 9, 9, 9], 9, 2) == [9, 5, 9]
    assert collapsed([1, 2, 3], None, 0) == [1, 2, 3]


def test_the_prompt_pass_scores_one_token_options_it_lists() -> None:
    prompt = Prompt(ids=[1, 2], top={10: -0.5, 11: -2.0}, images=[], mm_kwargs=None)
    found, left = letter_figures(prompt, {"A": [10], "B": [12], "C": [13, 11], "D": [11]})
    assert found == {"A": -0.5, "D": -2.0} and left == ["B", "C"]
    # two-token options whose first token is listed share one step per first token; others go to token prompts
    tokens = {"A": [10, 1], "B": [10, 2], "C": [11, 3], "D": [12, 4], "E": [10, 5, 6]}
    assert first_token_steps(prompt, tokens, ["A", "B", "C", "D", "E"]) == {10: ["A", "B"], 11: ["C"]}


def test_images_come_from_data_urls_in_order_and_other_media_is_refused() -> None:
    def data_url(colour: tuple[int, int, int]) -> str:
        buffer = io.BytesIO()
        Image.new("RGB", (4, 3), colour).save(buffer, format="PNG")
        return "data:image/png;base64," + bytes_to_b64(buffer.getvalue())

    messages = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": data_url((255, 0, 0))}},
        {"type": "image_url", "image_url": {"url": data_url((0, 0, 255))}},
        {"type": "text", "text": "which?"}]}]
    first, second = _images(messages)
    assert first.getpixel((0, 0)) == (255, 0, 0) and second.getpixel((0, 0)) == (0, 0, 255)
    with pytest.raises(ValueError, match="data URLs"):
        _images([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}])
    with pytest.raises(ValueError, match="input_audio"):
        _images([{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}])
