"""The plain fixed-width table `vlmkit run` and `vlmkit perf` print at the end."""

from __future__ import annotations

from typing import Any


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A plain fixed-width table for the console."""
    cells = [[_fmt(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) if cells else len(c) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    rule = "  ".join("-" * w for w in widths)
    body = ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join([line, rule, *body])


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1 else f"{value:.2f}"
    return "" if value is None else str(value)
