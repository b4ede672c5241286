"""Paired tests of two runs on the same samples: do they differ, or is the gap noise?

- 0/1 outcomes (a hit or not, per row or per circular group): McNemar's exact test. Only the discordant samples carry
  information: b right in A only, c right in B only. Under "no difference" each discordant sample is equally likely
  to go either way, so b ~ Binomial(b + c, 1/2); the two-sided p-value is min(1, 2 * P(X <= min(b, c))).
- Graded scores (VQA score, ANLS, judge marks): a paired bootstrap of the mean difference (PAIRED_RESAMPLES resamples of
  the samples, seed PAIRED_SEED): p = min(1, 2 * min(share of resampled differences <= 0, share >= 0)), 1 when every
  difference is 0.

The report floor reads no scoring module, so the arithmetic lives here; docs/error_bars.md works both by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PAIRED_RESAMPLES = 2000
PAIRED_SEED = 0
ALPHA = 0.05
MCNEMAR = "mcnemar_exact"
PAIRED_BOOTSTRAP = "paired_bootstrap"


@dataclass(frozen=True)
class PairedTest:
    method: str  # MCNEMAR or PAIRED_BOOTSTRAP
    n: int  # samples (or circular groups) compared
    discordant: int  # samples whose outcome differs between the runs
    a_only: int  # 0/1: right in A only; graded: A scored higher
    b_only: int  # 0/1: right in B only; graded: B scored higher
    mean_difference: float  # mean of B - A on the unit scale (0/1 hits: the accuracy gap)
    p_value: float
    unit: str = "sample"
    resamples: int | None = None
    seed: int | None = None

    @property
    def differs(self) -> bool:
        """Whether the runs differ at the 5% level."""
        return self.p_value < ALPHA

    def summary(self) -> str:
        verdict = "differ (p < 0.05)" if self.differs else "inside the noise (p >= 0.05)"
        how = ("McNemar exact" if self.method == MCNEMAR
               else f"paired bootstrap, {self.resamples} resamples, seed {self.seed}")
        return (
            f"paired test ({how}) over {self.n} {self.unit}(s): {self.discordant} discordant "
            f"({self.a_only} better in A, {self.b_only} better in B), B - A = {self.mean_difference:+.4f}, "
            f"p = {self.p_value:.4g}: {verdict}"
        )


def binomial_tail(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exactly (integers until the last division)."""
    if n == 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(0, k + 1)) / 2**n


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b and c."""
    return min(1.0, 2 * binomial_tail(min(b, c), b + c))


def mcnemar(hits_a: Sequence[bool], hits_b: Sequence[bool], unit: str = "sample") -> PairedTest:
    a = np.asarray(hits_a, dtype=bool)
    b = np.asarray(hits_b, dtype=bool)
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    gap = float(b.mean() - a.mean()) if len(a) else 0.0
    return PairedTest(MCNEMAR, len(a), a_only + b_only, a_only, b_only, gap, mcnemar_exact(a_only, b_only), unit)


def paired_bootstrap(scores_a: Sequence[float], scores_b: Sequence[float], *, resamples: int = PAIRED_RESAMPLES,
                     seed: int = PAIRED_SEED, unit: str = "sample") -> PairedTest:
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    d = b - a
    n = len(d)
    discordant = int((d != 0).sum())
    if n == 0 or discordant == 0:
        p = 1.0
    else:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n, size=(resamples, n)) if n * resamples <= 20_000_000 else None
        if draws is not None:
            means = d[draws].mean(axis=1)
        else:
            means = np.array([d[rng.integers(0, n, size=n)].mean() for _ in range(resamples)])
        p = min(1.0, 2 * min(float((means <= 0).mean()), float((means >= 0).mean())))
    return PairedTest(PAIRED_BOOTSTRAP, n, discordant, int((d < 0).sum()), int((d > 0).sum()),
                      float(d.mean()) if n else 0.0, p, unit, resamples, seed)
