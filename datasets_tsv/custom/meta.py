"""The `.meta.json` beside a custom dataset file (AISBench's convention): how many requests, in which order, and
how many tokens each may generate.

The file is `<data file>.meta.json` (e.g. `test_mcq.csv.meta.json`) or the path given as `meta_path` (which must
exist). Keys (any other key, at any level, is an error naming the file and the field):

- `request_count` (int or digit string, >= 0): the number of requests. Larger than the file: the rows are
  repeated cyclically (row 0, 1, ..., n-1, 0, 1, ...) up to that count; smaller: only that many are used; 0 or
  absent: every row once.
- `sampling_mode` (`default` | `shuffle` | `random`, default `default`), as AISBench's get_sample_data:
  `default` takes the first `request_count` rows of the (padded) list in order; `shuffle` takes the same rows in
  a random order; `random` draws `request_count` rows without replacement from the whole (padded) list, so when
  truncating it may pick any rows, not the first ones. Randomness comes from the run's `seed` (AISBench uses an
  unseeded generator): the same seed gives the same rows and order, and the seed is recorded in `info()`.
- `output_config`: `{"method": "uniform", "params": {"min_value": a, "max_value": b}}` gives every request a
  max_tokens drawn uniformly from a..b inclusive (seeded); `{"method": "percentage", "params":
  {"percentage_distribute": [[max_tokens, ratio], ...]}}` gives, in request order, floor(ratio * N) requests each
  value (exact decimal arithmetic, so 0.29 * 100 is 29), and any remainder the last value. Values are positive
  integers (or digit strings); ratios are in (0, 1] and must sum to exactly 1. The output_config overrides every
  row's own `max_tokens` (as in AISBench).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np

from vlmkit.core.files import md5_of

from datasets_tsv.custom.fields import positive_int
from datasets_tsv.custom.reading import CustomDataError, where

META_SUFFIX = ".meta.json"
META_KEYS = ("request_count", "sampling_mode", "output_config")
SAMPLING_MODES = ("default", "shuffle", "random")
OUTPUT_PARAMS = {"uniform": ("min_value", "max_value"), "percentage": ("percentage_distribute",)}
_SAMPLING_STREAM, _OUTPUT_STREAM = 1, 2  # independent random streams derived from one seed


@dataclass(frozen=True)
class OutputConfig:
    method: str  # "uniform" | "percentage"
    min_value: int = 0
    max_value: int = 0
    distribution: tuple[tuple[int, str], ...] = ()  # (max_tokens, ratio as its decimal text)

    def to_dict(self) -> dict[str, Any]:
        if self.method == "uniform":
            return {"method": "uniform", "min_value": self.min_value, "max_value": self.max_value}
        return {"method": "percentage", "percentage_distribute": [[v, float(r)] for v, r in self.distribution]}


@dataclass(frozen=True)
class MetaConfig:
    path: Path
    md5: str
    request_count: int = 0  # 0 = every row once
    sampling_mode: str = "default"
    output_config: OutputConfig | None = None
    keys: tuple[str, ...] = field(default=())  # the keys the file set

    @property
    def uses_seed(self) -> bool:
        uniform = self.output_config is not None and self.output_config.method == "uniform"
        return self.sampling_mode != "default" or uniform

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "md5": self.md5,
            "request_count": self.request_count,
            "sampling_mode": self.sampling_mode,
            "output_config": self.output_config.to_dict() if self.output_config else None,
        }


def meta_path_for(data_path: str | Path) -> Path:
    """Where AISBench looks for a file's meta: `<file>.meta.json` beside it."""
    return Path(str(data_path) + META_SUFFIX)


def find_meta(data_path: str | Path, meta_path: str | Path | None = None) -> MetaConfig | None:
    """The meta given (it must exist), else the one beside the data file when there is one, else None."""
    if meta_path is not None:
        given = Path(meta_path).expanduser()
        if not given.is_file():
            raise CustomDataError(f"{given}: meta file not found (given as meta_path)")
        return load_meta(given)
    beside = meta_path_for(data_path)
    return load_meta(beside) if beside.is_file() else None


def load_meta(path: str | Path) -> MetaConfig:
    """Read and validate a .meta.json (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CustomDataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise CustomDataError(f"{path}: empty meta file")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CustomDataError(f"{where(path, exc.lineno)}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise CustomDataError(f"{path}: a meta file holds a JSON object, got {type(raw).__name__}")
    _no_unknown(path, raw, META_KEYS, "")
    count = raw.get("request_count")
    request_count = 0 if count is None else _checked_int(path, "request_count", count, allow_zero=True)
    mode = raw.get("sampling_mode", "default")
    if mode not in SAMPLING_MODES:
        modes = ", ".join(SAMPLING_MODES)
        raise CustomDataError(f"{where(path, None, 'sampling_mode')}: {mode!r} is not one of {modes}")
    output = _output_config(path, raw["output_config"]) if raw.get("output_config") is not None else None
    return MetaConfig(path, md5_of(path), request_count, mode, output, tuple(raw))


def _no_unknown(path: Path, raw: dict[str, Any], known: tuple[str, ...], prefix: str) -> None:
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise CustomDataError(
            f"{where(path, None, prefix + unknown[0])}: unknown key (known here: {', '.join(known)})"
        )


def _checked_int(path: Path, name: str, value: Any, *, allow_zero: bool = False) -> int:
    """fields.positive_int, or an error naming the meta file and the key."""
    number = positive_int(value, allow_zero=allow_zero)
    if number is None:
        wanted = "a non-negative integer" if allow_zero else "a positive integer"
        raise CustomDataError(f"{where(path, None, name)}: {value!r} is not {wanted}")
    return number


def _output_config(path: Path, raw: Any) -> OutputConfig:
    if not isinstance(raw, dict):
        raise CustomDataError(f"{where(path, None, 'output_config')}: must be an object with method and params")
    _no_unknown(path, raw, ("method", "params"), "output_config.")
    method = raw.get("method")
    if method not in OUTPUT_PARAMS:
        raise CustomDataError(
            f"{where(path, None, 'output_config.method')}: {method!r} is not one of {', '.join(OUTPUT_PARAMS)}"
        )
    params = raw.get("params")
    if not isinstance(params, dict):
        raise CustomDataError(f"{where(path, None, 'output_config.params')}: must be an object")
    _no_unknown(path, params, OUTPUT_PARAMS[method], "output_config.params.")
    for name in OUTPUT_PARAMS[method]:
        if name not in params:
            raise CustomDataError(f"{where(path, None, 'output_config.params.' + name)}: missing (method {method})")
    if method == "uniform":
        low = _checked_int(path, "output_config.params.min_value", params["min_value"])
        high = _checked_int(path, "output_config.params.max_value", params["max_value"])
        if low > high:
            raise CustomDataError(
                f"{where(path, None, 'output_config.params')}: min_value {low} is greater than max_value {high}"
            )
        return OutputConfig("uniform", min_value=low, max_value=high)
    return OutputConfig("percentage", distribution=_distribution(path, params["percentage_distribute"]))


def _distribution(path: Path, raw: Any) -> tuple[tuple[int, str], ...]:
    name = "output_config.params.percentage_distribute"
    if not isinstance(raw, list) or not raw:
        raise CustomDataError(f"{where(path, None, name)}: must be a non-empty list of [max_tokens, ratio] pairs")
    pairs: list[tuple[int, str]] = []
    total = Decimal(0)
    for pos, item in enumerate(raw):
        here = f"{name}[{pos}]"
        if not isinstance(item, list) or len(item) != 2:
            raise CustomDataError(f"{where(path, None, here)}: must be a [max_tokens, ratio] pair, got {item!r}")
        value = _checked_int(path, here + "[0]", item[0])
        ratio = _ratio(path, here + "[1]", item[1])
        total += ratio
        pairs.append((value, str(ratio)))
    if total != 1:
        raise CustomDataError(f"{where(path, None, name)}: the ratios sum to {total}, not 1")
    return tuple(pairs)


def _ratio(path: Path, name: str, value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise CustomDataError(f"{where(path, None, name)}: {value!r} is not a number")
    try:
        ratio = Decimal(str(value).strip())
    except InvalidOperation:
        raise CustomDataError(f"{where(path, None, name)}: {value!r} is not a number") from None
    if not ratio.is_finite() or not 0 < ratio <= 1:
        raise CustomDataError(f"{where(path, None, name)}: ratio {value!r} must be in (0, 1]")
    return ratio


# -- applying a meta ------------------------------------------------------------------------------------------
def plan_rows(n_rows: int, meta: MetaConfig, seed: int) -> list[int]:
    """The source row (position in the file) of each request, in request order."""
    count = meta.request_count or n_rows
    pool = [i % n_rows for i in range(max(count, n_rows))] if count > n_rows else list(range(n_rows))
    rng = np.random.default_rng([seed, _SAMPLING_STREAM])
    if meta.sampling_mode == "default":
        return pool[:count]
    if meta.sampling_mode == "shuffle":
        chosen = pool[:count]
        return [chosen[j] for j in rng.permutation(len(chosen))]
    picks = rng.choice(len(pool), size=count, replace=False)
    return [pool[int(j)] for j in picks]


def max_tokens_plan(count: int, output: OutputConfig, seed: int) -> list[int]:
    """Each request's max_tokens under an output_config (see the module docstring)."""
    if output.method == "uniform":
        rng = np.random.default_rng([seed, _OUTPUT_STREAM])
        return [int(v) for v in rng.integers(output.min_value, output.max_value + 1, size=count)]
    plan: list[int] = []
    for value, ratio in output.distribution:
        plan += [value] * math.floor(Decimal(ratio) * count)
    plan = plan[:count]
    plan += [output.distribution[-1][0]] * (count - len(plan))
    return plan
