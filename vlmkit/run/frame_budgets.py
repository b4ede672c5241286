"""Frame budgets as `vlmkit run` takes them: `--nframe 8,16,32` or `--fps 0.5,1` (one value: a plain run, as before).

A budget is one sampling setting of a video benchmark (`nframe=N` or `fps=F`). Several of them make a sweep
(vlmkit.run.frame_sweep): one run per budget, each under VLMEvalKit's name for that setting, `<dataset>_<N>frame` or
`<dataset>_<F>fps` (Video-MME_8frame, Video-MME_0.5fps, MVBench_MP4_1fps), so that each has its own journal and
result files. This module only parses and names; it imports nothing heavy (the CLI's parser uses it: no
dataclasses, which `vlmkit --help` does not load otherwise).
"""

from __future__ import annotations

import argparse
import math
from typing import Any, NamedTuple

NFRAME = "nframe"
FPS = "fps"


class BudgetError(argparse.ArgumentTypeError, ValueError):
    """A --nframe/--fps value that is no budget list (argparse prints its text; a --config file names the key)."""


class Budget(NamedTuple):
    """One frame budget: `key` is NFRAME or FPS, `value` an int (frames per clip) or a float (frames per second)."""

    key: str
    value: int | float

    @property
    def label(self) -> str:
        """VLMEvalKit's suffix for this setting: `8frame`, `0.5fps`, `1fps`."""
        return f"{self.value}frame" if self.key == NFRAME else f"{self.value:g}fps"

    def dataset_name(self, dataset: str) -> str:
        """The run's name at this budget, as VLMEvalKit names its settings: `Video-MME` -> `Video-MME_8frame`."""
        return f"{dataset}_{self.label}"

    def sampling(self) -> dict[str, int | float]:
        """`{"nframe": N}` or `{"fps": F}` (what a model takes, and what results.json records)."""
        return {self.key: self.value}


class Budgets(tuple):
    """The values of one --nframe or --fps flag, in the order given (duplicates dropped). `str()` gives them back as
    typed (`8,16`), so a command line rebuilt from parsed values (--data-parallel's children) says the same."""

    key: str = NFRAME

    def __new__(cls, key: str, values: list[int | float]) -> Budgets:
        made = super().__new__(cls, values)
        made.key = key
        return made

    def __str__(self) -> str:
        return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in self)

    def budgets(self) -> list[Budget]:
        return [Budget(self.key, value) for value in self]


def _items(text: Any, flag: str) -> list[Any]:
    if isinstance(text, Budgets):
        return list(text)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return [text]
    if not isinstance(text, str) or not text.strip():
        raise BudgetError(f"{flag} takes a number or numbers separated by commas (8,16,32); got {text!r}")
    return [item.strip() for item in text.split(",")]


def _unique(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


def nframe_values(text: Any) -> Budgets:
    """`--nframe 8` or `--nframe 8,16,32`: whole numbers, 1 or more."""
    values = []
    for item in _items(text, "--nframe"):
        try:
            number = float(item)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number) or not number.is_integer() or number < 1 or isinstance(item, bool):
            raise BudgetError(f"--nframe takes whole numbers of frames, 1 or more (8 or 8,16,32); got {item!r}")
        values.append(int(number))
    return Budgets(NFRAME, _unique(values))


def fps_values(text: Any) -> Budgets:
    """`--fps 1` or `--fps 0.5,1`: frames per second, above 0."""
    values = []
    for item in _items(text, "--fps"):
        try:
            number = float(item)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number) or number <= 0 or isinstance(item, bool):
            raise BudgetError(f"--fps takes frames per second above 0 (1 or 0.5,1); got {item!r}")
        values.append(number)
    return Budgets(FPS, _unique(values))


def single(values: Budgets | int | float | None) -> int | float | None:
    """The one value of a flag given once (what a model takes), None when it was not given or lists several."""
    if values is None or isinstance(values, (int, float)):
        return values
    return values[0] if len(values) == 1 else None


def sweep_of(nframe: Budgets | int | None, fps: Budgets | float | None) -> list[Budget] | None:
    """The budgets of a sweep, None for a plain run (neither flag lists several values). Both flags given with
    several values between them is a BudgetError: one sweep is over frames or over rates, not both."""
    many = [v for v in (nframe, fps) if isinstance(v, Budgets) and len(v) > 1]
    if not many:
        return None
    if nframe is not None and fps is not None:
        raise BudgetError("a frame-budget sweep is over --nframe or over --fps, not both: give one of them")
    return many[0].budgets()
