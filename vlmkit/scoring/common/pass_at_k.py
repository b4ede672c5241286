"""Figures over repeated attempts at the same samples (`vlmkit run --repeats N`): pass@k and the majority answer.

- pass@k (Chen et al. 2021, the unbiased estimator): a sample asked n times and right c times passes at k with
  probability 1 - C(n-c, k) / C(n, k), the chance that k attempts drawn without replacement from its n include a right
  one; the figure is the mean over samples. Exact in integers until the last division (math.comb), so pass@1 is the
  plain share of right attempts c/n and pass@n is the share of samples right at least once.
- majority: the answer given most often among a sample's attempts; a tie goes to the answer seen first (the lowest
  attempt number), so the choice never depends on hashing or sort order. Attempts with no answer (an error) do not
  vote; a sample with no answer in any attempt has none.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one sample asked n times and right c times (1 <= k <= n, 0 <= c <= n)."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n; got n={n}, c={c}, k={k}")
    if n - c < k:  # every draw of k attempts holds a right one
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean_pass_at_k(right: Sequence[int], n: int, k: int) -> float:
    """pass@k averaged over samples, each asked n times and right `right[i]` times."""
    if not right:
        raise ValueError("pass@k of no samples")
    return sum(pass_at_k(n, c, k) for c in right) / len(right)


def majority(answers: Sequence[Hashable | None]) -> int | None:
    """The position (attempt) of the first occurrence of the most common answer; None answers do not vote; None when
    no attempt gave an answer. Ties: the answer seen first wins."""
    counts: dict[Hashable, int] = {}
    first: dict[Hashable, int] = {}
    for position, answer in enumerate(answers):
        if answer is None:
            continue
        counts[answer] = counts.get(answer, 0) + 1
        first.setdefault(answer, position)
    if not counts:
        return None
    best = max(counts.values())
    return min(first[a] for a, count in counts.items() if count == best)
