"""The served letter mode (`--mcq-mode logits` with an API model, issue 28): option letters scored from a chat
completions server's `top_logprobs`.

What is asked: the prompt generation sends (the same messages, so the server's chat template ends it at the answer
position), with `max_tokens: 1, logprobs: true, top_logprobs: 20` (`letter_params`). What is read: the first
generated token's `top_logprobs` (`choices[0].logprobs.content[0].top_logprobs`, the OpenAI shape that vLLM and
SGLang follow), natural-log probabilities over the whole vocabulary as the server computes them.

How a token is read as an option (`token_option`): leading white space (and the "Ġ" / "▁" marks of byte-level BPE
and SentencePiece, where a server prints raw tokens) and then an opening parenthesis are taken off, so " A", "(A" and
" (A" all write option "A"; case is kept ("a" is not "A"; "yes" is not "Yes", as the local path scores "Yes" alone).
Where several listed tokens write the same option ("A" and " A") their probabilities are added (log-sum-exp): the
figure is the probability that the answer starts with that option, however the tokeniser spells it.

A letter missing from the top list gets -inf (`LetterLogprobs.logprobs`) and is named in `missing`; `floor`, the
lowest figure listed, bounds what it could be. Only the top `top_logprobs` are given (OpenAI allows at most 20),
so a letter's figure is exact when listed and unknown otherwise. A reply where no option is listed is a failed row
(`no_option_listed`): choosing among options that all score -inf would be a guess.

A server that gives no log-probabilities (the `logprobs` field absent or null, as `transformers serve` 5.x answers,
which ignores the field; or an HTTP 400 whose message names logprobs) fails with kind `no_logprobs`: the run asks it
on its first row and stops in one line (vlmkit.run.likelihood.run_served).

The reply's `logprobs` reach this module through the model's `generate_full` (vlm.api.openai_compat keeps the first
choice's non-null `logprobs` in `Generation.extra["logprobs"]`).

Measured: against vLLM 0.32's OpenAI server (CPU) on vlmkit-tiny, the 24 first demo MCQ rows scored on their options'
words (vlmkit-tiny answers in words: " purple" is one token), every listed figure equals the local transformers path's
`option_logprobs` to 5e-6 and every row's argmax is the same; 3 of 96 options were outside the top 20.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from vlmkit.core.model_calls import Generation, ModelCallError, Usage

TOP_LOGPROBS = 20  # the most OpenAI's chat completions allow; vLLM's default --max-logprobs is 20 too
NO_LOGPROBS = "no_logprobs"
NO_OPTION_LISTED = "no_option_listed"
_MARKS = "\u0120\u2581"  # Ġ (byte-level BPE's space) and ▁ (SentencePiece's), where a server prints raw tokens


def letter_params(top: int = TOP_LOGPROBS) -> dict[str, Any]:
    """The request fields of the letter mode: one token, with its `top` most likely alternatives."""
    return {"max_tokens": 1, "logprobs": True, "top_logprobs": int(top)}


def token_option(token: str) -> str:
    """The option a token writes: leading white space and BPE/SentencePiece space marks, then one opening
    parenthesis (and white space after it), taken off. `" (B"` -> `"B"`; case is kept."""
    text = token.lstrip().lstrip(_MARKS).lstrip()
    if text.startswith("("):
        text = text[1:].lstrip()
    return text


@dataclass(frozen=True)
class LetterLogprobs:
    """One row's figures: each option's log-probability (-inf where the top list does not name it), the options
    missing from the list, the lowest figure listed (an upper bound for a missing one), and the token written."""

    logprobs: dict[str, float]
    missing: tuple[str, ...]
    floor: float | None
    first_token: str | None
    listed: int  # how many alternatives the server listed
    usage: Usage | None = None  # the request's token usage, as the server counted it
    latency_ms: float | None = None


def refuses_logprobs(exc: BaseException) -> bool:
    """True for a server's HTTP 400 (or 422) whose message names logprobs: it takes no logprobs request."""
    return (isinstance(exc, ModelCallError) and exc.status in (400, 422)
            and "logprob" in str(exc).casefold())


def no_logprobs_error(why: str) -> ModelCallError:
    """The `no_logprobs` error, in one line saying what to do."""
    return ModelCallError(NO_LOGPROBS, f"the server gives no log-probabilities ({why}); --mcq-mode logits on a served "
                                       "model needs a server that returns top_logprobs (vLLM, SGLang, OpenAI): use "
                                       "--mcq-mode generate, or run the model locally")


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if not math.isnan(value) and value <= 0.0 + 1e-6 else None


def read_letter_logprobs(field: Any, letters: Sequence[str]) -> LetterLogprobs:
    """The options' figures from a choice's `logprobs` field (module docstring).

    ModelCallError `no_logprobs` when the field holds no token with top_logprobs; `no_option_listed` when none of the
    letters is among them."""
    if not letters:
        raise ValueError("no options to score")
    content = field.get("content") if isinstance(field, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        raise no_logprobs_error("the reply's logprobs.content names no token")
    first = content[0]
    top = first.get("top_logprobs")
    if not isinstance(top, list) or not top:
        raise no_logprobs_error("the first token has no top_logprobs")
    seen: dict[str, float] = {}  # raw token -> figure: the written token is usually listed among the top too
    listed: list[float] = []
    for entry in [*top, first]:
        token = entry.get("token") if isinstance(entry, dict) else None
        value = _number(entry.get("logprob")) if isinstance(entry, dict) else None
        if isinstance(token, str) and value is not None:
            if entry is not first:
                listed.append(value)
            seen.setdefault(token, value)
    if not listed:
        raise no_logprobs_error("no top_logprobs entry has a token and a figure")
    by_option: dict[str, list[float]] = {}
    for token, value in seen.items():
        by_option.setdefault(token_option(token), []).append(value)
    logprobs = {letter: _logsumexp(by_option[letter]) if letter in by_option else -math.inf for letter in letters}
    missing = tuple(letter for letter in letters if letter not in by_option)
    if len(missing) == len(logprobs):
        written = first.get("token")
        raise ModelCallError(NO_OPTION_LISTED, f"none of the options {', '.join(letters)} is among the server's "
                                               f"{len(listed)} most likely first tokens (it wrote {written!r})")
    token = first.get("token")
    return LetterLogprobs(logprobs, missing, min(listed), token if isinstance(token, str) else None, len(listed))


def ask_letters(model: Any, msgs: Sequence[Any], letters: Sequence[str], dataset: str | None = None,
                top: int = TOP_LOGPROBS) -> LetterLogprobs:
    """Ask a served model (anything with `generate_full(msgs, dataset, params) -> Generation`, as
    vlm.api.openai_compat.OpenAICompatModel) for one row's first token and read the letters' figures."""
    try:
        generation: Generation = model.generate_full(msgs, dataset, letter_params(top))
    except ModelCallError as exc:
        if refuses_logprobs(exc):
            raise no_logprobs_error(f"HTTP {exc.status}: {exc}") from None
        raise
    field = (generation.extra or {}).get("logprobs")
    if field is None:
        raise no_logprobs_error("the reply has no logprobs field, or it is null")
    return replace(read_letter_logprobs(field, letters), usage=generation.usage, latency_ms=generation.latency_ms)


def ask_letters_batch(model: Any, batch: Sequence[Sequence[Any]], letters_per_row: Sequence[Sequence[str]],
                      dataset: str | None = None, workers: int = 4, top: int = TOP_LOGPROBS,
                      ) -> list[LetterLogprobs | BaseException]:
    """`ask_letters` for each row, `workers` requests at once (the model's client is shared by threads); a row that
    fails gets its exception, in the rows' order."""
    if len(batch) != len(letters_per_row):
        raise ValueError(f"{len(batch)} messages but {len(letters_per_row)} lists of letters")

    def one(item: tuple[Sequence[Any], Sequence[str]]) -> LetterLogprobs | BaseException:
        try:
            return ask_letters(model, item[0], item[1], dataset, top)
        except Exception as exc:  # a row fails alone
            return exc

    rows = list(zip(batch, letters_per_row))
    if workers <= 1 or len(rows) <= 1:
        return [one(row) for row in rows]
    with ThreadPoolExecutor(min(workers, len(rows)), thread_name_prefix="vlmkit-letters") as pool:
        return list(pool.map(one, rows))
