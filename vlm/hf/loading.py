"""Where a local model's files are: a local folder, or a Hugging Face repo id looked up in the cache, offline.

Nothing here touches the network: a repo id that is not in the cache is a clear one-line error saying how to get
the weights, never a download attempt or a hang.
"""

from __future__ import annotations

import os
from pathlib import Path

from vlmkit.config import hf_hub_cache


class ModelNotFoundError(FileNotFoundError):
    """The model's files are not on this machine; the message says where the kit looked and what to do."""


def _looks_like_path(model_path: str) -> bool:
    return (
        model_path.startswith((".", "~", os.sep))
        or os.path.isabs(model_path)
        or model_path.count("/") > 1
        or (os.sep != "/" and os.sep in model_path)
    )


def _check_model_dir(path: Path, what: str) -> Path:
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(f"{what} ({path}) holds no config.json: not a transformers model folder")
    return path


def resolve_model_path(model_path: str, cache_dir: str | Path | None = None) -> Path:
    """The folder holding the model's config, weights and processor files.

    An existing folder is used as is. Anything else is taken as a Hugging Face repo id and looked up in the hub
    cache (`cache_dir`, default `vlmkit.config.hf_hub_cache()`) without network access.
    """
    if not model_path or not model_path.strip():
        raise ModelNotFoundError("empty model path: pass a model folder or a Hugging Face repo id")
    local = Path(model_path).expanduser()
    if local.is_dir():
        return _check_model_dir(local.resolve(), f"model folder {model_path}")
    if local.exists():
        raise ModelNotFoundError(f"model path {model_path} is a file; pass the folder that holds config.json")
    if _looks_like_path(model_path):
        raise ModelNotFoundError(f"model folder {model_path} does not exist")
    cache = Path(cache_dir).expanduser() if cache_dir is not None else hf_hub_cache()
    snapshot = _cached_snapshot(model_path, cache)
    if snapshot is None:
        raise ModelNotFoundError(
            f"model weights for {model_path} not found locally (looked in {cache}); download them with "
            f"`hf download {model_path}` or pass --model-path DIR"
        )
    return _check_model_dir(snapshot, f"cached snapshot of {model_path}")


def _cached_snapshot(repo_id: str, cache: Path) -> Path | None:
    """The cached snapshot folder of a repo (offline lookup); None when the repo is not in the cache."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    if not cache.is_dir():
        return None
    try:
        return Path(snapshot_download(repo_id, cache_dir=str(cache), local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, FileNotFoundError, OSError):
        return None
