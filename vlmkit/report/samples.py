"""predictions.jsonl as per-sample verdicts: what the page's sample browser and the diff show.

Verdicts, from the fields a run writes (docs/outputs.md):
- `error`: the call failed or was not run (`error` is set, or there is no prediction);
- `unread`: answered, but no answer could be read from it (`method`: `unparsed` by the rules, `judge_unread` by the
  judge, `judge_error` the judge call failed; a miss);
- `hit` / `miss`: the scorer's `hit` (MCQ, Y/N, OCRBench), or a per-row score of 1 / 0 (VQA's `score`, text QA's
  primary metric);
- `partial`: a per-row score strictly between 0 and 1 (VQA soft score, ANLS);
- `unscored`: no verdict (no target, an invalid target, a run scored with --mode infer).

Shown beside them: the reply's reasoning (`reasoning` or `extra.reasoning_content`, else a leading
`<think>...</think>` block of the prediction), how the answer was read (`method`: exact, marker, cue, option_text,
fuzzy, judge, ...), and the judge's analysis where a judge read it (`judge`: a string, or an object with
`analysis`, `reply` or `text`).

GUI grounding (vlmkit.scoring.benchmarks.gui_grounding) adds the click it read to each row: `x`, `y` (0-1 of the
screenshot's width and height; null where no point was read) and the target `box` ([x0, y0, x1, y1], 0-1); a Sample
keeps them as `click` (the page draws them over the screenshot's thumbnail). Values that are not finite numbers, or a
box that is not four of them, are left out.

A row answered by likelihood (`--mcq-mode logits|continuation`: `extra.likelihood`) keeps its options' figures as
`bars` (vlmkit.report.option_bars: each option's log-probability and its share among the options, the chosen one and
the target marked), which the sample card draws as bars.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlmkit.core.cells import index_key
from vlmkit.outputs.schema import PredictionRecord, UnreadableFile, read_predictions
from vlmkit.report.option_bars import OptionBars, read_bars
from vlmkit.report.runs import ReportInputError

VERDICTS = ("hit", "miss", "partial", "unread", "error", "unscored")
WRONG = frozenset({"miss", "partial", "unread"})
UNREAD_METHODS = frozenset({"unparsed", "judge_unread", "judge_error"})  # no answer read: by rule, judge, or at all
_THINK_RE = re.compile(r"^\s*<think>(.*?)</think>\s*", re.S)
_UNSCORED_METHODS = frozenset({"invalid_target", "no_target"})
_CATEGORY_FIELDS = ("category", "l2-category", "split")


@dataclass(frozen=True)
class Click:
    """A GUI grounding row's click: the point read (None where none was) and the target box, each as fractions
    (0-1) of the screenshot's width and height."""

    point: tuple[float, float] | None
    box: tuple[float, float, float, float] | None


def _fraction(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def read_click(record: dict[str, Any]) -> Click | None:
    """The click of a GUI grounding record (`x`, `y`, `box`); None where the record has neither a point nor a box."""
    x, y = _fraction(record.get("x")), _fraction(record.get("y"))
    point = (x, y) if x is not None and y is not None else None
    raw = record.get("box")
    box = None
    if isinstance(raw, (list, tuple)) and len(raw) == 4:
        numbers = [_fraction(v) for v in raw]
        if all(v is not None for v in numbers):
            box = tuple(numbers)  # type: ignore[assignment]
    if point is None and box is None:
        return None
    return Click(point, box)  # type: ignore[arg-type]


@dataclass
class Sample:
    index: Any
    verdict: str
    prediction: str | None = None
    reasoning: str | None = None
    extracted: Any = None
    method: str | None = None
    target: Any = None
    score: float | None = None
    group_hit: bool | None = None  # circular MCQ: every rotation of the question right
    error: str | None = None  # `kind: message`
    judge: str | None = None
    category: str | None = None
    prompt: list[dict[str, Any]] = field(default_factory=list)  # turns: {role, content: [{type, value}]}
    metadata: dict[str, Any] = field(default_factory=dict)
    click: Click | None = None  # GUI grounding: the point read and the target box, fractions of the screenshot
    bars: OptionBars | None = None  # --mcq-mode logits|continuation: each option's figure (vlmkit.report.option_bars)

    @property
    def key(self) -> str:
        return index_key(self.index)

    def prompt_text(self) -> str:
        """The prompt's text parts, turns separated by a blank line (roles shown when there are several turns)."""
        turns = []
        for turn in self.prompt:
            text = "\n".join(str(p.get("value")) for p in turn.get("content") or [] if p.get("type") == "text")
            if len(self.prompt) > 1:
                text = f"[{turn.get('role', 'user')}] {text}"
            turns.append(text)
        return "\n\n".join(turns)

    def media(self) -> list[tuple[str, str]]:
        """(type, value) of each image, video and audio part, in prompt order."""
        return [
            (str(p.get("type")), str(p.get("value")))
            for turn in self.prompt
            for p in turn.get("content") or []
            if p.get("type") in ("image", "video", "audio")
        ]


def _score(record: dict[str, Any], primary: str | None) -> float | None:
    for name in ("score", primary):
        value = record.get(name) if name else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def verdict(record: dict[str, Any], primary: str | None = None) -> str:
    """One of VERDICTS for a predictions.jsonl record (see the module docstring)."""
    method = record.get("method")
    if record.get("error") or record.get("prediction") is None or method == "inference_error":
        return "error"
    if method in UNREAD_METHODS:
        return "unread"
    if method in _UNSCORED_METHODS:
        return "unscored"
    hit = record.get("hit")
    if isinstance(hit, bool):
        return "hit" if hit else "miss"
    score = _score(record, primary)
    if score is None:
        return "unscored"
    if score >= 1:
        return "hit"
    return "miss" if score <= 0 else "partial"


def _reasoning(record: dict[str, Any]) -> tuple[str | None, str | None]:
    """(reasoning, the reply without it)."""
    prediction = record.get("prediction")
    extra = record.get("extra") if isinstance(record.get("extra"), dict) else {}
    reasoning = record.get("reasoning") or extra.get("reasoning_content") or extra.get("reasoning")
    if reasoning:
        return str(reasoning), prediction
    if isinstance(prediction, str):
        m = _THINK_RE.match(prediction)
        if m:
            return m.group(1).strip(), prediction[m.end():]
    return None, prediction


def _judge(record: dict[str, Any]) -> str | None:
    judge = record.get("judge")
    if isinstance(judge, dict):
        judge = judge.get("analysis") or judge.get("reply") or judge.get("text")
    return str(judge) if judge else None


def _error(record: dict[str, Any]) -> str | None:
    error = record.get("error")
    if isinstance(error, dict):
        kind, message = error.get("kind") or "error", error.get("message")
        return f"{kind}: {message}" if message else str(kind)
    if error:
        return str(error)
    return None if record.get("prediction") is not None else "no prediction"


def _category(metadata: dict[str, Any]) -> str | None:
    for name in _CATEGORY_FIELDS:
        value = metadata.get(name)
        if value is not None and str(value).strip():
            return str(value)
    return None


def to_sample(record: dict[str, Any], primary: str | None = None) -> Sample:
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    reasoning, prediction = _reasoning(record)
    prompt = record.get("prompt")
    group_hit = record.get("group_hit")
    found = verdict(record, primary)
    return Sample(
        index=record.get("index"),
        verdict=found,
        prediction=prediction,
        reasoning=reasoning,
        extracted=record.get("extracted"),
        method=record.get("method"),
        target=record.get("target"),
        score=_score(record, primary),
        group_hit=group_hit if isinstance(group_hit, bool) else None,
        error=_error(record) if found == "error" else None,
        judge=_judge(record),
        category=_category(metadata),
        prompt=[t for t in prompt if isinstance(t, dict)] if isinstance(prompt, list) else [],
        metadata=metadata,
        click=read_click(record),
        bars=read_bars(record),
    )


def read_records(path: Path, warnings: list[str] | None = None) -> Iterator[PredictionRecord]:
    """The records of a predictions.jsonl, in order (vlmkit.outputs.schema.read_predictions). A line that is not a
    JSON object is an error naming the file and line (predictions.jsonl is written whole, never half); a field of
    the wrong type is left out, said in one line appended to `warnings`."""
    try:
        yield from read_predictions(path, warnings)
    except UnreadableFile as exc:
        raise ReportInputError(str(exc)) from None


def read_samples(path: Path, primary: str | None = None, warnings: list[str] | None = None) -> list[Sample]:
    """Every sample of a predictions.jsonl; primary: the run's primary metric (text QA scores rows under it)."""
    return [to_sample(record, primary) for record in read_records(path, warnings)]
