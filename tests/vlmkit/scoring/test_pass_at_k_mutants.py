"""pass_at_k.py's edges (mutation round 4): the refusal messages, the boundaries of n, c and k, and exact values
worked from the binomial coefficients by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest

from vlmkit.scoring.common.pass_at_k import majority, mean_pass_at_k, pass_at_k


def test_refusals_name_the_arguments() -> None:
    with pytest.raises(ValueError, match=r"^pass@k needs 1 <= k <= n and 0 <= c <= n; got n=4, c=5, k=2$"):
        pass_at_k(4, 5, 2)
    with pytest.raises(ValueError, match=r"^pass@k of no samples$"):
        mean_pass_at_k([], 4, 1)


def test_boundaries_are_allowed() -> None:
    assert pass_at_k(1, 0, 1) == 0.0 and pass_at_k(1, 1, 1) == 1.0
    assert pass_at_k(4, 4, 4) == 1.0 and pass_at_k(4, 0, 4) == 0.0
    # n - c == k: 1 - C(k, k)/C(n, k) = 1 - 1/C(6, 3) = 19/20
    assert pass_at_k(6, 3, 3) == pytest.approx(float(1 - Fraction(1, 20)))
    # n - c == k - 1: every draw holds a right one
    assert pass_at_k(6, 4, 3) == 1.0


def test_exact_values_by_hand() -> None:
    # n=10, c=3: pass@2 = 1 - C(7,2)/C(10,2) = 1 - 21/45 = 24/45; pass@4 = 1 - 35/210 = 5/6
    assert pass_at_k(10, 3, 2) == pytest.approx(24 / 45, abs=1e-15)
    assert pass_at_k(10, 3, 4) == pytest.approx(5 / 6, abs=1e-15)
    assert mean_pass_at_k([3, 10], 10, 2) == pytest.approx((24 / 45 + 1) / 2, abs=1e-15)
    assert mean_pass_at_k((0,), 2, 1) == 0.0


def test_majority_single_and_late_votes() -> None:
    assert majority(["A"]) == 0
    assert majority([None, None, "B"]) == 2
    assert majority(["A", "B", "B", "A", "B"]) == 1
    assert majority([0, 0, 1]) == 0  # falsy answers vote
    assert majority(["", None, ""]) == 0
