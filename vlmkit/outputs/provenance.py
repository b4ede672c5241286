"""Where and with what a run ran: the time stamps, package versions, git state and host recorded in results.json
(and in perf_summary.json)."""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from vlmkit import __version__

_PACKAGES = ("numpy", "pandas", "pillow", "requests", "torch", "transformers", "tokenizers", "rapidfuzz")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def package_versions() -> dict[str, str | None]:
    return dict(_package_versions())


@lru_cache(maxsize=1)  # installed versions do not change while a command runs; the lookups cost ~15 ms
def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version(), "vlmkit": __version__}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_state(repo: Path) -> dict[str, Any] | None:
    """Commit and dirtiness of the checkout vlmkit runs from, when it is one (asked once per command: two git
    processes for every (model, dataset) pair cost more than a small pair's scoring)."""
    state = _git_state(repo)
    return dict(state) if state is not None else None


@lru_cache(maxsize=4)
def _git_state(repo: Path) -> dict[str, Any] | None:
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(dirty)}


def host_info() -> dict[str, Any]:
    """Platform and, only when torch is already loaded (never imported here), the GPUs it sees."""
    info: dict[str, Any] = {"platform": platform.platform(), "gpu_name": None, "gpu_count": 0}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        info["gpu_count"] = torch.cuda.device_count()
        info["gpu_name"] = torch.cuda.get_device_name(0)
    return info
