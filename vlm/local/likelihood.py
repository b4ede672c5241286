"""Likelihood scoring on a local transformers model: which answer the model finds most probable (issue 28).

Two modes, both on the prompt that generation uses (the chat template with the generation prompt, images and all):
- letter mode (`option_logprobs`): the log-probability of each option letter ("A", "B", ... or "Yes"/"No") as the
  first answer token. The prompt goes through the model's own `generate` for one step (`prompt_pass`), so the
  distribution is exactly the one greedy generation picks its first token from: the same positions (left padding,
  Qwen's 3-D positions), the same image encoding, one forward pass per padded batch of rows.
- continuation mode (`continuation_scores`): the summed log-probability and the token count of each continuation
  (e.g. each option's text) written after the prompt. The prompt, images included, runs once and scores every
  first token; the longer continuations then run together in one more pass on its key/value cache. The caller
  length-normalises: `length_normalised` divides by the continuation's characters, as lm-evaluation-harness's
  acc_norm does (characters, not tokens, so that tokenisers compare fairly).

Figures are natural-log probabilities over the whole vocabulary (never renormalised over the options, never a
loss): higher is likelier, so the chosen option is the argmax (lmms-eval #370 picked the worst option by taking
a loss for a log-probability).

How an answer is tokenised (`answer_token_ids`): as generation would write it at the answer position, which
matters where "A" and " A" are different tokens. The separator (`answer_separator`) is "" when the prompt ends in
whitespace (Qwen's "<|im_start|>assistant\\n", Gemma's "model\\n": the model writes "A") and one space otherwise
(LLaVA-1.5's "ASSISTANT:", SmolVLM's "Assistant:": the model writes " A", SentencePiece's "▁A"); an answer that
already begins with whitespace is taken as it is. The answer is tokenised in place: the rendered prompt text, the
separator and the answer, the tokens after the prompt's own taken as the answer's. Tokenisers that split text at
newlines and spaces before merging (Qwen's, Llama 3's, GPT-2-style BPE) keep the prompt's tokens, and this is what
their models generate. Where appending the answer re-splits the prompt's own last tokens (a byte-level tokeniser
with add_prefix_space, as vlmkit-tiny's, ends its prompt with "ĠĊ" but tokenises "\\nred" as "Ġ" "Ċ" "re" "d"),
the model never saw the answer continue the prompt that way: the answer is then tokenised on its own (separator
and answer), the way fine-tuning code appends answer tokens to the prompt's, and what such a model generates
(vlmkit-tiny writes "Ġred" after its prompt).

In the letter mode each option is scored by the log-probability of its answer tokens. Where every option is one
token (letters and Yes/No are, for the usual tokenisers) the prompt's one pass gives them all, and rows are batched;
a row with an option of several tokens (a tokeniser that writes " B" as "Ġ" "B", or "Yes" as "Y" "es") is scored
as continuations (`continuation_scores`), so the figure is still the probability of writing that option, never
that of a first token the options share.

torch is imported inside the functions: importing this module is cheap.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any


def answer_separator(prompt_text: str) -> str:
    """What goes between the prompt and an answer: "" after whitespace (or an empty prompt), else one space."""
    return "" if not prompt_text or prompt_text[-1].isspace() else " "


def answer_token_ids(tokenizer: Any, prompt_text: str, answer: str) -> list[int]:
    """The token ids an answer has when the model writes it right after the prompt (module docstring).

    prompt_text: the rendered chat template with its generation prompt (image placeholders unexpanded: only its end
    matters). Raises ValueError for an empty answer or one that gives no token."""
    if not answer:
        raise ValueError("an empty answer has no tokens to score")
    joined = answer if answer[:1].isspace() else answer_separator(prompt_text) + answer
    prompt_ids = _ids(tokenizer, prompt_text)
    whole = _ids(tokenizer, prompt_text + joined)
    found = whole[len(prompt_ids) :] if whole[: len(prompt_ids)] == prompt_ids else _ids(tokenizer, joined)
    if not found:
        raise ValueError(f"the answer {answer!r} gives no token after the prompt")
    return found


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def option_token_ids(tokenizer: Any, prompt_text: str, letters: Sequence[str]) -> dict[str, list[int]]:
    """Each letter's answer tokens (`answer_token_ids`). Raises ValueError for no letters or a repeated letter."""
    if not letters:
        raise ValueError("no options to score")
    if len(set(letters)) != len(letters):
        raise ValueError(f"options repeat: {list(letters)}")
    return {letter: answer_token_ids(tokenizer, prompt_text, letter) for letter in letters}


def one_pass(tokens: Mapping[str, Sequence[int]]) -> bool:
    """True when every option is one token: the prompt's one pass scores them all (the letter mode's usual case)."""
    return all(len(ids) == 1 for ids in tokens.values())


def prompt_pass(model: Any, inputs: Mapping[str, Any], pad_id: int | None, keep_cache: bool = False) -> tuple[Any, Any]:
    """(log-probabilities of the next token, shape [rows, vocab], float32; the prompt's key/value cache or None).

    One step of the model's own `generate` on a (left-padded) batch from the processor: one forward pass, positions
    and image features exactly as generation has them. The raw logits are taken (no logits processor applies)."""
    import torch

    with torch.inference_mode():
        out = model.generate(
            **inputs, max_new_tokens=1, do_sample=False, pad_token_id=pad_id, output_logits=True,
            return_dict_in_generate=True, use_cache=keep_cache,
        )
    logprobs = out.logits[0].float().log_softmax(dim=-1)
    return logprobs, (_cache_of(out) if keep_cache else None)


def continuation_scores(
    model: Any, inputs: Mapping[str, Any], continuations: Sequence[Sequence[int]], pad_id: int | None
) -> list[tuple[float, int]]:
    """(summed log-probability, token count) of each continuation's token ids after one prompt.

    inputs: the processor's tensors for one prompt (one row, no padding). The prompt runs once (`prompt_pass`),
    which scores every continuation's first token; the continuations of more than one token then run together in
    one pass on the prompt's cache, repeated once per continuation, each right-padded (padding after a token
    cannot change what the causal model says at that token, so no mask is needed)."""
    import torch

    if inputs["input_ids"].shape[0] != 1:
        raise ValueError("continuation_scores takes one prompt")
    if any(len(ids) == 0 for ids in continuations):
        raise ValueError("a continuation has no tokens")
    first, cache = prompt_pass(model, inputs, pad_id, keep_cache=True)
    prompt_len = int(inputs["input_ids"].shape[1])
    if cache is None or cache.get_seq_length() != prompt_len:
        raise RuntimeError(f"{type(model).__name__}: generate kept no cache of the prompt's {prompt_len} tokens")
    totals = [float(first[0, ids[0]]) for ids in continuations]
    longer = [i for i, ids in enumerate(continuations) if len(ids) > 1]
    if longer:
        width = max(len(continuations[i]) - 1 for i in longer)
        filler = 0 if pad_id is None else int(pad_id)
        fed = torch.tensor(
            [[*continuations[i][:-1], *[filler] * (width + 1 - len(continuations[i]))] for i in longer],
            dtype=torch.long, device=inputs["input_ids"].device,
        )
        if len(longer) > 1:
            cache.batch_repeat_interleave(len(longer))
        with torch.inference_mode():
            out = model(input_ids=fed, use_cache=True, **{_cache_keyword(model): cache})
        logprobs = out.logits.float().log_softmax(dim=-1)
        for row, i in enumerate(longer):
            wanted = torch.tensor(list(continuations[i][1:]), dtype=torch.long, device=logprobs.device)
            totals[i] += float(logprobs[row, : len(wanted)].gather(-1, wanted[:, None]).sum())
    return [(total, len(ids)) for total, ids in zip(totals, continuations)]


def length_normalised(logprob: float, continuation: str) -> float:
    """acc_norm's figure: the summed log-probability divided by the continuation's length in characters (as
    lm-evaluation-harness normalises; an empty continuation is refused)."""
    if not continuation:
        raise ValueError("an empty continuation has no length to normalise by")
    return logprob / len(continuation)


def _cache_of(output: Any) -> Any:
    """The key/value cache a generate or forward output holds (`cache` in transformers 5, `past_key_values` before)."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else getattr(output, "past_key_values", None)


def _cache_keyword(model: Any) -> str:
    """The forward argument that takes a cache: `cache` in transformers 5, `past_key_values` before."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
