"""The scale of every figure a scorer reports, and which way is better.

Each kind keeps the scale VLMEvalKit reports for it, so figures compare with published ones: MCQ accuracy is a
`fraction` (0..1); Y/N, VQA and text QA figures are `percent` (0..100); MME and OCRBench report `points` (sums of
per-category scores; `out_of` says the most a run could score where the scorer knows it: 200 per MME category,
one per OCRBench row). Every scorer sets its scales on its EvalResult, and results.json carries them
(`scoring.primary_metric.scale`, `scoring.scale`, `scoring.metric_scales`), so a reader never mixes 0.81 and 81.

`infer_scale` reads the scale of a results.json written before scales were recorded, from the scorer's name (its
row in the scorer-id table, vlmkit.scoring.ids) and the metric's name only (the report says when it did). No pandas
here: the report imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlmkit.scoring.ids import FRACTION, PERCENT, POINTS, results_scale

SCALES = (FRACTION, PERCENT, POINTS)


@dataclass(frozen=True)
class Scale:
    kind: str  # one of SCALES
    higher_is_better: bool = True
    out_of: float | None = None  # points: the most a run could score, where known

    def __post_init__(self) -> None:
        if self.kind not in SCALES:
            raise ValueError(f"unknown scale {self.kind!r}; choose one of {', '.join(SCALES)}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scale": self.kind, "higher_is_better": self.higher_is_better}
        if self.out_of is not None:
            out["out_of"] = self.out_of
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Scale | None:
        """The Scale a results.json block describes, or None when it names none (or an unknown one)."""
        if not isinstance(data, dict) or data.get("scale") not in SCALES:
            return None
        out_of = data.get("out_of")
        return cls(
            data["scale"],
            bool(data.get("higher_is_better", True)),
            float(out_of) if isinstance(out_of, (int, float)) and not isinstance(out_of, bool) else None,
        )

    def label(self) -> str:
        """`fraction`, `percent`, `points /2800`."""
        if self.kind == POINTS and self.out_of is not None:
            return f"points /{self.out_of:g}"
        return self.kind

    def format(self, value: float | None) -> str:
        """A value as the scale shows it: fractions with 4 decimals (0.8056), percent with 2 (80.56), points with
        2 unless whole (1523.45, 812)."""
        if value is None:
            return ""
        if self.kind == FRACTION:
            return f"{value:.4f}"
        if self.kind == POINTS and float(value).is_integer():
            return f"{value:.0f}"
        return f"{value:.2f}"


MME_CATEGORY_POINTS = 200.0  # acc + acc+, each out of 100


def default_scale(scorer: str) -> Scale | None:
    """The scale of most figures of a scorer, by its results.json spelling (the scorer-id table,
    vlmkit.scoring.ids); None for a scorer vlmkit does not know, or whose scale differs by dataset."""
    scale = results_scale(scorer)
    if scale is not None:
        return Scale(scale)
    if scorer.startswith("vqa_"):  # a VQA metric's results spelling
        return Scale(PERCENT)
    return None


def infer_scale(scorer: str, metric: str) -> Scale | None:
    """The scale of `metric` as `scorer` reports it, from the names alone (for results.json files written before
    scales were recorded). `out_of` is given only where it does not depend on the data (MME's full benchmark)."""
    if scorer == "yorn_mme":
        if metric.endswith(("/acc", "/acc+")):
            return Scale(PERCENT)
        if metric in ("Overall", "perception", "reasoning"):
            return Scale(POINTS)  # sums over the categories present: no fixed maximum
        return Scale(POINTS, out_of=MME_CATEGORY_POINTS)
    if scorer == "ocrbench":
        return Scale(PERCENT) if metric == "Final Score Norm" else Scale(POINTS)
    if scorer == "caption" and metric == "CIDEr":
        return Scale(POINTS, out_of=1000.0)
    return default_scale(scorer)
