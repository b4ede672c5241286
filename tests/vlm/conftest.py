"""Fixtures shared by the model tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny matrices gain nothing from threads, and on a busy 2-core machine two threads contend (100x slower)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
