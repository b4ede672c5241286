"""OMTGBench's scorer (VLMEvalKit `OMTGBench.evaluate`, vlmeval/dataset/omtgbench.py at e8e78f05): temporal
grounding of one or more segments a question.

Segments are read from the reply and from the answer alike (`time_segments`): `<time>S - E seconds</time>` tags if
there are any (S and E as seconds, `m:s` or `h:m:s`); else every "S - E seconds"; else, all together, "starts at S
(seconds) and ends at E", "start is at S and (the) end is at E", "S to E", a bare "S - E" and "[S, E]" (plain numbers),
sorted by start with repeats dropped. A segment counts only when E > S. These are VLMEvalKit's patterns as they run:
the E of the two "starts at"/"start is at" forms is a lazy match with an optional tail, so it is one character ("ends
at 18" reads 1, and the segment is dropped); vlmkit reads them the same, so its figures stay VLMEvalKit's.

Per question (`segment_metrics`): C-Acc is 1 when the reply has as many segments as the answer; tIoU is the overlap
of the two unions of segments over their union; the segments are matched one to one for the largest summed IoU (an
optimal assignment, as scipy's `linear_sum_assignment`), and at each IoU threshold 0.3, 0.5, 0.7 precision = matches
at or above it / reply segments, recall = / answer segments, F1; EtF1 = C-Acc x the mean of the three F1. With no
segment on one side every P/R/F1 and EtF1 are 0 (1 when both have none). Figures are the means over all questions,
percent. The headline is EtF1 (VLMEvalKit's status report would pick C-Acc, its only key holding "acc").

VLMEvalKit's `merge_segments` extends, in place, the end of the earliest segment of each side to the end of the first
run of overlapping segments, before the IoU matrix is built, so its matching sees that longer segment; vlmkit matches
the segments as read. VLMEvalKit's figure (`EvalResult.vlmevalkit`) keeps that, on the replies as its xlsx gives them
back (`nan` for an empty reply: no segment). A failed inference is a reply with no segment in both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import vlmevalkit_cells
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, UNPARSED, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["THRESHOLDS", "best_matching", "score_omtgbench", "segment_metrics", "time_segments"]

THRESHOLDS = (0.3, 0.5, 0.7)
Segment = list  # [start, end] seconds

_TIME_TAG = re.compile(r"<time>(\S+?)\s*-\s*(\S+?)\s*seconds?</time>", re.IGNORECASE)
_WITH_UNIT = re.compile(r"(\d+(?::\d+(?:\.\d+)?)?(?:\.\d+)?)\s*-\s*(\d+(?::\d+(?:\.\d+)?)?(?:\.\d+)?)\s*seconds?",
                        re.IGNORECASE)
_CLOCK = "clock"
_OTHERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"starts\s+at\s+(\S+?)(?:\s+seconds?)?\s+and\s+ends\s+at\s+(\S+?)(?:\s+seconds?)?", re.IGNORECASE),
     _CLOCK),
    (re.compile(r"start\s+is\s+at\s+(\S+?)(?:\s+seconds?)?\s+and\s+(?:the\s+)?end\s+is\s+at\s+(\S+?)(?:\s+seconds?)?",
                re.IGNORECASE), _CLOCK),
    (re.compile(r"(\d+(?:\.\d+)?)\s+to\s+(\d+(?:\.\d+)?)", re.IGNORECASE), "number"),
    (re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)(?!\s*(?:seconds?|</time>))", re.IGNORECASE), "number"),
    (re.compile(r"\[\s*(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*\]", re.IGNORECASE), "number"),
)  # fmt: skip


def clock_seconds(text: str) -> float:
    """`S`, `M:S` or `H:M:S` as seconds; ValueError otherwise."""
    parts = text.strip().split(":")
    if len(parts) > 3:
        raise ValueError(f"not a time: {text!r}")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + float(part)
    return seconds


def _collect(pattern: re.Pattern[str], text: str, convert: Callable[[str], float], out: list[Segment]) -> None:
    for start_text, end_text in pattern.findall(text):
        try:
            start, end = convert(start_text.strip()), convert(end_text.strip())
        except (TypeError, ValueError):
            continue
        if end > start:
            out.append([start, end])


def time_segments(text: str) -> list[Segment]:
    """The segments a reply or an answer names (module docstring), sorted by start."""
    found: list[Segment] = []
    for pattern in (_TIME_TAG, _WITH_UNIT):
        _collect(pattern, text, clock_seconds, found)
        if found:
            return sorted(found, key=lambda s: s[0])
    for pattern, kind in _OTHERS:
        _collect(pattern, text, clock_seconds if kind == _CLOCK else float, found)
    unique: list[Segment] = []
    seen: set[tuple[float, float]] = set()
    for segment in sorted(found, key=lambda s: s[0]):
        if (segment[0], segment[1]) not in seen:
            seen.add((segment[0], segment[1]))
            unique.append(segment)
    return unique


def _merged(segments: Sequence[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for start, end in sorted(segments, key=lambda s: s[0]):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def _iou(a: Segment, b: Segment) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def best_matching(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """(row, column) pairs, one per row or column (the fewer), with the largest summed weight (the Hungarian method
    on a rectangular matrix)."""
    rows = [list(map(float, r)) for r in weights]
    if not rows or not rows[0]:
        return []
    flipped = len(rows) > len(rows[0])
    if flipped:
        rows = [list(col) for col in zip(*rows)]
    n, m = len(rows), len(rows[0])
    u, v = [0.0] * (n + 1), [0.0] * (m + 1)
    owner, way = [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        owner[0], col = i, 0
        slack, used = [float("inf")] * (m + 1), [False] * (m + 1)
        while True:
            used[col] = True
            row, delta, nxt = owner[col], float("inf"), 0
            for j in range(1, m + 1):
                if not used[j]:
                    reduced = -rows[row - 1][j - 1] - u[row] - v[j]
                    if reduced < slack[j]:
                        slack[j], way[j] = reduced, col
                    if slack[j] < delta:
                        delta, nxt = slack[j], j
            for j in range(m + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    slack[j] -= delta
            col = nxt
            if owner[col] == 0:
                break
        while col:
            prev = way[col]
            owner[col] = owner[prev]
            col = prev
    pairs = sorted((owner[j] - 1, j - 1) for j in range(1, m + 1) if owner[j])
    return sorted((c, r) for r, c in pairs) if flipped else pairs


def _earliest_extended(segments: list[Segment]) -> list[Segment]:
    """VLMEvalKit's in-place side effect of merge_segments (module docstring)."""
    if not segments:
        return segments
    out = [list(s) for s in segments]
    first = min(range(len(out)), key=lambda k: out[k][0])  # sorted() is stable: the first of equal starts
    out[first][1] = _merged(segments)[0][1]
    return out


def segment_metrics(reply: list[Segment], answer: list[Segment], *, vlmevalkit: bool = False) -> dict[str, float]:
    """One question's figures (module docstring), fractions; `vlmevalkit` matches VLMEvalKit's extended segments."""
    merged_reply, merged_answer = _merged(reply), _merged(answer)
    inter = sum(max(0.0, min(pe, ge) - max(ps, gs)) for ps, pe in merged_reply for gs, ge in merged_answer)
    union = sum(e - s for s, e in merged_reply) + sum(e - s for s, e in merged_answer) - inter
    out = {"C-Acc": 1.0 if len(reply) == len(answer) else 0.0, "tIoU": inter / union if union > 0 else 0.0}
    if not reply or not answer:
        both_empty = 1.0 if not reply and not answer else 0.0
        for th in THRESHOLDS:
            out.update({f"tP@{th}": both_empty, f"tR@{th}": both_empty, f"tF1@{th}": both_empty})
        out["EtF1"] = both_empty
        return out
    if vlmevalkit:
        reply, answer = _earliest_extended(reply), _earliest_extended(answer)
    ious = [[_iou(p, g) for g in answer] for p in reply]
    matched = [ious[r][c] for r, c in best_matching(ious)]
    for th in THRESHOLDS:
        hits = sum(1 for iou in matched if iou >= th)
        precision, recall = hits / len(reply), hits / len(answer)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        out.update({f"tP@{th}": precision, f"tR@{th}": recall, f"tF1@{th}": f1})
    out["EtF1"] = out["C-Acc"] * float(np.mean([out[f"tF1@{th}"] for th in THRESHOLDS]))
    return out


def _means(per_question: list[dict[str, float]]) -> dict[str, float]:
    keys = ["tIoU", "C-Acc", "EtF1", *[f"{k}@{th}" for th in THRESHOLDS for k in ("tF1", "tP", "tR")]]
    return {key: 100.0 * float(np.mean([q[key] for q in per_question])) for key in keys}


def score_omtgbench(df: pd.DataFrame) -> EvalResult:
    """OMTGBench predictions -> EvalResult (module docstring). Columns: index, prediction, answer."""
    records, _ = keyed_records(df, ("index", "prediction", "answer"), "OMTGBench")
    answers = [time_segments(str(r["answer"])) for r in records]
    methods: list[str] = []
    replies: list[list[Segment]] = []
    for row in records:
        segments = [] if is_missing(row["prediction"]) else time_segments(str(row["prediction"]))
        replies.append(segments)
        methods.append(INFERENCE_ERROR if is_missing(row["prediction"]) else RULE if segments else UNPARSED)
    ours = [segment_metrics(p, a) for p, a in zip(replies, answers)]
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    their_replies = [time_segments(str(cell)) for cell in back]
    theirs = [segment_metrics(p, a, vlmevalkit=True) for p, a in zip(their_replies, answers)]
    figure = VlmevalkitFigure(
        metrics=_means(theirs), primary="EtF1",
        differing=[ReadingDifference(r["index"], _text(p), _text(tp), o["EtF1"], t["EtF1"])
                   for r, p, tp, o, t in zip(records, replies, their_replies, ours, theirs) if o != t or p != tp],
        notes=["VLMEvalKit matches each side's earliest segment extended to the end of its first overlapping run"],
    )  # fmt: skip
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "segments": [_text(p) for p in replies], "method": methods,
        "EtF1": [q["EtF1"] for q in ours], "tIoU": [q["tIoU"] for q in ours], "C-Acc": [q["C-Acc"] for q in ours],
    })  # fmt: skip
    metrics = _means(ours)
    return EvalResult(
        scorer="omtgbench", metrics=metrics, primary="EtF1", per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="score",
        counts=method_counts(methods, len(records)), notes=["a failed inference is a reply with no segment"],
        scale=Scale(PERCENT), vlmevalkit=figure,
    )  # fmt: skip


def _text(segments: list[Segment]) -> str:
    return "; ".join(f"{s:g}-{e:g}" for s, e in segments)

