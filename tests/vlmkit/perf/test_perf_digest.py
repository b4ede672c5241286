"""The streaming percentiles (vlmkit.perf.digest) against numpy's exact ones on known data: exact while short, within
the stated bound (ERROR_BOUND relative, plus 1 ns) once folded into the histogram, whatever the distribution;
merging digests equals one digest of all the values; the bucket layout covers every value with buckets no wider
than the bound allows."""

from __future__ import annotations

import numpy as np
import pytest

from vlmkit.perf import digest as digest_module
from vlmkit.perf.digest import ERROR_BOUND, EXACT_LIMIT, SUB_BITS, Digest, bucket_bounds, bucket_of

NS = 1e-6  # one nanosecond in ms


def _distributions(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    return {
        "lognormal ms": rng.lognormal(mean=3.0, sigma=1.2, size=n),  # TTFT-like: ~20 ms, a long tail
        "uniform sub-ms": rng.uniform(0.0, 0.9, size=n),  # ITL of a fast server
        "pareto tail": (rng.pareto(1.5, size=n) + 1) * 5.0,
        "few distinct": rng.choice([0.0, 1.0, 2.5, 40.0, 1000.0], size=n),  # ties and zeros
        "seconds to an hour": rng.uniform(1e3, 3.6e6, size=n),
    }


def _exact(values: np.ndarray) -> dict[str, float]:
    p50, p90, p95, p99 = np.percentile(values, [50, 90, 95, 99])
    return {"n": values.size, "mean": values.mean(), "median": p50, "p90": p90, "p95": p95, "p99": p99,
            "max": values.max()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_percentiles_past_the_exact_limit_are_within_the_bound(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = EXACT_LIMIT * 3 + 17
    for name, values in _distributions(rng, n).items():
        d = Digest()
        for chunk in np.array_split(values, 7):  # batches of every size, as requests bring them
            d.extend(chunk.tolist())
        d.add(float(values[0]))  # one by one too
        values = np.append(values, values[0])
        assert not d.exact
        got, want = d.stats(), _exact(values)
        assert got["n"] == want["n"], name
        assert got["max"] == want["max"] and got["mean"] == pytest.approx(want["mean"], rel=1e-12), name
        for stat in ("median", "p90", "p95", "p99"):
            assert abs(got[stat] - want[stat]) <= ERROR_BOUND * abs(want[stat]) + NS, (name, stat, got[stat], want[stat])


def test_a_short_stream_is_exact() -> None:
    values = np.random.default_rng(5).lognormal(2.0, 1.0, size=EXACT_LIMIT - 1)
    d = Digest()
    d.extend(values.tolist())
    assert d.exact
    got, want = d.stats(), _exact(values)
    assert got == {k: (int(v) if k == "n" else float(v)) for k, v in want.items()}
    assert Digest().stats() == {"n": 0, "mean": None, "median": None, "p90": None, "p95": None, "p99": None, "max": None}


def test_merging_equals_one_digest_of_every_value() -> None:
    rng = np.random.default_rng(7)
    parts = [rng.lognormal(3.0, 1.0, size=n) for n in (10, EXACT_LIMIT + 5, 300, 2 * EXACT_LIMIT)]
    whole = Digest()
    merged = Digest()
    for part in parts:
        whole.extend(part.tolist())
        piece = Digest()
        piece.extend(part.tolist())
        merged.merge(piece)
    got, want = merged.stats(), whole.stats()
    assert got["mean"] == pytest.approx(want["mean"], rel=1e-12)  # sums added in another order
    assert {k: v for k, v in got.items() if k != "mean"} == {k: v for k, v in want.items() if k != "mean"}
    # two short digests merge exactly
    a, b = Digest(), Digest()
    a.extend([1.0, 2.0])
    b.extend([3.0, 10.0])
    a.merge(b)
    assert a.exact and a.stats()["median"] == 2.5 and a.stats()["max"] == 10.0


def test_every_value_falls_in_a_bucket_no_wider_than_the_bound() -> None:
    rng = np.random.default_rng(3)
    ns = np.concatenate([np.arange(0, 5000), rng.integers(0, 1 << 45, size=200_000),
                         (1 << np.arange(1, 45)) - 1, 1 << np.arange(1, 45)]).astype(np.int64)
    index = bucket_of(ns)
    low, high = bucket_bounds(index)
    assert np.all(low <= ns) and np.all(ns <= high)
    width = high - low + 1
    assert np.all((width == 1) | (width <= low / (1 << SUB_BITS)))  # relative width <= 2**-SUB_BITS
    # buckets tile the line: the next bucket starts right after this one ends
    used = np.unique(index)
    lo, hi = bucket_bounds(used)
    assert np.all(lo[1:][np.diff(used) == 1] == hi[:-1][np.diff(used) == 1] + 1)


def test_memory_is_bounded_whatever_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(digest_module, "EXACT_LIMIT", 64)
    d = Digest()
    sizes = []
    for _ in range(50):
        d.extend([float(x) for x in range(1000)])
        sizes.append(d.nbytes())
    assert max(sizes) <= sizes[0] + 64 * 8  # the histogram, plus at most one batch not yet folded
    assert d.count() == 50_000 and d.stats()["n"] == 50_000
