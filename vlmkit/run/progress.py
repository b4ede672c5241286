"""How far a pair's inference has got: tqdm's bar on a terminal; elsewhere (tee, nohup, CI, a log file) one plain line
every `every_s` seconds, so a long run is never silent: done/total, rate, time left, errors so far."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from tqdm import tqdm

LINE_EVERY_S = 30.0


class Progress:
    """`update(n, errors)` after each answer (or batch); a context manager like tqdm's bar."""

    def __init__(self, total: int, desc: str, *, bar: bool, every_s: float = LINE_EVERY_S,
                 stream: TextIO | None = None, clock: Any = time.monotonic) -> None:
        self.total, self.desc, self.every_s, self.clock = total, desc, every_s, clock
        self.stream = stream if stream is not None else sys.stderr
        self.done = self.errors = 0
        self.lines = 0  # plain lines printed so far
        self._said = 0  # `done` when the last line was printed
        self._bar = tqdm(total=total, desc=desc, unit="sample", file=self.stream) if bar else None
        self._start = self._last = clock()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self.lines and self.done != self._said:  # a run long enough to have lines says where it ended
            self._line()

    def update(self, n: int = 1, errors: int = 0) -> None:
        self.done += n
        self.errors += errors
        if self._bar is not None:
            self._bar.update(n)
            return
        now = self.clock()
        if now - self._last >= self.every_s:
            self._last = now
            self._line()

    def _line(self) -> None:
        elapsed = max(self.clock() - self._start, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = f", about {_duration(left)} left" if left is not None and self.done < self.total else ""
        print(f"{self.desc}: {self.done}/{self.total} answered ({rate:.3g}/s{eta}, {self.errors} errors so far)",
              file=self.stream, flush=True)
        self.lines += 1
        self._said = self.done


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
