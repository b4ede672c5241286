"""Likelihood scoring on vLLM's offline engine (`--backend vllm --mcq-mode logits|continuation`, issue 28).

The same figures as the transformers path (vlm.local.likelihood): natural-log probabilities over the whole vocabulary
(vLLM's default `logprobs_mode`, raw_logprobs), of each answer written right after the prompt generation uses, with
each answer tokenised by the same rule (`answer_token_ids`, on the end of the prompt vLLM rendered).

How it is asked:
1. The prompt pass (`prompt_pass`): every row's messages through `LLM.chat` (the model's own conversion and chat
   template, as generation) with `SamplingParams(max_tokens=1, temperature=0, logprobs=20)`: the prompt's token ids
   as vLLM built them (image placeholders expanded) and the first token's 20 likeliest alternatives.
2. Letter mode: an option of one token that is among those 20 takes its figure from there. Options of two tokens
   whose first is among them (vlmkit-tiny writes " B" as "Ġ" "B") take one more step (`step_pass`): the prompt and
   that first token as a token prompt, its next token's 20 likeliest alternatives; one step per row and first token,
   whatever the number of options sharing it. Any other option (one outside a top 20, or longer) and every
   continuation is scored on a token prompt, the prompt's ids followed by the answer's, with `prompt_logprobs`
   (`score_appended`): the sum of the answer tokens' log-probabilities as the prompt's own tokens. All of a batch's
   token prompts go in one `LLM.generate` call (vLLM's prefix caching, where on, reuses the shared prompt).
Token prompts with images: vLLM's processor expands each image placeholder again, so the prompt's ids are sent with
each image's run of placeholder tokens collapsed to one (as the chat template wrote it: `collapsed`) and the row's images
decoded from the messages' data URLs. The ids vLLM then builds are checked against the prompt pass's; a model whose
placeholders do not expand that way (its processor adds other tokens around them) fails the row in one line rather
than scoring another prompt.

vllm is imported by the caller (vlm.local.vllm_engine): this module only uses the engine it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vlm.local.likelihood import answer_token_ids
from vlmkit.core.media import b64_to_image, to_rgb

TOP_LOGPROBS = 20  # vLLM's default max_logprobs
PROMPT_TAIL = 48  # tokens of the prompt decoded to tokenise an answer in place (only the prompt's end matters)


@dataclass
class Prompt:
    """One row's prompt as vLLM built it: its token ids (placeholders expanded), the first token's top alternatives
    (token id -> log-probability), the images it holds, and the per-call processor settings."""

    ids: list[int]
    top: dict[int, float]
    images: list[Any]
    mm_kwargs: dict[str, Any] | None


def prompt_pass(engine: Any, sampling: Any, conversations: list[list[dict[str, Any]]],
                mm_kwargs: dict[str, Any] | None, template_flags: dict[str, Any]) -> list[Prompt]:
    """Step 1 for every conversation (OpenAI messages) in one `LLM.chat` call (`sampling`: SamplingParams with
    max_tokens=1, temperature=0, logprobs=TOP_LOGPROBS)."""
    outputs = engine.chat(conversations, [sampling] * len(conversations), use_tqdm=False,
                          mm_processor_kwargs=mm_kwargs or None, **template_flags)
    if len(outputs) != len(conversations):
        raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(conversations)} conversations")
    prompts = []
    for conversation, output in zip(conversations, outputs):
        steps = output.outputs[0].logprobs or []
        top = {int(k): float(v.logprob) for k, v in steps[0].items()} if steps else {}
        prompts.append(Prompt(list(output.prompt_token_ids), top, _images(conversation), mm_kwargs))
    return prompts


def _images(conversation: list[dict[str, Any]]) -> list[Any]:
    """The images of OpenAI messages, in order, decoded from their data URLs (as vLLM's loader reads them: RGB)."""
    found = []
    for message in conversation:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                if not url.startswith("data:"):
                    raise ValueError("likelihood scoring on vLLM takes images as data URLs (local files), not URLs")
                found.append(to_rgb(b64_to_image(url)))
            elif isinstance(part, dict) and part.get("type") not in ("text", None):
                raise ValueError(f"likelihood scoring on vLLM takes text and images; this row has {part.get('type')}")
    return found


def prompt_text(tokenizer: Any, prompt: Prompt) -> str:
    """The end of the prompt as text: what an answer is tokenised after (`answer_token_ids`)."""
    return tokenizer.decode(prompt.ids[-PROMPT_TAIL:], skip_special_tokens=False)


def answer_ids(tokenizer: Any, prompt: Prompt, answers: Sequence[str]) -> list[list[int]]:
    text = prompt_text(tokenizer, prompt)
    return [answer_token_ids(tokenizer, text, answer) for answer in answers]


def collapsed(ids: Sequence[int], image_token: int | None, images: int = 1) -> list[int]:
    """The ids with the image placeholder tokens put back as the chat template wrote them (one per image), which the
    processor expands again. A run of placeholders is one image, or several adjacent ones where every image takes the
    same number of tokens (LLaVA's fixed resolution: the run's length over that number)."""
    if image_token is None:
        return list(ids)
    total = sum(1 for token in ids if token == image_token)
    per_image = total // images if images and total % images == 0 else 0
    out: list[int] = []
    run = 0
    for token in [*ids, None]:
        if token == image_token:
            run += 1
            continue
        if run:
            out += [image_token] * (run // per_image if per_image and run % per_image == 0 else 1)
            run = 0
        if token is not None:
            out.append(token)
    return out


def _token_requests(items: list[tuple[Prompt, list[int]]], image_token: int | None) -> list[dict[str, Any]]:
    """`LLM.generate` token prompts: each prompt's ids (placeholders collapsed) followed by the item's ids."""
    requests = []
    for prompt, ids in items:
        placeholders = collapsed(prompt.ids, image_token if prompt.images else None, len(prompt.images))
        request: dict[str, Any] = {"prompt_token_ids": placeholders + list(ids)}
        if prompt.images:
            request["multi_modal_data"] = {"image": prompt.images if len(prompt.images) > 1 else prompt.images[0]}
            if prompt.mm_kwargs:
                request["mm_processor_kwargs"] = dict(prompt.mm_kwargs)
        requests.append(request)
    return requests


def _rebuilt_differently(built: Sequence[int], prompt: Prompt, ids: Sequence[int]) -> ValueError | None:
    if list(built) == prompt.ids + list(ids):
        return None
    return ValueError(
        f"vLLM rebuilt this row's prompt as {len(built)} tokens, not the {len(prompt.ids)} + {len(ids)} of its prompt and "
        "answer: this model's image placeholders do not expand as a token prompt's (use the transformers backend for "
        "likelihood scoring)")


def step_pass(engine: Any, sampling: Any, items: list[tuple[Prompt, list[int]]],
              image_token: int | None) -> list[dict[int, float] | BaseException]:
    """The next token's top alternatives (token id -> log-probability) after each item's prompt and ids, from one
    `LLM.generate` call on token prompts (`sampling`: max_tokens=1, temperature=0, logprobs=TOP_LOGPROBS)."""
    if not items:
        return []
    outputs = engine.generate(_token_requests(items, image_token), [sampling] * len(items), use_tqdm=False)
    results: list[dict[int, float] | BaseException] = []
    for (prompt, ids), output in zip(items, outputs):
        wrong = _rebuilt_differently(output.prompt_token_ids, prompt, ids)
        steps = output.outputs[0].logprobs or []
        results.append(wrong or ({int(k): float(v.logprob) for k, v in steps[0].items()} if steps else {}))
    return results


def score_appended(engine: Any, sampling: Any, items: list[tuple[Prompt, list[int]]],
                   image_token: int | None) -> list[float | BaseException]:
    """Step 2: the summed log-probability of each item's answer ids after its prompt, from one `LLM.generate` call
    on token prompts (`sampling`: max_tokens=1, prompt_logprobs >= 0). A row whose rebuilt prompt differs from the
    prompt pass's gets a ValueError."""
    if not items:
        return []
    outputs = engine.generate(_token_requests(items, image_token), [sampling] * len(items), use_tqdm=False)
    results: list[float | BaseException] = []
    for (prompt, ids), output in zip(items, outputs):
        wrong = _rebuilt_differently(output.prompt_token_ids, prompt, ids)
        if wrong is not None:
            results.append(wrong)
            continue
        steps = output.prompt_logprobs[len(prompt.ids):]
        results.append(float(sum(step[token].logprob for step, token in zip(steps, ids))))
    return results


def letter_figures(prompt: Prompt, tokens: dict[str, list[int]]) -> tuple[dict[str, float], list[str]]:
    """(the options whose figure the prompt pass gave: one token, among the top alternatives; the options left to
    score on a token prompt)."""
    found: dict[str, float] = {}
    left: list[str] = []
    for letter, ids in tokens.items():
        if len(ids) == 1 and ids[0] in prompt.top:
            found[letter] = prompt.top[ids[0]]
        else:
            left.append(letter)
    return found, left


def first_token_steps(prompt: Prompt, tokens: dict[str, list[int]], left: Sequence[str]) -> dict[int, list[str]]:
    """The options of two tokens among `left` whose first token the prompt pass listed, by that first token: each
    group takes one `step_pass` (the second token's figure read from its top alternatives)."""
    groups: dict[int, list[str]] = {}
    for letter in left:
        ids = tokens[letter]
        if len(ids) == 2 and ids[0] in prompt.top:
            groups.setdefault(ids[0], []).append(letter)
    return groups
