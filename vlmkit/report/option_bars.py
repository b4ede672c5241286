"""A likelihood-scored sample's options as bars (issue 28): what the page's sample card draws for a row answered by
`--mcq-mode logits|continuation` (vlmkit.run.likelihood writes the figures into the record's `extra.likelihood`).

Per option, in the row's order: its log-probability as the record holds it (natural log over the whole vocabulary;
null where a server's top list did not name it), and its share: exp(logprob) renormalised over the options that
have a figure, so the bars of one row add up to 1 and show how sure the model was between its options (an option
without a figure gets no bar and is marked "not in the top list"). The bar of the chosen option (the prediction) and
that of the target are marked. In continuation mode the length-normalised figures (acc_norm's) are kept beside the
raw ones, and the shares are of the raw sums (the figure the prediction is the argmax of).

Perplexity rows (`mode: ppl`) have no options: no bars (their figure is the prediction). Reads only the record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Bar:
    option: str
    logprob: float | None  # None: not among the server's top_logprobs
    share: float | None  # of the options with a figure, summing to 1; None without a figure
    chosen: bool
    target: bool
    normalised: float | None = None  # continuation mode: the figure per character


@dataclass(frozen=True)
class OptionBars:
    mode: str  # logits | continuation
    bars: tuple[Bar, ...]
    source: str | None = None  # "top_logprobs" for a served model's figures

    def entry(self) -> dict[str, Any]:
        """The compact form page.js reads: mode, source, and per bar [option, logprob, share, chosen, target,
        normalised] (numbers rounded to 4 significant places: figures to read, not to recompute)."""
        return {"m": self.mode, "src": self.source,
                "b": [[b.option, _round(b.logprob), _round(b.share), b.chosen, b.target, _round(b.normalised)]
                      for b in self.bars]}


def _round(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.4g}")


def _figure(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value) if value != math.inf else None


def read_bars(record: dict[str, Any]) -> OptionBars | None:
    """The bars of a predictions.jsonl record, or None for a record not scored by options (generation, ppl, an
    error, figures of the wrong shape)."""
    extra = record.get("extra")
    found = extra.get("likelihood") if isinstance(extra, dict) else None
    if not isinstance(found, dict) or found.get("mode") not in ("logits", "continuation"):
        return None
    logprobs = found.get("logprobs")
    if not isinstance(logprobs, dict) or not logprobs:
        return None
    figures = {str(k): _figure(v) for k, v in logprobs.items()}
    listed = [v for v in figures.values() if v is not None and v != -math.inf]
    top = max(listed) if listed else None
    total = sum(math.exp(v - top) for v in listed) if top is not None else 0.0
    normalised = found.get("normalised") if isinstance(found.get("normalised"), dict) else {}
    chosen = record.get("prediction")
    target = record.get("target")
    target = str(target).strip().casefold() if target is not None else None  # a Y/N target may be "yes"
    bars = []
    for option, value in figures.items():
        share = math.exp(value - top) / total if value is not None and value != -math.inf and total else None
        bars.append(Bar(option, value, share, option == chosen, option.casefold() == target,
                        _figure(normalised.get(option))))
    source = found.get("source") if isinstance(found.get("source"), str) else None
    return OptionBars(str(found["mode"]), tuple(bars), source)
