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
    """The Hugging Face hub cache, found as huggingface_hub finds its `constants.HF_HUB_CACHE`, read on each call.

    The order huggingface_hub documents: `HF_HUB_CACHE`, else the legacy `HUGGINGFACE_HUB_CACHE`, else
    `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`; `~` and `$VARS` in
    the value are expanded. huggingface_hub reads these once, when it is imported; reading them here on every call
    honours a value set later (and keeps huggingface_hub an optional dependency). An empty value counts as unset.
    """
    hub = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if hub:
        return _expand(hub)
    home = os.environ.get("HF_HOME")
    if not home:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        home = os.path.join(xdg, "huggingface")
    return _expand(home) / "hub"


def _expand(value: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(value)))


def dist_rank_world() -> tuple[int, int]:
    """(rank, world size) under torchrun; (0, 1) otherwise."""
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def dist_local_rank() -> int:
    """This process's rank on its host under torchrun (which GPU it takes)."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def shell_completion_requested() -> bool:
    """Whether the shell is asking for completions (argcomplete's hook sets _ARGCOMPLETE)."""
    return "_ARGCOMPLETE" in os.environ


def environment() -> dict[str, str]:
    """A copy of this process's environment variables: the base of a child process's env= (the children of
    `vlmkit run --data-parallel N`, vlmkit.run.data_parallel, get it with their own GPUs set)."""
    return dict(os.environ)


def cuda_visible_devices() -> list[str] | None:
    """The GPUs CUDA_VISIBLE_DEVICES names, as written (indices or UUIDs); None when it is unset (every GPU is
    visible), [] when it is set empty (none is)."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]
