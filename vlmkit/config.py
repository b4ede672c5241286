"""The one place that reads environment variables.

Every other module takes these values as arguments; callers (the CLI, the runner, a model's constructor when
the user passed nothing) ask here. Nothing is read at import time.
"""

from __future__ import annotations

import os
from pathlib import Path


def lmu_data_root() -> Path:
    """Where benchmark TSVs live: `$LMUData`, default `~/LMUData`."""
    value = os.environ.get("LMUData")
    return Path(value).expanduser() if value else Path.home() / "LMUData"


def openai_api_key() -> str | None:
    """The API key from the usual variable. Never log or write the returned value."""
    return os.environ.get("OPENAI_API_KEY") or None


def openai_api_base() -> str | None:
    """The service base URL from the usual variables (`OPENAI_API_BASE`, `OPENAI_BASE_URL`)."""
    return os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL") or None


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache that `from_pretrained` reads (`HF_HUB_CACHE`, `HF_HOME/hub`, default)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def dist_rank_world() -> tuple[int, int]:
    """(rank, world size) under torchrun; (0, 1) otherwise."""
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def dist_local_rank() -> int:
    """This process's rank on its host under torchrun (which GPU it takes)."""
    return int(os.environ.get("LOCAL_RANK", "0"))
