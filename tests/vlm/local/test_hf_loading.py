"""Resolving a model path: local folder, Hugging Face cache (offline), clear errors, no network."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.tiny_models import build_tiny_llava
from vlm.local.loading import ModelNotFoundError, resolve_model_path
from vlm.registry import model_registry

REPO = "Qwen/Qwen2.5-VL-7B-Instruct"


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llava(tmp_path_factory.mktemp("tiny") / "llava")


def _fake_hub_cache(cache: Path, repo_id: str, source: Path) -> Path:
    """The hub cache layout that `from_pretrained` and `snapshot_download` read: refs/main -> snapshots/<commit>."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo_dir = cache / ("models--" + repo_id.replace("/", "--"))
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    snapshot = repo_dir / "snapshots" / commit
    shutil.copytree(source, snapshot)
    return snapshot


def test_local_folder_is_used_as_is(tiny_llava: Path) -> None:
    assert resolve_model_path(str(tiny_llava)) == tiny_llava.resolve()


def test_repo_id_found_in_the_cache(tiny_llava: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _fake_hub_cache(tmp_path / "hub", "tiny-org/tiny-llava", tiny_llava)
    assert resolve_model_path("tiny-org/tiny-llava", cache_dir=tmp_path / "hub") == snapshot
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # the default cache comes from vlmkit.core.config
    assert resolve_model_path("tiny-org/tiny-llava") == snapshot


def test_model_loads_from_the_cache_by_repo_id(tiny_llava: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vlm.local.generic import HFVisionModel

    _fake_hub_cache(tmp_path / "hub", "tiny-org/tiny-llava", tiny_llava)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    model = HFVisionModel("tiny-org/tiny-llava", max_new_tokens=2)
    assert isinstance(model.generate(["Hello"]), str)
    assert model.settings()["model_path"] == "tiny-org/tiny-llava"


def test_missing_repo_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "empty_hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    with pytest.raises(ModelNotFoundError) as info:
        resolve_model_path(REPO)
    message = str(info.value)
    assert "\n" not in message
    assert f"model weights for {REPO} not found locally" in message
    assert str(cache) in message
    assert f"hf download {REPO}" in message and "--model-path" in message


def test_registry_name_without_weights_fails_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no_such_cache"))
    with pytest.raises(ModelNotFoundError, match="Qwen2.5-VL-7B-Instruct not found locally"):
        model_registry().build("qwen-vl")


def test_bad_local_paths(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        resolve_model_path(str(tmp_path / "nope" / "model"))
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        resolve_model_path("./not-here")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFoundError, match="no config.json"):
        resolve_model_path(str(tmp_path / "empty"))
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ModelNotFoundError, match="is a file"):
        resolve_model_path(str(tmp_path / "weights.bin"))
    with pytest.raises(ModelNotFoundError, match="empty model path"):
        resolve_model_path("  ")
