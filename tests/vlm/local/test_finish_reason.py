"""A local transformers answer says why it ended, as a server does: finish_reason "length" when it used the whole
max_new_tokens budget without an end token, "stop" when an end token or a stop string ended it (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tiny_models import build_tiny_llava
from vlm.local import decoding
from vlm.local.generic import HFVisionModel

PROMPT = "Describe the picture of a red square and a blue circle."


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> HFVisionModel:
    path = build_tiny_llava(tmp_path_factory.mktemp("finish") / "llava")
    return HFVisionModel(str(path), dtype="float32", device="cpu", max_new_tokens=4, batch_size=2)


def test_an_answer_that_used_the_whole_budget_ended_on_length(model: HFVisionModel) -> None:
    full = model.generate_full([PROMPT], None, {"ignore_eos": True})
    assert full.usage.output_tokens == 4 and full.extra["finish_reason"] == "length"
    longer = model.generate_full([PROMPT], None, {"ignore_eos": True, "max_tokens": 6})  # a retry's budget
    assert longer.usage.output_tokens == 6 and longer.extra["finish_reason"] == "length"


def test_an_end_token_or_a_stop_string_ended_it(model: HFVisionModel) -> None:
    tokenizer = model.processor.tokenizer
    eos = tokenizer.eos_token_id
    text_ids = tokenizer.encode("red square", add_special_tokens=False)[:2]
    options = {"eos_token_id": eos, "max_new_tokens": 4}
    # (new token ids as a padded batch holds them: eos then padding; all four without one; eos as the 4th)
    rows = [[*text_ids, eos, eos][:4], (text_ids * 4)[:4], [*(text_ids * 2)[:3], eos]]
    got = decoding.answers(tokenizer, rows, [5, 5, 5], options)
    assert [g.extra["finish_reason"] for g in got] == ["stop", "length", "stop"]
    stopped = decoding.answers(tokenizer, [(text_ids * 4)[:4]], [5],
                               {**options, "stop_strings": [tokenizer.decode(text_ids[1:2]).strip()]})
    assert stopped[0].extra["finish_reason"] == "stop"


def test_a_seed_makes_sampling_repeatable_and_seeds_differ(model: HFVisionModel) -> None:
    """What --repeats relies on for local models: attempt k's `seed` k gives the same sample again, another seed
    another one (temperature 1 over the tiny model's 400-token vocabulary: 6 tokens alike by chance is negligible)."""
    sampler = HFVisionModel(model.model_path, dtype="float32", device="cpu", max_new_tokens=6, temperature=1.0)
    first = sampler.generate_full([PROMPT], None, {"seed": 1, "ignore_eos": True}).text
    again = sampler.generate_full([PROMPT], None, {"seed": 1, "ignore_eos": True}).text
    other = [sampler.generate_full([PROMPT], None, {"seed": s, "ignore_eos": True}).text for s in (2, 3)]
    assert first == again and any(text != first for text in other)
