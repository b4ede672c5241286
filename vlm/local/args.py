"""Argument checks shared by the local engines: transformers (`vlm.local.generic`) and vLLM (`vlm.local.vllm_engine`)."""

from __future__ import annotations

DTYPES = ("auto", "bfloat16", "float16", "float32")


def check_local_args(dtype: str, batch_size: int, max_new_tokens: int | None) -> None:
    """ValueError (one line) for a dtype not in DTYPES, a batch_size under 1, or a max_new_tokens under 1."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1; got {batch_size}")
    if max_new_tokens is not None and max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1; got {max_new_tokens}")
