"""Weights are looked up where huggingface_hub looks: HF_HUB_CACHE, HF_HOME or XDG_CACHE_HOME, read when asked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tiny_models import build_tiny_llava
from vlm.local.loading import resolve_model_path
from vlmkit.core.config import hf_hub_cache

CACHE_VARS = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llava(tmp_path_factory.mktemp("tiny") / "llava")


def _place_in_cache(cache: Path, repo_id: str, source: Path) -> Path:
    """The hub cache layout that `snapshot_download` and `from_pretrained` read: refs/main -> snapshots/<commit>."""
    repo_dir = cache / ("models--" + repo_id.replace("/", "--"))
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(COMMIT)
    return Path(shutil.copytree(source, repo_dir / "snapshots" / COMMIT))


def _only(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    for var in CACHE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(name, value)


def _huggingface_hub_says(env: dict[str, str]) -> str:
    """huggingface_hub's own HF_HUB_CACHE in a fresh interpreter started with env (it reads env when imported)."""
    clean = {k: v for k, v in os.environ.items() if k not in CACHE_VARS}
    script = "import huggingface_hub.constants as c; print(c.HF_HUB_CACHE)"
    return subprocess.run(
        [sys.executable, "-c", script], env={**clean, **env}, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize(
    ("name", "cache_of"),
    [
        ("HF_HUB_CACHE", lambda root: root),
        ("HF_HOME", lambda root: root / "hub"),
        ("XDG_CACHE_HOME", lambda root: root / "huggingface" / "hub"),
    ],
)
def test_each_variable_alone_says_where_the_cache_is(
    name: str, cache_of, tiny_llava: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "where"
    cache = cache_of(root)
    snapshot = _place_in_cache(cache, "tiny-org/tiny-llava", tiny_llava)
    _only(monkeypatch, name, str(root))  # set after huggingface_hub was imported: read when asked
    assert hf_hub_cache() == cache
    assert resolve_model_path("tiny-org/tiny-llava") == snapshot
    assert str(hf_hub_cache()) == _huggingface_hub_says({name: str(root)})


def test_the_default_and_the_expansions_match_huggingface_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CACHE_VARS:
        monkeypatch.delenv(var, raising=False)
    assert str(hf_hub_cache()) == _huggingface_hub_says({})
    monkeypatch.setenv("VLMKIT_TEST_ROOT", str(tmp_path))
    for name, value in [("HF_HOME", "$VLMKIT_TEST_ROOT/hf"), ("HUGGINGFACE_HUB_CACHE", "~/legacy_hub")]:
        _only(monkeypatch, name, value)
        assert str(hf_hub_cache()) == _huggingface_hub_says({name: value, "VLMKIT_TEST_ROOT": str(tmp_path)})
    _only(monkeypatch, "HF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # the more precise variable wins
    assert hf_hub_cache() == tmp_path / "hub"


def test_a_registry_name_loads_from_the_xdg_cache(
    tiny_llava: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vlm.registry import model_registry

    snapshot = _place_in_cache(tmp_path / "xdg" / "huggingface" / "hub", "llava-hf/llava-1.5-7b-hf", tiny_llava)
    _only(monkeypatch, "XDG_CACHE_HOME", str(tmp_path / "xdg"))
    model = model_registry().build("llava", max_new_tokens=2, device="cpu")
    try:
        assert model.settings()["local_path"] == str(snapshot.resolve())
        assert isinstance(model.generate(["Hello"]), str)
    finally:
        model.close()
