"""Local generation says what it did: greedy is plain greedy whatever the checkpoint's generation_config.json says,
settings() records what generate was given and which checkpoint values were kept or overridden, and a `stop`
parameter ends an answer as servers do (text cut before the stop string, no batch padding counted as output)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.tiny_models import build_tiny_llava
from vlm.local.generic import HFVisionModel

# What a chat checkpoint's generation_config.json often says (Qwen2.5-VL-7B-Instruct has do_sample, temperature,
# top_p, top_k and repetition_penalty 1.05); strong values so that applying them changes the tiny model's answer.
CHECKPOINT_SETTINGS = {
    "do_sample": True,
    "temperature": 0.7,
    "top_p": 0.8,
    "top_k": 5,
    "repetition_penalty": 1.8,
    "no_repeat_ngram_size": 2,
    "max_length": 4096,
}
PROMPT = "Describe the picture of a red square and a blue circle."


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def plain_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llava(tmp_path_factory.mktemp("decoding") / "llava")


def _with_generation_config(source: Path, target: Path, **settings: Any) -> Path:
    """A copy of the model whose generation_config.json adds `settings` to the one transformers wrote."""
    shutil.copytree(source, target)
    path = target / "generation_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **settings}))
    return target


@pytest.fixture(scope="module")
def sampling_dir(plain_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("decoding") / "llava_sampling"
    return _with_generation_config(plain_dir, target, **CHECKPOINT_SETTINGS)


def _raw_generate(model_dir: Path, prompt: str, **generate: Any) -> list[int]:
    """The new token ids of one plain transformers generate call on the model in model_dir (no kit code)."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(str(model_dir))
    model = AutoModelForImageTextToText.from_pretrained(str(model_dir), dtype=torch.float32).eval()
    conversation = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    inputs = processor.apply_chat_template(
        conversation, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
    )
    if "stop_strings" in generate:
        generate["tokenizer"] = processor.tokenizer
    with torch.inference_mode():
        output = model.generate(**inputs, **generate)
    return output[0, inputs["input_ids"].shape[1] :].tolist()


def _answer(model: HFVisionModel, ids: list[int]) -> tuple[str, int]:
    """(text, output tokens) of raw ids the way a server reports them: up to and including the first eos."""
    eos = model.processor.tokenizer.eos_token_id
    ids = ids[: ids.index(eos) + 1] if eos in ids else ids
    return model.processor.tokenizer.decode(ids, skip_special_tokens=True).strip(), len(ids)


def test_greedy_ignores_the_checkpoints_sampling_and_penalties(plain_dir: Path, sampling_dir: Path) -> None:
    from transformers import GenerationConfig

    model = HFVisionModel(str(sampling_dir), dtype="float32", device="cpu", max_new_tokens=12)
    got = model.generate_full([PROMPT])
    tokenizer = model.processor.tokenizer
    plain = GenerationConfig(
        do_sample=False, max_new_tokens=12, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    expected = _answer(model, _raw_generate(plain_dir, PROMPT, generation_config=plain))
    assert (got.text, got.usage.output_tokens) == expected
    # what main did: the same greedy call on the checkpoint, whose generation_config.json fills in the rest
    applied = _answer(model, _raw_generate(sampling_dir, PROMPT, do_sample=False, max_new_tokens=12))
    assert applied != expected, "the checkpoint's penalties must change the answer for this test to mean anything"

    record = model.settings()["generation"]
    assert record["passed"]["do_sample"] is False and record["passed"]["max_new_tokens"] == 12
    assert not {"repetition_penalty", "no_repeat_ngram_size", "top_p", "top_k", "temperature"} & set(record["passed"])
    overridden = record["checkpoint_overridden"]
    assert {k: overridden.get(k) for k in CHECKPOINT_SETTINGS} == CHECKPOINT_SETTINGS
    assert record["checkpoint_kept"]["eos_token_id"] == tokenizer.eos_token_id
    assert record["passed"]["eos_token_id"] == tokenizer.eos_token_id
    assert json.loads(json.dumps(model.settings())) == model.settings()  # results.json can hold it


def test_a_setting_the_user_asks_for_applies(plain_dir: Path, sampling_dir: Path) -> None:
    from transformers import GenerationConfig

    model = HFVisionModel(str(sampling_dir), dtype="float32", device="cpu", max_new_tokens=12)
    tokenizer = model.processor.tokenizer
    got = model.generate_full([PROMPT], None, {"repetition_penalty": 1.8})  # a row's parameter
    penalised = GenerationConfig(
        do_sample=False, max_new_tokens=12, repetition_penalty=1.8, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    expected = _answer(model, _raw_generate(plain_dir, PROMPT, generation_config=penalised))
    assert (got.text, got.usage.output_tokens) == expected
    sampling = HFVisionModel(
        str(sampling_dir), dtype="float32", device="cpu", max_new_tokens=4, temperature=0.5, top_p=0.9
    )
    passed = sampling.settings()["generation"]["passed"]
    # plain temperature sampling as servers do it, the user's top_p, nothing of the checkpoint's
    assert (passed["do_sample"], passed["temperature"], passed["top_p"], passed["top_k"]) == (True, 0.5, 0.9, 0)
    assert "repetition_penalty" not in passed and "no_repeat_ngram_size" not in passed


def test_the_checkpoints_max_new_tokens_applies_when_the_user_gives_none(plain_dir: Path, tmp_path: Path) -> None:
    model_dir = _with_generation_config(plain_dir, tmp_path / "llava_budget", max_new_tokens=7)
    model = HFVisionModel(str(model_dir), dtype="float32", device="cpu")
    assert model.max_new_tokens == 7 and model.settings()["generation"]["max_new_tokens_source"] == "checkpoint"
    assert model.settings()["generation"]["checkpoint_kept"]["max_new_tokens"] == 7
    assert model.generate_full([PROMPT], None, {"ignore_eos": True}).usage.output_tokens == 7
    mine = HFVisionModel(str(model_dir), dtype="float32", device="cpu", max_new_tokens=3)
    record = mine.settings()["generation"]
    assert record["max_new_tokens_source"] == "user" and record["checkpoint_overridden"]["max_new_tokens"] == 7
    assert mine.generate_full([PROMPT], None, {"ignore_eos": True}).usage.output_tokens == 3
    default = HFVisionModel(str(plain_dir), dtype="float32", device="cpu")  # its generation config sets none
    assert default.max_new_tokens == 512 and default.settings()["generation"]["max_new_tokens_source"] == "default"


def _pick_stop(long_text: str, other_text: str) -> str:
    """A stop string from the middle of long_text that other_text does not hold (that row runs on: padding)."""
    for size in (2, 1, 3):
        for start in range(1, len(long_text) - size):
            candidate = long_text[start : start + size]
            usable = candidate.isascii() and candidate.isalnum()
            if usable and candidate not in other_text and candidate not in long_text[:start]:
                return candidate
    pytest.skip("the tiny model's answers hold no usable stop string")


def test_stop_cuts_the_answer_and_counts_no_padding(plain_dir: Path) -> None:
    model = HFVisionModel(str(plain_dir), dtype="float32", device="cpu", max_new_tokens=16, batch_size=2)
    prompts = [[PROMPT], ["What is 2 + 2?"]]  # different prompt lengths: left padding in the batch
    full = model.generate_batch(prompts, None, [{"ignore_eos": True}] * 2)
    assert full[0].usage.input_tokens != full[1].usage.input_tokens
    stop = _pick_stop(full[0].text, full[1].text)
    params = {"ignore_eos": True, "stop": [stop, "never-there-zq"]}
    batched = model.generate_batch(prompts, None, [params, params])
    singles = [model.generate_full(p, None, params) for p in prompts]
    for got, single in zip(batched, singles):
        assert (got.text, got.usage) == (single.text, single.usage)  # padding after the stop never counted
        assert stop not in got.text
    assert batched[0].text == full[0].text[: full[0].text.index(stop)].strip()
    assert batched[1].text == full[1].text and batched[1].usage.output_tokens == 16  # no stop: runs to the end
    # the stopped row counts through the token that completed the stop string, as transformers stopped it
    raw = _raw_generate(plain_dir, PROMPT, do_sample=False, max_new_tokens=16, min_new_tokens=16, stop_strings=[stop])
    assert batched[0].usage.output_tokens == len(raw) < 16
    assert stop in model.processor.tokenizer.decode(raw, skip_special_tokens=True)


def test_stop_helpers() -> None:
    from vlm.local.decoding import cut_at_stop, stop_token_ids, tokens_through_stop

    assert cut_at_stop("abc</s>def", ["def", "</s>"]) == 3
    assert cut_at_stop("abc", ["x"]) is None and cut_at_stop("abc", [""]) is None
    pieces = ["he", "llo", " wo", "rld", "!"]
    decode = lambda ids: "".join(pieces[i] for i in ids)  # noqa: E731
    assert tokens_through_stop(decode, [0, 1, 2, 3, 4], ["lo w"]) == 3  # "lo w" completes in token 2
    assert tokens_through_stop(decode, [0, 1, 2, 3, 4], ["he"]) == 1
    assert tokens_through_stop(decode, [0, 1, 2, 3, 4], ["?"]) == 5
    assert stop_token_ids(2, 2) == 2 and stop_token_ids([5, 6], 6) == [5, 6]
    assert stop_token_ids(5, 2) == [5, 2] and stop_token_ids(None, 2) == [2] and stop_token_ids(None, None) is None
