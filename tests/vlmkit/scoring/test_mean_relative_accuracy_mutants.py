"""mean_relative_accuracy.py's edges (mutation round 4): the threshold builder against numpy.linspace, the message,
bracketed replies and numbers only inside a think block."""

from __future__ import annotations

import numpy as np
import pytest

from vlmkit.scoring.common.mean_relative_accuracy import mean_relative_accuracy, mra_thresholds, to_number


def test_default_thresholds_are_ten_from_half_to_095() -> None:
    assert mra_thresholds() == tuple(np.linspace(0.5, 0.95, 10).tolist())
    # (0.52 - 0.5) / 0.05 + 2 = 2.4: two points, both ends
    assert mra_thresholds(0.5, 0.52, 0.05) == tuple(np.linspace(0.5, 0.52, 2).tolist()) == (0.5, 0.52)
    assert mra_thresholds(0.7, 0.7, 0.05) == tuple(np.linspace(0.7, 0.7, 2).tolist())


def test_no_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^mean_relative_accuracy needs at least one threshold$"):
        mean_relative_accuracy(1.0, 1.0, ())


def test_bracketed_replies() -> None:
    assert to_number("5]") == 5.0 and to_number("[5") == 5.0
    assert to_number("[]") is None and to_number(" [ ] ") is None
    assert to_number("[7, 3]") == 7.0


def test_numbers_only_inside_the_think_block() -> None:
    assert to_number("<think>3 or 5 or 7</think> unsure") == 7.0
    assert to_number("<think>4 then 4</think>") == 4.0
