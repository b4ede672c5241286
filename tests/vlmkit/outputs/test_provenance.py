"""Provenance recorded in results.json: time stamps, package versions, the git state of a real repository, host."""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pytest

from vlmkit import __version__
from vlmkit.outputs import provenance


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True, capture_output=True, text=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n", encoding="utf-8")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "first")
    provenance._git_state.cache_clear()
    return tmp_path


def test_now_iso_is_utc_to_the_second():
    before = datetime.now(timezone.utc).replace(microsecond=0)
    stamp = provenance.now_iso()
    after = datetime.now(timezone.utc)
    parsed = datetime.fromisoformat(stamp)
    assert stamp.endswith("+00:00") and "." not in stamp
    assert before <= parsed <= after


def test_package_versions_name_python_vlmkit_and_installed_packages(monkeypatch):
    provenance._package_versions.cache_clear()
    monkeypatch.setattr(provenance, "_PACKAGES", ("numpy", "no-such-package-vlmkit-test"))
    try:
        versions = provenance.package_versions()
        assert versions == {
            "python": platform.python_version(),
            "vlmkit": __version__,
            "numpy": metadata.version("numpy"),
            "no-such-package-vlmkit-test": None,
        }
        versions["numpy"] = "edited"  # a copy: the cached answer is not changed by its caller
        assert provenance.package_versions()["numpy"] == metadata.version("numpy")
    finally:
        provenance._package_versions.cache_clear()


def test_git_state_of_a_clean_and_of_an_edited_checkout(repo):
    head = _git(repo, "rev-parse", "HEAD")
    assert provenance.git_state(repo) == {"commit": head, "dirty": False}
    (repo / "a.txt").write_text("two\n", encoding="utf-8")
    provenance._git_state.cache_clear()  # asked once per command: a new command sees the edit
    assert provenance.git_state(repo) == {"commit": head, "dirty": True}


def test_an_untracked_file_does_not_make_a_checkout_dirty(repo):
    (repo / "new.txt").write_text("x\n", encoding="utf-8")
    assert provenance.git_state(repo)["dirty"] is False


def test_git_state_is_none_outside_a_repository_and_returns_copies(tmp_path_factory, repo):
    assert provenance.git_state(tmp_path_factory.mktemp("not-a-repo")) is None
    first = provenance.git_state(repo)
    first["dirty"] = "edited"
    assert provenance.git_state(repo)["dirty"] is False


def test_host_info_without_torch_loaded_says_no_gpu(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    info = provenance.host_info()
    assert info == {"platform": platform.platform(), "gpu_name": None, "gpu_count": 0}
    assert "torch" not in sys.modules  # never imported by asking


def test_host_info_with_torch_loaded_counts_what_torch_sees():
    import torch

    info = provenance.host_info()
    assert info["gpu_count"] == (torch.cuda.device_count() if torch.cuda.is_available() else 0)
    assert (info["gpu_name"] is None) == (info["gpu_count"] == 0)
