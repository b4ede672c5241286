"""Model release: close() lets a local model's memory be reclaimed before the next model of a run is loaded."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from tests.support.tiny_models import build_tiny_qwen2_vl
from vlm.base import BaseModel
from vlm.local.generic import HFVisionModel


@pytest.fixture(scope="module", autouse=True)
def _one_thread(one_torch_thread: None) -> None:
    """Every test of this module runs torch on one thread (tests/vlm/conftest.py)."""


def test_base_close_does_nothing() -> None:
    class Echo(BaseModel):
        def generate(self, msgs, dataset=None):
            return "echo"

    model = Echo()
    model.close()
    model.close()
    assert model.generate(["hi"]) == "echo"


def test_close_releases_the_model(tmp_path: Path) -> None:
    model = HFVisionModel(str(build_tiny_qwen2_vl(tmp_path / "qwen2_vl")), max_new_tokens=2, device="cpu")
    assert isinstance(model.generate(["Hello"]), str)  # generation has run: whatever it caches exists
    module, processor = weakref.ref(model.model), weakref.ref(model.processor)
    before = model.settings()
    model.close()
    gc.collect()
    assert module() is None and processor() is None
    assert model.settings() == before  # results.json can still be written after close()
    with pytest.raises(RuntimeError, match="closed"):
        model.generate(["Hello"])
    model.close()  # twice is harmless
