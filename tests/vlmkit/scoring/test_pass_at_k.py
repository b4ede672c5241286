"""pass@k (unbiased estimator) and the majority answer, against values worked by hand and a brute-force count of
every k-subset of the attempts."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from vlmkit.scoring.common.pass_at_k import majority, mean_pass_at_k, pass_at_k


def brute_force(outcomes: list[bool], k: int) -> Fraction:
    """The share of the k-subsets of a sample's attempts that hold a right one, counted one subset at a time."""
    subsets = list(itertools.combinations(outcomes, k))
    return Fraction(sum(any(s) for s in subsets), len(subsets))


def test_worked_by_hand() -> None:
    # n=5 attempts, c=2 right: pass@1 = 2/5; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7; pass@3 = 1 - 1/10 = 0.9
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9)
    assert pass_at_k(5, 2, 4) == 1.0 and pass_at_k(5, 2, 5) == 1.0  # fewer than k wrong attempts
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 3, 1) == 1.0
    # three samples asked 3 times, right 0, 1 and 3 times: pass@1 = (0 + 1/3 + 1)/3 = 4/9, pass@2 = (0 + 2/3 + 1)/3
    assert mean_pass_at_k([0, 1, 3], 3, 1) == pytest.approx(4 / 9)
    assert mean_pass_at_k([0, 1, 3], 3, 2) == pytest.approx(5 / 9)
    assert mean_pass_at_k([0, 1, 3], 3, 3) == pytest.approx(2 / 3)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_equals_the_share_of_k_subsets_holding_a_right_attempt(n: int) -> None:
    for pattern in itertools.product([False, True], repeat=n):
        outcomes = list(pattern)
        for k in range(1, n + 1):
            assert pass_at_k(n, sum(outcomes), k) == pytest.approx(float(brute_force(outcomes, k)), abs=1e-12)


def test_bad_arguments_are_refused() -> None:
    for n, c, k in ((3, 1, 0), (3, 1, 4), (3, 4, 1), (3, -1, 1)):
        with pytest.raises(ValueError, match="pass@k"):
            pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        mean_pass_at_k([], 3, 1)


def test_majority_most_common_answer_ties_to_the_first_seen() -> None:
    assert majority(["B", "A", "A"]) == 1  # A twice: its first position
    assert majority(["B", "A", "A", "B"]) == 0  # a tie: B was seen first
    assert majority(["A", "B", "C"]) == 0
    assert majority([None, "C", None, "D", "D"]) == 3  # errors do not vote
    assert majority([None, None]) is None and majority([]) is None


def test_majority_matches_a_second_implementation() -> None:
    """Against a plain count over every 4-attempt ballot of three answers and an error."""
    for ballot in itertools.product(["x", "y", "z", None], repeat=4):
        votes = [v for v in ballot if v is not None]
        if not votes:
            assert majority(list(ballot)) is None
            continue
        top = max(votes.count(v) for v in votes)
        winner = next(v for v in ballot if v is not None and votes.count(v) == top)  # first seen among the tied
        assert ballot[majority(list(ballot))] == winner and ballot.index(winner) == majority(list(ballot))
