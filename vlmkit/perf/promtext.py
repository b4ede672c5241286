"""A parser of Prometheus' text exposition format (what vLLM's and SGLang's /metrics answer), for reading a server's
figures during a run. prometheus_client is not a dependency of vlmkit; this reads the format's sample lines only:

    name{label="value",...} VALUE [TIMESTAMP]

`# HELP`/`# TYPE`/other comment lines and blank lines are skipped. Label values may hold escaped `\\`, `\"` and `\n`
and any other character (a `}` or `,` inside quotes included). VALUE is a Go float (`NaN`, `+Inf`, `-Inf`, `1e3`).
The text comes from a server, so it is read defensively: a line that is not a sample (a broken label, no value, a
value that is not a number, a line longer than LINE_LIMIT) is skipped and counted, never an exception; bytes that
are not UTF-8 are replaced.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

LINE_LIMIT = 65_536
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


@dataclass(frozen=True)
class Sample:
    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


@dataclass
class Parsed:
    samples: list[Sample]
    skipped: int  # lines that were neither a sample nor a comment/blank


def _labels(line: str, at: int) -> tuple[tuple[tuple[str, str], ...], int] | None:
    """Labels from `{` at `at`: (labels, the index after `}`), or None when malformed."""
    labels = []
    i = at + 1
    n = len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i < n and line[i] == "}":
            return tuple(labels), i + 1
        found = _LABEL.match(line, i)
        if not found:
            return None
        key = found.group()
        i = found.end()
        while i < n and line[i] in " \t":
            i += 1
        if line[i:i + 2] != '="':
            return None
        i += 2
        value = []
        while True:
            if i >= n:
                return None
            c = line[i]
            if c == "\\":
                if i + 1 >= n or line[i + 1] not in _ESCAPES:
                    return None
                value.append(_ESCAPES[line[i + 1]])
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                value.append(c)
                i += 1
        labels.append((key, "".join(value)))
        while i < n and line[i] in " \t":
            i += 1
        if i < n and line[i] == ",":
            i += 1
        elif i < n and line[i] == "}":
            continue
        else:
            return None


def _number(text: str) -> float | None:
    lowered = text.lower()
    if lowered in ("nan",):
        return math.nan
    if lowered in ("+inf", "inf"):
        return math.inf
    if lowered == "-inf":
        return -math.inf
    try:
        return float(text)
    except ValueError:
        return None


def parse_line(line: str) -> Sample | None:
    """One sample line, or None when it is not one (comments and blanks included)."""
    line = line.strip()
    if not line or line[0] == "#" or len(line) > LINE_LIMIT:
        return None
    found = _NAME.match(line)
    if not found:
        return None
    name, i = found.group(), found.end()
    labels: tuple[tuple[str, str], ...] = ()
    if i < len(line) and line[i] == "{":
        parsed = _labels(line, i)
        if parsed is None:
            return None
        labels, i = parsed
    elif i < len(line) and line[i] not in " \t":
        return None
    rest = line[i:].split()
    if not 1 <= len(rest) <= 2:
        return None
    value = _number(rest[0])
    if value is None or (len(rest) == 2 and _number(rest[1]) is None):
        return None
    return Sample(name, labels, value)


def parse(text: str | bytes) -> Parsed:
    """Every sample of an exposition; lines that are neither samples nor comments/blanks are counted in `skipped`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    samples = []
    skipped = 0
    for line in text.splitlines():
        sample = parse_line(line)
        if sample is not None:
            samples.append(sample)
        elif line.strip() and not line.lstrip().startswith("#"):
            skipped += 1
    return Parsed(samples, skipped)


def totals(parsed: Parsed) -> dict[str, tuple[float, int]]:
    """name -> (sum of its finite values over every label set, how many series had one)."""
    out: dict[str, tuple[float, int]] = {}
    for sample in parsed.samples:
        if math.isfinite(sample.value):
            total, count = out.get(sample.name, (0.0, 0))
            out[sample.name] = (total + sample.value, count + 1)
    return out
