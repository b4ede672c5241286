"""The steps every video MCQ scorer in the Video-MME family shares (Video-TT, WorldSense, EgoExoBench, Video-MME-v2,
AV-SpeakerBench): read one letter a reply by the benchmark's rule, ask the judge (when given) for the replies no rule
read, list the rows where VLMEvalKit's reading differs from vlmkit's, and put the result together (counts, notes, the
per-sample table) the same way. Each scorer keeps its own rule, figures and notes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.common.choice_judge import judge_notes
from vlmkit.scoring.common.vlmevalkit_cells import nan_note
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR, RULE, UNPARSED, ask_unread, method_counts
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = ["judge_unread", "letter_hits", "letter_result", "reading_differences", "rule_letters"]


def rule_letters(records: list[dict[str, Any]], read: Callable[[str], str | None]
                 ) -> tuple[list[str | None], list[str]]:
    """Each row's letter as `read` finds it in the reply, and how it was read: RULE, UNPARSED (the rule read
    nothing) or INFERENCE_ERROR (no reply)."""
    letters: list[str | None] = [None] * len(records)
    methods = [INFERENCE_ERROR] * len(records)
    for i, row in enumerate(records):
        if not is_missing(row["prediction"]):
            letters[i] = read(str(row["prediction"]))
            methods[i] = RULE if letters[i] is not None else UNPARSED
    return letters, methods


def letter_hits(records: list[dict[str, Any]], letters: Sequence[str | None]) -> np.ndarray:
    """Whether each row's letter is its `answer` (stripped); a row with no letter is a miss."""
    return np.array([letter is not None and letter == str(row["answer"]).strip()
                     for row, letter in zip(records, letters)])


def judge_unread(judge: Judge | None, records: list[dict[str, Any]], letters: list[str | None], methods: list[str],
                 options: Callable[[], Sequence[dict[str, str]]]) -> tuple[list[str | None], bool]:
    """Asks the judge for the rows no rule read (`options()`: every row's {letter: text}, built only when asked),
    updating `letters` and `methods` in place; the judge's reply for each row and whether it was asked at all."""
    replies: list[str | None] = [None] * len(records)
    ask = [i for i, method in enumerate(methods) if method == UNPARSED]
    if judge is None or not ask:
        return replies, False
    for i, verdict in ask_unread(judge, records, list(options()), ask).items():
        methods[i], letters[i], replies[i] = verdict.method, verdict.value, verdict.reply
    return replies, True


def reading_differences(records: list[dict[str, Any]], ours: Sequence[str | None], theirs: Sequence[str | None],
                        hits: Sequence[Any], their_hits: Sequence[Any], methods: Sequence[str] | None = None
                        ) -> list[ReadingDifference]:
    """The rows whose letter or hit differs between vlmkit's reading and VLMEvalKit's; with `methods`, rows whose
    inference failed are left out."""
    return [
        ReadingDifference(row["index"], our, their, float(hit), float(their_hit))
        for i, (row, our, their, hit, their_hit) in enumerate(zip(records, ours, theirs, hits, their_hits))
        if (methods is None or methods[i] != INFERENCE_ERROR) and (our != their or bool(hit) != bool(their_hit))
    ]


def letter_result(scorer: str, records: list[dict[str, Any]], *, letters: list[str | None], methods: list[str],
                  replies: list[str | None], judged: bool, hits: Sequence[Any], theirs: list[str | None],
                  their_hits: Sequence[Any], nan_rows: list[Any], metrics: dict[str, float], primary: str,
                  notes: list[str], scale: Scale, figure: VlmevalkitFigure, table_suffix: str = "acc") -> EvalResult:
    """The EvalResult of a letter scorer: `notes` then the judge's notes (`judged`: whether it was asked) and the
    note on replies VLMEvalKit reads back as NaN (`nan_rows`), the method counts, and the per-sample table."""
    notes = [*notes, *judge_notes(methods, judged, methods.count(UNPARSED))]
    counts = method_counts(methods, len(records))
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    per_sample = pd.DataFrame({
        "index": [r["index"] for r in records], "extracted": pd.Series(letters, dtype=object), "hit": hits,
        "method": methods, "judge": replies, "vlmevalkit": pd.Series(theirs, dtype=object),
        "vlmevalkit_hit": their_hits,
    })  # fmt: skip
    return EvalResult(
        scorer=scorer, metrics=metrics, primary=primary, per_sample=per_sample,
        table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix=table_suffix, counts=counts, notes=notes,
        scale=scale, vlmevalkit=figure,
    )  # fmt: skip
