"""A level's course over time in bounded memory: completed requests, output tokens and the most requests in flight,
per time bin from the start of the measured phase.

Bins start `FIRST_BIN_NS` wide; when a run outlasts `MAX_BINS` bins, neighbours are merged pairwise and the width
doubles, so the series never holds more than MAX_BINS bins whatever the run's length. The in-flight count is kept
live (a request counts from when it is handed to the HTTP client to when its record is final), so one process's
maximum is exact; the processes of a `--workers` run are combined bin by bin (their per-bin maxima added: an upper
bound on the level's maximum, which the definitions say).
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

FIRST_BIN_NS = 10_000_000
MAX_BINS = 2048


class Timeline:
    """Per-bin counts since `t0` (monotonic ns), and the live number of requests in flight."""

    def __init__(self, t0: int, width_ns: int = FIRST_BIN_NS) -> None:
        self.t0 = t0
        self.width = width_ns
        self.completed = np.zeros(MAX_BINS, dtype=np.int64)
        self.tokens = np.zeros(MAX_BINS, dtype=np.int64)
        self.flight_max = np.zeros(MAX_BINS, dtype=np.int64)
        self.used = 0  # bins in use
        self.flight = 0
        self.peak = 0

    def _bin(self, t: int) -> int:
        i = max(0, (t - self.t0) // self.width)
        while i >= MAX_BINS:
            self._coarsen()
            i = max(0, (t - self.t0) // self.width)
        if i >= self.used:
            self.flight_max[self.used:i + 1] = self.flight  # the bins nothing happened in held what was in flight
            self.used = i + 1
        return i

    def _coarsen(self) -> None:
        """Merge neighbouring bins pairwise; the width doubles."""
        for series, fold in ((self.completed, np.add), (self.tokens, np.add), (self.flight_max, np.maximum)):
            merged = fold(series[0::2], series[1::2])
            series[: MAX_BINS // 2] = merged
            series[MAX_BINS // 2:] = 0
        self.used = (self.used + 1) // 2
        self.width *= 2

    def started(self, t: int) -> None:
        self.flight += 1
        self.peak = max(self.peak, self.flight)
        i = self._bin(t)
        self.flight_max[i] = max(self.flight_max[i], self.flight)

    def ended(self, t: int, ok: bool, tokens: int) -> None:
        i = self._bin(t)
        self.flight -= 1
        if ok:
            self.completed[i] += 1
            self.tokens[i] += tokens

    def series(self) -> dict[str, Any]:
        """Bin start times (s since t0) and the per-bin figures, trimmed to the bins in use."""
        n = self.used
        return {
            "width_s": self.width / 1e9,
            "starts_s": np.arange(n) * self.width / 1e9,
            "completed": self.completed[:n].copy(),
            "tokens": self.tokens[:n].copy(),
            "flight_max": self.flight_max[:n].copy(),
        }

    def merge(self, other: "Timeline") -> None:
        """Add another process's timeline (bins aligned on this one's t0; the coarser width wins)."""
        while self.width < other.width:
            self._coarsen()
        factor = self.width // other.width
        shift = (other.t0 - self.t0) // self.width
        for j in range(other.used):
            i = max(0, shift + (j // factor))
            while i >= MAX_BINS:
                self._coarsen()
                factor, shift = self.width // other.width, (other.t0 - self.t0) // self.width
                i = max(0, shift + (j // factor))
            if i >= self.used:
                self.flight_max[self.used:i + 1] = 0
                self.used = i + 1
            self.completed[i] += other.completed[j]
            self.tokens[i] += other.tokens[j]
        # in-flight: per bin, the sum of each process's most (an upper bound of the level's at any instant)
        add = np.zeros(MAX_BINS, dtype=np.int64)
        for j in range(other.used):
            i = max(0, shift + (j // factor))
            add[i] = max(add[i], other.flight_max[j])
        self.flight_max += add
        self.peak = int(self.flight_max[: self.used].max()) if self.used else max(self.peak, other.peak)


SAMPLE_MAX = 65_536


class OrderedSample:
    """Values in arrival order, thinned evenly once there are more than SAMPLE_MAX: every other one is dropped and
    from then on only every 2nd (4th, ...) one is kept, so the sample stays spread over the whole run (first and
    last fifths stay comparable) in bounded memory. The largest value is kept exactly."""

    def __init__(self) -> None:
        self.kept = array("q")
        self.stride = 1
        self.seen = 0
        self.top: int | None = None

    def append(self, value: int) -> None:
        if self.top is None or value > self.top:
            self.top = value
        if self.seen % self.stride == 0:
            self.kept.append(value)
            if len(self.kept) > SAMPLE_MAX:
                self.kept = self.kept[::2]
                self.stride *= 2
        self.seen += 1

    def values(self) -> array:
        """The sample, with the largest value in place of the last kept one when thinning dropped it."""
        out = array("q", self.kept)
        if self.top is not None and out and max(out) < self.top:
            out[-1] = self.top
        return out

    def __len__(self) -> int:
        return len(self.kept)
