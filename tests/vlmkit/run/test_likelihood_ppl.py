"""`--mcq-mode ppl` (vlmkit.run.likelihood): the perplexity of a QA or caption row's answer text given its prompt, per
row and overall (issue 28).

The aggregation is checked on figures written here; the model's side on the shipped vlmkit-tiny, against log-
probabilities worked out apart from the code under test: one plain forward pass over the prompt with the answer's
tokens appended (the processor's tensors for a conversation written by hand), a log-softmax, and the tokens read off
the vocabulary (vlmkit-tiny's byte-level tokeniser writes every word with its prefix space)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import vlm
from vlmkit.core.errors import DataError
from vlmkit.run import likelihood

TINY = Path(vlm.__file__).resolve().parent / "weights" / "vlmkit_tiny"
TOL = 1e-4


def _record(extra: dict[str, Any] | None, error: Any = None) -> dict[str, Any]:
    return {"error": error, "extra": {"likelihood": extra} if extra else None}


def test_references_of_qa_and_caption_rows() -> None:
    assert likelihood.row_choices("caption", {"index": 1, "answer": "['a cat', 'a small cat']"}) == \
        {"1": "a cat", "2": "a small cat"}
    assert likelihood.row_choices("qa", {"index": 2, "answer": "Paris"}) == {"1": "Paris"}
    with pytest.raises(DataError, match="row index 5, field answer"):
        likelihood.row_choices("qa", {"index": 5, "answer": ""})


def test_row_and_overall_perplexity_worked_by_hand() -> None:
    # row 1: two references, -6.0 over 3 tokens and -2.0 over 1: nll = 8/4 = 2, ppl = e^2
    row1 = likelihood.perplexity_extra({"1": "a b c", "2": "d"}, [(-6.0, 3), (-2.0, 1)])
    assert row1["nll"] == pytest.approx(2.0) and row1["ppl"] == pytest.approx(math.e ** 2)
    # row 2: -1.0 over 4 tokens
    row2 = likelihood.perplexity_extra({"1": "w x y z"}, [(-1.0, 4)])
    records = {"1": _record(row1), "2": _record(row2), "3": _record(None, error={"kind": "timeout"})}
    summary = likelihood.likelihood_summary("ppl", records, ["1", "2", "3"], [None] * 3)
    # overall: every token counts once: (8 + 1) / (4 + 4) = 1.125 (not the mean of the rows' figures)
    assert summary == {"mode": "ppl", "rows": 2, "unscored": 1, "tokens": 8, "nll": pytest.approx(1.125),
                       "ppl": pytest.approx(math.exp(1.125))}
    result = likelihood.perplexity_result(records, ["1", "2", "3"])
    assert result.primary == "ppl" and result.metrics["ppl"] == pytest.approx(math.exp(1.125))
    assert not result.scale.higher_is_better
    assert list(result.per_sample["ppl"]) == pytest.approx([math.e ** 2, math.exp(0.25)])
    assert result.counts == {"total": 3, "scored": 2, "inference_errors": 1}


@pytest.fixture(scope="module")
def tiny() -> Iterator[Any]:
    import torch

    from vlm.local.generic import HFVisionModel

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: threads only contend on a shared machine
    model = HFVisionModel(str(TINY), batch_size=2)
    yield model
    model.close()
    torch.set_num_threads(before)


def _by_hand(model: Any, text: str, words: str) -> tuple[float, int]:
    """(log p(answer | prompt), tokens) from one plain forward pass over the prompt and the answer's tokens."""
    import torch

    vocab = model.processor.tokenizer.get_vocab()
    ids = [i for w in words.split() for i in ([vocab[f"Ġ{w}"]] if f"Ġ{w}" in vocab else [vocab["Ġ"], vocab[w]])]
    conversation = [{"role": "user", "content": [{"type": "text", "text": text}]}]
    inputs = model.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True,
                                                 return_dict=True, return_tensors="pt")
    n = inputs["input_ids"].shape[1]
    inputs["input_ids"] = torch.cat([inputs["input_ids"], torch.tensor([ids])], dim=1)
    inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
    with torch.inference_mode():
        logprobs = model.model(**inputs).logits[0].float().log_softmax(dim=-1)
    return float(sum(logprobs[n - 1 + j, t] for j, t in enumerate(ids))), len(ids)


def test_perplexity_on_vlmkit_tiny_equals_the_forward_pass(tiny: Any) -> None:
    q1, q2 = "Describe the shape.", "Which colour is the sky?"
    tasks = [SimpleNamespace(msgs=[q1], choices=likelihood.row_choices(
                 "caption", {"index": 1, "answer": "['a purple square', 'purple']"})),
             SimpleNamespace(msgs=[q2], choices=likelihood.row_choices("qa", {"index": 2, "answer": "blue"}))]
    out = likelihood.ask_batch(tiny, "ppl", "demo")(tasks)
    hand = [[_by_hand(tiny, q1, "a purple square"), _by_hand(tiny, q1, "purple")], [_by_hand(tiny, q2, "blue")]]
    for generation, figures in zip(out, hand):
        found = generation.extra["likelihood"]
        lp, n = sum(f[0] for f in figures), sum(f[1] for f in figures)
        assert sum(found["tokens"].values()) == n
        assert found["nll"] == pytest.approx(-lp / n, abs=TOL)
        assert float(generation.text) == pytest.approx(math.exp(-lp / n), rel=1e-4)
    records = {"1": _record(out[0].extra["likelihood"]), "2": _record(out[1].extra["likelihood"])}
    every = [f for row in hand for f in row]
    overall = likelihood.perplexity_summary(records, ["1", "2"])
    assert overall["tokens"] == sum(f[1] for f in every)
    assert overall["ppl"] == pytest.approx(math.exp(-sum(f[0] for f in every) / overall["tokens"]), rel=1e-4)
