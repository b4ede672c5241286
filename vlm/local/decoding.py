"""What a local model's `generate` is asked to do, and what the checkpoint's `generation_config.json` may add.

Greedy means greedy. transformers' `generate` fills every setting a call leaves unset from the checkpoint's
`generation_config.json`, so a "greedy" call on Qwen2.5-VL-7B-Instruct (repetition_penalty 1.05, top_k 1, ...) is
not plain greedy decoding. The kit decides instead (the decision for issue 10):
- Decoding is the kit's settings and the user's: temperature 0 is greedy (do_sample False); temperature > 0 is plain
  temperature sampling (top_k 0 and top_p 1.0 unless the user sets them: what an OpenAI-compatible server does when
  asked only for a temperature, not transformers' own top_k 50). Anything else (repetition_penalty, top_p, ...)
  applies only when the user passes it (model arguments or a row's parameters).
- Overridden from the checkpoint: every standard generation setting not kept below: sampling, penalty, beam, length
  and output knobs (do_sample, temperature, top_p, top_k, min_p, repetition_penalty, no_repeat_ngram_size,
  num_beams, suppress_tokens, max_length, return_dict_in_generate, ...). They are removed from the loaded model's
  generation config, so transformers' neutral defaults apply.
- Kept from the checkpoint: the token ids that say where an answer ends and how it is padded (eos_token_id,
  bos_token_id, decoder_start_token_id), how the cache runs (use_cache, cache_implementation, cache_config: speed,
  not tokens), and entries that are not standard settings (model-specific plumbing). Generation also stops at the
  tokenizer's eos token when the checkpoint does not list it (vLLM stops at both). The pad id written after a
  finished row is the tokenizer's (the one the prompts are left-padded with).
- max_new_tokens: the user's value; when the user gives none, the checkpoint's own `max_new_tokens` (the author's
  answer budget, which transformers and vLLM both use as the default), else `DEFAULT_MAX_NEW_TOKENS`. A checkpoint's
  `max_length` (usually the context length, or transformers' legacy 20) is never used as an answer budget.
`settings()["generation"]` records the settings passed to generate and the checkpoint values kept and overridden
(`generation_record`). A checkpoint value the kit also sets explicitly counts as kept when the two agree, overridden
otherwise.

`generate_options` turns the model's settings and a row's parameters into generate() arguments by this policy;
`answers` reads the generated token ids back as texts and usage, the way servers report them.
"""

from __future__ import annotations

from typing import Any

from vlmkit.core.model_calls import Generation, UnsupportedInputError, Usage

DEFAULT_MAX_NEW_TOKENS = 512
KEPT_KEYS = frozenset(
    {"eos_token_id", "bos_token_id", "decoder_start_token_id", "use_cache", "cache_implementation", "cache_config"}
)
_NOT_SETTINGS = frozenset({"transformers_version", "_from_model_config"})


def checkpoint_values(generation_config: Any) -> dict[str, Any]:
    """The settings a loaded model's generation config holds (what its generation_config.json, or its config, set)."""
    if generation_config is None:
        return {}
    values = generation_config.to_diff_dict()
    return {k: v for k, v in values.items() if k not in _NOT_SETTINGS and v is not None}


def _standard_keys() -> frozenset[str]:
    from transformers import GenerationConfig

    return frozenset(GenerationConfig().to_dict())


def kept_config(kept: dict[str, Any]) -> Any:
    """The generation config left on the loaded model: only the checkpoint values kept (`split_checkpoint`)."""
    from transformers import GenerationConfig

    return GenerationConfig(**kept)


def _neutral_defaults() -> dict[str, Any]:
    """transformers' values for settings a call leaves unset (do_sample False, top_p 1.0, repetition_penalty 1.0)."""
    from transformers import GenerationConfig

    try:
        return dict(GenerationConfig()._get_default_generation_params())
    except AttributeError:  # a transformers without it: fewer values count as neutral, none is lost
        return {}


def stop_token_ids(checkpoint_eos: Any, tokenizer_eos: int | None) -> Any:
    """The eos ids to pass: the checkpoint's, plus the tokenizer's when the checkpoint does not list it."""
    if checkpoint_eos is None:
        listed: list[int] = []
    else:
        listed = [checkpoint_eos] if isinstance(checkpoint_eos, int) else list(checkpoint_eos)
    if tokenizer_eos is None or tokenizer_eos in listed:
        return checkpoint_eos if listed else None
    return [*listed, int(tokenizer_eos)]


def _is_neutral(key: str, value: Any, defaults: dict[str, Any]) -> bool:
    """True when the value is what transformers does with the setting unset (output_attentions False, top_p 1.0)."""
    return value == defaults[key] if key in defaults else value is False


def split_checkpoint(values: dict[str, Any], passed: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(kept, overridden): the checkpoint's settings sorted by the policy of the module docstring.

    passed: what the kit passes to generate itself; a checkpoint value equal to it is kept, a different one
    overridden. A value that changes nothing (transformers' own default) counts as kept."""
    standard = _standard_keys()
    defaults = _neutral_defaults()
    kept: dict[str, Any] = {}
    overridden: dict[str, Any] = {}
    for key, value in sorted(values.items()):
        if key in passed:
            (kept if passed[key] == value else overridden)[key] = value
        elif key in KEPT_KEYS or key not in standard or _is_neutral(key, value, defaults):
            kept[key] = value
        else:
            overridden[key] = value
    return kept, overridden


def recordable(options: dict[str, Any]) -> dict[str, Any]:
    """Settings as JSON-able values for results.json (the tokenizer passed along with stop strings left out)."""
    out: dict[str, Any] = {}
    for key, value in sorted(options.items()):
        if key == "tokenizer":
            continue
        out[key] = value if isinstance(value, (str, int, float, bool, list, dict, type(None))) else repr(value)
    return out


def cut_at_stop(text: str, stops: list[str]) -> int | None:
    """Where the first stop string starts in `text`, None when there is none."""
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(found) if found else None


def tokens_through_stop(decode: Any, ids: list[int], stops: list[str]) -> int:
    """How many of `ids` it takes for their text to hold a stop string (the token that completes it counted).

    `decode(ids) -> str`; the text of a longer prefix holds whatever a shorter one does, so a binary search finds
    the first prefix; len(ids) when no prefix holds one."""
    low, high = 1, len(ids)
    if cut_at_stop(decode(ids), stops) is None:
        return len(ids)
    while low < high:
        middle = (low + high) // 2
        if cut_at_stop(decode(ids[:middle]), stops) is None:
            low = middle + 1
        else:
            high = middle
    return low


def generate_options(
    params: dict[str, Any] | None,
    *,
    max_new_tokens: int,
    temperature: float,
    pad_id: int | None,
    eos: Any,
    generate_kwargs: dict[str, Any],
    tokenizer: Any,
    where: str,
) -> dict[str, Any]:
    """transformers generate() arguments: the model's settings, then per-request params mapped onto them.

    eos: `stop_token_ids(...)` (None: none passed); tokenizer: passed along with stop strings; where: names the model
    in the error for a parameter generate cannot apply."""
    params = dict(params or {})
    unsupported = sorted({"presence_penalty", "frequency_penalty"} & set(params))
    if unsupported:
        raise UnsupportedInputError(f"{where}: transformers generate has no {', '.join(unsupported)}")
    max_new = int(params.pop("max_tokens", max_new_tokens))
    temperature = float(params.pop("temperature", temperature))
    options: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": pad_id}
    if eos is not None:
        options["eos_token_id"] = eos
    if temperature > 0:  # plain temperature sampling, as servers do (not transformers' default top_k 50)
        options.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
    else:
        options.update(do_sample=False)
    options.update(generate_kwargs)
    if params.pop("ignore_eos", False):
        options["min_new_tokens"] = max_new
    stop = params.pop("stop", None)
    if stop:
        options.update(stop_strings=[stop] if isinstance(stop, str) else list(stop), tokenizer=tokenizer)
    if temperature > 0:
        options.update({k: params.pop(k) for k in ("top_p", "top_k") if k in params})
    else:
        params.pop("top_p", None), params.pop("top_k", None)  # meaningless under greedy decoding
    options.update(params)  # seed, repetition_penalty
    return options


def generation_record(
    options: dict[str, Any], kept: dict[str, Any], overridden: dict[str, Any], max_new_tokens_source: str
) -> dict[str, Any]:
    """What generate is asked for (the model's own settings; a row's parameters may override them for that row):
    `passed` (the generate() arguments, with the checkpoint values kept on the model's generation config),
    `max_new_tokens_source` (user, preset, checkpoint or default: `vlm.local.answer_budget.SOURCES`), and the checkpoint's settings `checkpoint_kept` and
    `checkpoint_overridden` (name -> the checkpoint's value; transformers' neutral default applies to an
    overridden one the kit does not pass).

    options: `generate_options(None, ...)`; kept, overridden: `split_checkpoint(...)`."""
    passed = recordable({**kept, **options})
    return {
        "passed": dict(sorted(passed.items())),
        "max_new_tokens_source": max_new_tokens_source,
        "checkpoint_kept": recordable(kept),
        "checkpoint_overridden": recordable(overridden),
    }


def answers(
    tokenizer: Any, rows: list[list[int]], input_tokens: list[int], options: dict[str, Any]
) -> list[Generation]:
    """Each row's text and usage from the new token ids of a padded batch (`options`: the generate() arguments,
    whose eos ids and stop strings end the answers; input_tokens: each row's prompt tokens, padding not counted)."""
    eos_ids = _as_id_set(options.get("eos_token_id"))
    stops = list(options.get("stop_strings") or [])
    budget = options.get("max_new_tokens")
    return [_answer(tokenizer, row, int(n_in), eos_ids, stops, budget) for n_in, row in zip(input_tokens, rows)]


def _answer(tokenizer: Any, row: list[int], input_tokens: int, eos_ids: set[int], stops: list[str],
            budget: int | None = None) -> Generation:
    """One row's text and usage: up to the first eos token, and cut before the first stop string (the token
    that completed it is the last one counted), as OpenAI-compatible servers do; batch padding never counts.
    extra `finish_reason`, as a server says it: "length" when the row used the whole budget (max_new_tokens) with no
    end token and no stop string, else "stop"."""

    def decode(ids: list[int]) -> str:
        return tokenizer.decode(ids, skip_special_tokens=True)

    ids = row[: _count_new_tokens(row, eos_ids)]
    ended = len(ids) < len(row) or (bool(ids) and ids[-1] in eos_ids)
    text = decode(ids)
    cut = cut_at_stop(text, stops) if stops else None
    if cut is not None:
        ids = ids[: tokens_through_stop(decode, ids, stops)]
        text = text[:cut]
    finish = "length" if cut is None and not ended and budget is not None and len(row) >= budget else "stop"
    return Generation(text=text.strip(), usage=Usage(input_tokens=input_tokens, output_tokens=len(ids)),
                      extra={"finish_reason": finish})


def _as_id_set(value: Any) -> set[int]:
    if value is None:
        return set()
    return {int(value)} if isinstance(value, int) else {int(v) for v in value}


def _count_new_tokens(row: list[int], eos_ids: set[int]) -> int:
    """Generated tokens up to and including the first end-of-sequence token (the rest is padding)."""
    for position, token in enumerate(row):
        if token in eos_ids:
            return position + 1
    return len(row)
