"""How many new tokens a local model may write per answer, whichever engine runs it (transformers or vLLM).

The policy (`vlm.local.decoding` explains why): the user's value (`--max-tokens`, or max_new_tokens passed to the
model), else the VLMEvalKit preset's, else the checkpoint's own `max_new_tokens` (its generation_config.json), else
`vlm.local.decoding.DEFAULT_MAX_NEW_TOKENS`. A checkpoint's `max_length` is never an answer budget.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlm.local import decoding

SOURCES = ("user", "preset", "checkpoint", "default")


def answer_budget(user: int | None, preset: int | None, checkpoint: dict[str, Any]) -> tuple[int, str]:
    """(max new tokens, where it came from: one of SOURCES). checkpoint: `decoding.checkpoint_values(...)`."""
    if user is not None:
        return int(user), "user"
    if preset is not None:
        return int(preset), "preset"
    value = checkpoint.get("max_new_tokens")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value, "checkpoint"
    return decoding.DEFAULT_MAX_NEW_TOKENS, "default"


def folder_checkpoint_values(model_dir: str | Path) -> dict[str, Any]:
    """The settings of a model folder's generation_config.json (what `decoding.checkpoint_values` reads from a
    loaded model), read without loading the model; {} when the folder has none."""
    if not (Path(model_dir) / "generation_config.json").is_file():
        return {}
    from transformers import GenerationConfig

    return decoding.checkpoint_values(GenerationConfig.from_pretrained(str(model_dir), local_files_only=True))
