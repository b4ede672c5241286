"""The figure VLMEvalKit would print for the same replies, kept beside vlmkit's own.

vlmkit reads replies more carefully than VLMEvalKit's rules, so on the same replies its number can be higher; a user
comparing with a leaderboard needs both. A scorer that knows VLMEvalKit's rule for its benchmark fills a
`VlmevalkitFigure` (its metrics under the same names and scales as vlmkit's, and every row where the two readings
differ); results.json carries it as `scoring.vlmevalkit`, the console and `vlmkit report` show it beside vlmkit's.

The rules are read from VLMEvalKit's code at `VLMEVALKIT_COMMIT` (open-compass/VLMEvalKit); every note that says
"VLMEvalKit does X" refers to that commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

VLMEVALKIT_COMMIT = "e8e78f05"
VLMEVALKIT_REPO = "open-compass/VLMEvalKit"

# results.json lists at most this many differing rows (the count is always exact); the per-sample file has them all.
MAX_LISTED_ROWS = 1000


@dataclass
class ReadingDifference:
    """One row the two readings take differently: what each read (a letter, Yes/No, a number...) and scored."""

    index: Any
    vlmkit: Any
    vlmevalkit: Any
    vlmkit_score: float | None = None
    vlmevalkit_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"index": self.index, "vlmkit": self.vlmkit, "vlmevalkit": self.vlmevalkit}
        if self.vlmkit_score is not None or self.vlmevalkit_score is not None:
            out["vlmkit_score"] = self.vlmkit_score
            out["vlmevalkit_score"] = self.vlmevalkit_score
        return out


@dataclass
class VlmevalkitFigure:
    """What VLMEvalKit (at `commit`) would report for the replies vlmkit scored.

    `metrics` use the names and scales of the EvalResult they sit in (so the two can be put side by side);
    `primary` is the headline's name there. `differing` lists the rows whose reading (or score) differs.
    `notes` say which of VLMEvalKit's quirks moved the figure (NaN replies, a row counted twice, ...)."""

    metrics: dict[str, float]
    primary: str
    differing: list[ReadingDifference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commit: str = VLMEVALKIT_COMMIT

    @property
    def primary_value(self) -> float | None:
        return self.metrics.get(self.primary)

    def to_dict(self) -> dict[str, Any]:
        """The `scoring.vlmevalkit` block of results.json."""
        return {
            "repo": VLMEVALKIT_REPO,
            "commit": self.commit,
            "primary_metric": {"name": self.primary, "value": self.primary_value},
            "metrics": self.metrics,
            "differing_rows": len(self.differing),
            "rows": [d.to_dict() for d in self.differing[:MAX_LISTED_ROWS]],
            "notes": self.notes,
        }
