"""Likelihood scoring on real local models (vlm.local.likelihood through HFVisionModel; issue 28).

Models: the shipped vlmkit-tiny (a trained LLaVA-architecture model whose byte-level tokeniser adds a prefix space
to every word) and a tiny random Qwen2-VL built from a config, both loaded through from_pretrained. Every expected
figure is worked out here, apart from the code under test: the processor's tensors for a conversation written by
hand, `model(**inputs).logits` of one plain forward pass (the prompt, or the prompt with a continuation appended),
a log-softmax, and the answer tokens read off the tokeniser's vocabulary by the rule each template implies.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
from PIL import Image

import vlm
from tests.support import tiny_models
from tests.support.tiny_models import build_tiny_llava, build_tiny_qwen2_vl
from vlm.local import likelihood
from vlm.local.generic import HFVisionModel
from vlmkit.core.media import MediaError

TINY = Path(vlm.__file__).resolve().parent / "weights" / "vlmkit_tiny"
QUESTION = "Which colour is the shape in the image?\nOptions:\nA. red\nB. orange\nC. blue\nD. purple\nAnswer:"
TOL = 1e-4  # float32 on CPU: padded batches and cached passes differ from plain ones by rounding only


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny_qwen2_vl") / "model")


@pytest.fixture(scope="module")
def models(qwen_dir: Path) -> Iterator[dict[str, HFVisionModel]]:
    built = {"tiny": HFVisionModel(str(TINY), batch_size=3), "qwen": HFVisionModel(str(qwen_dir), batch_size=3)}
    yield built
    for model in built.values():
        model.close()


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("likelihood_media")
    purple, wide = root / "purple.png", root / "wide.jpg"
    image = Image.new("RGB", (112, 112), (255, 255, 255))
    image.paste((128, 0, 128), (30, 30, 82, 82))
    image.save(purple)
    other = Image.new("RGB", (120, 50), (10, 20, 200))
    other.paste((250, 250, 0), (30, 10, 60, 40))
    other.save(wide, quality=90)
    return {"purple": str(purple), "wide": str(wide)}


# ----------------------------------------------------------------------------------------------- by hand


def hf_conversation(images: list[str], text: str) -> list[dict[str, Any]]:
    """The transformers conversation written by hand: one user turn, the images first, then the text."""
    content: list[dict[str, Any]] = [{"type": "image", "image": Image.open(p).convert("RGB")} for p in images]
    return [{"role": "user", "content": [*content, {"type": "text", "text": text}]}]


def plain_logprobs(
    model: HFVisionModel, images: list[str], text: str, appended: Sequence[int] = ()
) -> tuple[torch.Tensor, int]:
    """(log-softmax of one plain forward pass over prompt + appended tokens, shape [positions, vocab]; the prompt's
    length). The prompt's tensors come from the processor; the appended tokens extend them as text."""
    inputs = model.processor.apply_chat_template(
        hf_conversation(images, text), add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt",
    )
    n_prompt = inputs["input_ids"].shape[1]
    if appended:
        extra = torch.tensor([list(appended)], dtype=inputs["input_ids"].dtype)
        inputs["input_ids"] = torch.cat([inputs["input_ids"], extra], dim=1)
        inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
        if "mm_token_type_ids" in inputs:  # Qwen2-VL: the appended tokens are text (type 0)
            pad = torch.zeros((1, len(appended)), dtype=inputs["mm_token_type_ids"].dtype)
            inputs["mm_token_type_ids"] = torch.cat([inputs["mm_token_type_ids"], pad], dim=1)
    with torch.inference_mode():
        logits = model.model(**inputs).logits[0].float()
    return logits.log_softmax(dim=-1), n_prompt


def summed(model: HFVisionModel, images: list[str], text: str, ids: list[int]) -> float:
    """log p(ids | prompt) by hand: one forward pass over prompt + ids, the log-probability of each token read at the
    position before it."""
    logprobs, n_prompt = plain_logprobs(model, images, text, ids)
    return float(sum(logprobs[n_prompt - 1 + j, token] for j, token in enumerate(ids)))


def vocab_ids(tokenizer: Any, *pieces: str) -> list[int]:
    vocab = tokenizer.get_vocab()
    for piece in pieces:
        assert piece in vocab, piece
    return [vocab[piece] for piece in pieces]


def prefix_space_ids(tokenizer: Any, word: str) -> list[int]:
    """A word as a byte-level tokeniser with add_prefix_space writes it: "Ġword" when the vocabulary has it, else "Ġ"
    and the word (the tiny vocabularies here hold every letter and the option words)."""
    vocab = tokenizer.get_vocab()
    return vocab_ids(tokenizer, f"Ġ{word}") if f"Ġ{word}" in vocab else vocab_ids(tokenizer, "Ġ", word)


# ----------------------------------------------------------------------------------------------- answer tokens


def test_answer_separator() -> None:
    assert likelihood.answer_separator("<|im_start|>assistant\n") == ""
    assert likelihood.answer_separator("ASSISTANT:") == " "
    assert likelihood.answer_separator("") == ""


def test_answer_tokens_follow_each_template(models: dict[str, HFVisionModel], tmp_path: Path) -> None:
    # Qwen: the prompt ends in a newline, so the model writes "A", the bare letter token.
    qwen = models["qwen"].processor.tokenizer
    assert likelihood.answer_token_ids(qwen, "<|im_start|>assistant\n", "A") == vocab_ids(qwen, "A")
    # LLaVA-1.5 style "ASSISTANT:": the model writes " A" (byte-level "ĠA" where the vocabulary has it).
    from transformers import AutoTokenizer

    llava = AutoTokenizer.from_pretrained(build_tiny_llava(tmp_path / "llava"))
    expected = vocab_ids(llava, "ĠA") if "ĠA" in llava.get_vocab() else vocab_ids(llava, "Ġ", "A")
    assert likelihood.answer_token_ids(llava, "USER: hi ASSISTANT:", "A") == expected
    assert likelihood.answer_token_ids(llava, "USER: hi ASSISTANT:", " A") == expected  # a given space is kept
    # vlmkit-tiny re-splits its prompt's final "ĠĊ" when a word follows: the word is written as on its own, with the
    # prefix space every word has (what the model generates, "Ġpurple").
    tiny = models["tiny"].processor.tokenizer
    prompt = "<|user|>\n<image>Which colour?<|end|>\n<|assistant|>\n"
    assert likelihood.answer_token_ids(tiny, prompt, "purple") == vocab_ids(tiny, "Ġpurple")
    assert likelihood.answer_token_ids(tiny, prompt, "B") == prefix_space_ids(tiny, "B")
    with pytest.raises(ValueError, match="empty"):
        likelihood.answer_token_ids(tiny, prompt, "")


def test_option_tokens_refuse_bad_letters(models: dict[str, HFVisionModel]) -> None:
    tokenizer = models["qwen"].processor.tokenizer
    with pytest.raises(ValueError, match="no options"):
        likelihood.option_token_ids(tokenizer, "x\n", [])
    with pytest.raises(ValueError, match="repeat"):
        likelihood.option_token_ids(tokenizer, "x\n", ["A", "A"])


def test_length_normalised_by_characters() -> None:
    assert likelihood.length_normalised(-6.0, "red") == pytest.approx(-2.0)
    assert likelihood.length_normalised(-6.0, " red") == pytest.approx(-1.5)  # lm-eval counts the leading space
    with pytest.raises(ValueError):
        likelihood.length_normalised(-1.0, "")


# ----------------------------------------------------------------------------------------------- letter mode


def test_letter_mode_equals_the_plain_forward_pass(models: dict[str, HFVisionModel], media: dict[str, str]) -> None:
    model = models["qwen"]
    letters = ["A", "B", "C", "D"]
    got = model.option_logprobs([media["purple"], QUESTION], letters)
    logprobs, _ = plain_logprobs(model, [media["purple"]], QUESTION)
    last = logprobs[-1]
    ids = vocab_ids(model.processor.tokenizer, *letters)
    expected = {letter: float(last[i]) for letter, i in zip(letters, ids)}
    assert got == pytest.approx(expected, abs=TOL)
    assert max(got, key=got.get) == letters[int(torch.argmax(last[ids]))]
    assert all(v <= 0 for v in got.values())  # log-probabilities, never a loss


def test_letter_mode_of_several_tokens_sums_them(models: dict[str, HFVisionModel], media: dict[str, str]) -> None:
    # vlmkit-tiny writes a letter as " A" (prefix space): "ĠA" is one token where the vocabulary has it, "Ġ" "B"
    # two tokens where it does not; each letter's figure is the probability of writing all of its tokens.
    model = models["tiny"]
    tokenizer = model.processor.tokenizer
    letters = ["A", "B", "C", "D"]
    got = model.option_logprobs([media["purple"], QUESTION], letters)
    expected = {l: summed(model, [media["purple"]], QUESTION, prefix_space_ids(tokenizer, l)) for l in letters}
    assert got == pytest.approx(expected, abs=TOL)
    assert any(len(prefix_space_ids(tokenizer, l)) > 1 for l in letters)  # the several-token path ran


def test_yes_no(models: dict[str, HFVisionModel], media: dict[str, str]) -> None:
    # Qwen's tiny vocabulary has "Yes" as "Y" "es" and "No" as "N" "o": each answer's full probability.
    model = models["qwen"]
    question = "Is the shape purple? Please answer yes or no."
    got = model.option_logprobs([media["purple"], question], ["Yes", "No"])
    tokenizer = model.processor.tokenizer
    hand = {w: list(tokenizer(w, add_special_tokens=False)["input_ids"]) for w in ("Yes", "No")}
    assert all(len(ids) == 2 for ids in hand.values())
    expected = {w: summed(model, [media["purple"]], question, ids) for w, ids in hand.items()}
    assert got == pytest.approx(expected, abs=TOL)


def test_letter_choice_agrees_with_greedy_generation(models: dict[str, HFVisionModel], media: dict[str, str]) -> None:
    # vlmkit-tiny answers with the option's text, one token each ("Ġpurple"): generation's first token is the argmax
    # over the whole vocabulary, so when it is one of the options that option scores highest among them.
    model = models["tiny"]
    words = ["red", "orange", "blue", "purple"]
    msgs = [media["purple"], QUESTION]
    answer = model.generate(msgs)
    assert answer in words, answer
    assert likelihood.one_pass(model.option_tokens(msgs, words))
    got = model.option_logprobs(msgs, words)
    assert max(got, key=got.get) == answer


def _rows(media: dict[str, str]) -> tuple[list[Any], list[list[str]]]:
    """Rows of different lengths (left padding exercised): one image, text only, two images."""
    rows = [
        [media["purple"], QUESTION],
        ["What colour is the sky on a clear day?\nA. red\nB. blue\nAnswer with the option letter."],
        [media["purple"], media["wide"], "Are the two pictures the same? Answer yes or no. A. yes B. no C. maybe"],
    ]
    return rows, [["A", "B", "C", "D"], ["A", "B"], ["A", "B", "C"]]


@pytest.mark.parametrize("name", ["qwen", "tiny"])
def test_batched_equals_one_by_one(name: str, models: dict[str, HFVisionModel], media: dict[str, str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    model = models[name]
    rows, letters = _rows(media)
    calls: list[int] = []
    real_generate = model.model.generate

    def counting_generate(**kwargs: Any) -> Any:  # the real generate, counted
        calls.append(kwargs["input_ids"].shape[0])
        return real_generate(**kwargs)

    monkeypatch.setattr(model.model, "generate", counting_generate)
    batched = model.option_logprobs_batch(rows, letters)
    one_pass = [likelihood.one_pass(model.option_tokens(r, l)) for r, l in zip(rows, letters)]
    assert calls == ([sum(one_pass)] if any(one_pass) else []) + [1] * one_pass.count(False)
    singles = [model.option_logprobs(r, l) for r, l in zip(rows, letters)]
    for got, single, row_letters in zip(batched, singles, letters):
        assert isinstance(got, dict), got
        assert list(got) == row_letters
        assert got == pytest.approx(single, abs=TOL)


def test_a_bad_row_fails_alone(models: dict[str, HFVisionModel], media: dict[str, str], tmp_path: Path) -> None:
    model = models["qwen"]
    rows, letters = _rows(media)
    bad = [{"type": "image", "value": str(tmp_path / "missing.png")}, {"type": "text", "value": "What is it?"}]
    results = model.option_logprobs_batch(
        [rows[0], bad, rows[1], rows[0]], [letters[0], ["A", "B"], letters[1], ["A", "A"]]
    )
    assert isinstance(results[1], MediaError) and "missing.png" in str(results[1])
    assert isinstance(results[3], ValueError) and "repeat" in str(results[3])
    assert results[0] == pytest.approx(model.option_logprobs(rows[0], letters[0]), abs=TOL)
    assert results[2] == pytest.approx(model.option_logprobs(rows[1], letters[1]), abs=TOL)
    with pytest.raises(ValueError, match="lists of letters"):
        model.option_logprobs_batch(rows, letters[:1])


# ----------------------------------------------------------------------------------------------- continuation mode


def _vision_calls(model: HFVisionModel) -> tuple[list[int], Any]:
    """A forward hook counting the vision tower's passes (LLaVA's vision_tower, Qwen2-VL's visual)."""
    inner = model.model.model
    tower = getattr(inner, "vision_tower", None) or inner.visual
    calls: list[int] = []
    return calls, tower.register_forward_hook(lambda *_: calls.append(1))


@pytest.mark.parametrize("name", ["qwen", "tiny"])
def test_continuations_equal_summed_token_logprobs(
    name: str, models: dict[str, HFVisionModel], media: dict[str, str]
) -> None:
    model = models[name]
    tokenizer = model.processor.tokenizer
    continuations = ["purple", "blue", "a purple square", "red"]
    # the answer tokens by hand: Qwen's template ends in a newline and its tokeniser keeps words as written;
    # vlmkit-tiny writes every word with its prefix space
    if name == "qwen":
        hand = [list(tokenizer(c, add_special_tokens=False)["input_ids"]) for c in continuations]
    else:
        hand = [[i for word in c.split() for i in prefix_space_ids(tokenizer, word)] for c in continuations]
    model.option_logprobs_batch(*_rows(media))  # a padded batch first: no state of it may leak into what follows
    calls, hook = _vision_calls(model)
    try:
        got = model.continuation_logprobs([media["purple"], QUESTION], continuations)
    finally:
        hook.remove()
    assert len(calls) == 1  # the image is encoded once for all the continuations
    for (logprob, count), ids in zip(got, hand):
        assert count == len(ids)
        assert logprob == pytest.approx(summed(model, [media["purple"]], QUESTION, ids), abs=TOL)
    assert any(len(ids) > 1 for ids in hand) and any(len(ids) == 1 for ids in hand)


def test_shared_prefix_equals_naive_without_images(models: dict[str, HFVisionModel]) -> None:
    # text only after a batched call: Qwen2-VL's positions come from the prompt's own pass, not an earlier batch
    model = models["qwen"]
    text = "Name a colour of the rainbow."
    model.option_logprobs_batch([[text], [text + " Be brief please."]], [["A", "B"], ["A", "B"]])
    tokenizer = model.processor.tokenizer
    continuations = ["red", "a blue circle", "green"]
    got = model.continuation_logprobs([text], continuations)
    for (logprob, count), c in zip(got, continuations):
        ids = list(tokenizer(c, add_special_tokens=False)["input_ids"])
        assert count == len(ids)
        assert logprob == pytest.approx(summed(model, [], text, ids), abs=TOL)


@pytest.mark.parametrize("family", ["llava", "qwen2_5_vl", "smolvlm", "gemma3"])
def test_shared_prefix_equals_naive_across_families(family: str, media: dict[str, str],
                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    # The cached path against one plain pass per continuation, for the other families of the generic path (their
    # answer tokens are the model's own `option_tokens`: the tokenisation is checked above, the scoring here); and
    # a padded letter-mode batch against one row at a time.
    build = getattr(tiny_models, f"build_tiny_{family}")
    model = HFVisionModel(str(build(tmp_path_factory.mktemp(family) / "model")), batch_size=3)
    try:
        question = "Which colour is the shape? A. red B. blue"
        continuations = ["red", "a blue circle", "two", "green square"]
        got = model.continuation_logprobs([media["purple"], question], continuations)
        tokens = model.option_tokens([media["purple"], question], continuations)
        assert any(len(ids) > 2 for ids in tokens.values())
        for (logprob, count), c in zip(got, continuations):
            assert count == len(tokens[c])
            assert logprob == pytest.approx(summed(model, [media["purple"]], question, tokens[c]), abs=TOL)
        rows, letters = _rows(media)
        batched = model.option_logprobs_batch(rows, letters)
        for got_row, row, row_letters in zip(batched, rows, letters):
            assert got_row == pytest.approx(model.option_logprobs(row, row_letters), abs=TOL)
    finally:
        model.close()


def test_continuation_errors(models: dict[str, HFVisionModel], media: dict[str, str], tmp_path: Path) -> None:
    model = models["qwen"]
    with pytest.raises(ValueError, match="empty"):
        model.continuation_logprobs(["Say something."], ["red", ""])
    missing = [{"type": "image", "value": str(tmp_path / "gone.png")}, {"type": "text", "value": "What?"}]
    results = model.continuation_logprobs_batch([["Say something."], missing], [["red", "blue"], ["red"]])
    assert isinstance(results[0], list) and len(results[0]) == 2
    assert isinstance(results[1], MediaError)


def test_closed_model_refuses(qwen_dir: Path) -> None:
    model = HFVisionModel(str(qwen_dir))
    model.close()
    with pytest.raises(RuntimeError, match="closed"):
        model.option_logprobs(["Hi"], ["A", "B"])
    with pytest.raises(RuntimeError, match="closed"):
        model.continuation_logprobs(["Hi"], ["red"])
