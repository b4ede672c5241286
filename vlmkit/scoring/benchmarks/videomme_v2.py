"""Video-MME-v2's scorer (VLMEvalKit `VideoMMEv2.evaluate` and `get_final_rating`, vlmeval/dataset/videommev2.py and
utils/videomme.py `extract_characters_regex_v2`, at e8e78f05).

The letter: answer prefixes removed ("Final Answer:", "The best answer is", ... "Option:", the list as VLMEvalKit has
it, commas and all), then the first capital A-H anywhere in the reply; none when there is none. A reply with no
letter goes to the judge when there is one, with the row's options (VLMEvalKit's fallback looks for options in the
question's lines, where Video-MME-v2 has none, and says Z there: a miss), else is a miss. A row scores 1 when its
letter is the answer.

Figures (VLMEvalKit's `get_final_rating`): rows are taken four at a time in table order (one question group each);
a group of type `relevance` scores by how many of its four are right, 0, 1, 2, 3, 4 -> 0, 100/16, 400/16, 900/16,
100 (`relevance_score`; its linear twin is 25 a right answer, `relevance_linear_score`); a group of type `logic` by
how many are right in a row from its first, on the scale of its `group_structure` ([1, 2, 3, 4]: /16 as above;
[1, [2, 3], 4]: 0, 100/12, 400/12, 700/12, 100, with the third right counting for the second when only the first is;
[[1, 2], 3, 4]: 0, 10, 20, 50, 100, with the second counting when the first is wrong) (`logic_score`). Each group's
score also goes to `level_<its level>`, to `total` (the headline: the mean over all groups) and to its
`second_head` and `third_head` (`second_head: <value>`, `third_head: <value>`); each figure is a mean, on 0..100.
A group's level, type, structure and heads are its last row's. VLMEvalKit's figure (`EvalResult.vlmevalkit`) is the
same rule on the replies as its xlsx gives them back (an empty reply, `N/A`, ... are `nan` there: no letter) and on
its fail message for a failed call (whose `F` reads as option F).
"""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import index_key, is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.video_letter_rows import judge_unread, letter_result, reading_differences, rule_letters
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, vlmevalkit_cells
from vlmkit.scoring.kinds.video_mcq import INFERENCE_ERROR
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import POINTS, Scale
from vlmkit.scoring.vlmevalkit_figure import VlmevalkitFigure

__all__ = ["GROUP_SIZE", "group_scores", "option_lines", "score_videomme_v2", "videomme_v2_letter"]

GROUP_SIZE = 4
PREFIXES = (
    "Final Answer:", "The best answer is", "The correct answer is", "The answer is", "The answer",
    "The best option is", "The correct option is", "Best answer:", "Best option:", "Answer:", "Option:",
)  # fmt: skip
_LETTER = re.compile(r"[A-H]")
_OPTION = re.compile(r"^\s*([A-H])[.:)]\s*(.*)$")
_SIXTEENTHS = {0: 0.0, 1: 100.0 / 16, 2: 100.0 * 4 / 16, 3: 100.0 * 9 / 16, 4: 100.0}
_LOGIC_SCALES = {
    "[1, 2, 3, 4]": _SIXTEENTHS,
    "[1, [2, 3], 4]": {0: 0.0, 1: 100.0 / 12, 2: 100.0 * 4 / 12, 3: 100.0 * 7 / 12, 4: 100.0},
    "[[1, 2], 3, 4]": {0: 0.0, 1: 100.0 / 10, 2: 100.0 * 2 / 10, 3: 100.0 * 5 / 10, 4: 100.0},
}
COLUMNS = ("index", "prediction", "answer", "question", "options", "group_type", "group_structure", "level",
           "second_head", "third_head")


def videomme_v2_letter(prediction: str) -> str | None:
    """VLMEvalKit's `extract_characters_regex_v2` (module docstring); None for no letter."""
    text = prediction.strip()
    for prefix in PREFIXES:
        text = text.replace(prefix, "")
    match = _LETTER.search(text)
    return match.group(0) if match else None


def option_lines(options: str) -> dict[str, str]:
    """A row's `options` text ("A. ...\\nB. ...") as {letter: text}."""
    out: dict[str, str] = {}
    for line in str(options).splitlines():
        match = _OPTION.match(line)
        if match:
            out[match.group(1)] = match.group(2).strip()
    return out


def _structure(value: Any, where: str) -> str:
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        parsed = None
    text = str(parsed)
    if text not in _LOGIC_SCALES:
        raise ValueError(f"{where}, field `group_structure`: {value!r} is none of {', '.join(_LOGIC_SCALES)}")
    return text


def _logic(scores: list[bool], structure: str) -> float:
    last = -1
    for pos, right in enumerate(scores):
        if not right:
            break
        last = pos
    if structure == "[1, [2, 3], 4]" and last == 0 and len(scores) > 2 and scores[2]:
        last += 1
    elif structure == "[[1, 2], 3, 4]" and last == -1 and len(scores) > 1 and scores[1]:
        last += 1
    return _LOGIC_SCALES[structure].get(last + 1, 0.0)


def group_scores(records: list[dict[str, Any]], hits: list[bool], what: str = "Video-MME-v2") -> dict[str, float]:
    """VLMEvalKit's `get_final_rating` over rows in table order (module docstring)."""
    buckets: dict[str, list[float]] = {k: [] for k in ("level_1", "level_2", "level_3", "relevance_score",
                                                       "relevance_linear_score", "logic_score", "total")}
    second: dict[str, list[float]] = {}
    third: dict[str, list[float]] = {}
    for start in range(0, len(records), GROUP_SIZE):
        last = records[min(start + GROUP_SIZE, len(records)) - 1]
        scores = [bool(h) for h in hits[start:start + GROUP_SIZE]]
        where = f"{what}: row index {last['index']}"
        kind = str(last["group_type"])
        if kind == "relevance":
            score = _SIXTEENTHS.get(sum(scores), 0.0)
            buckets["relevance_score"].append(score)
            buckets["relevance_linear_score"].append(25.0 * sum(scores))
        elif kind == "logic":
            score = _logic(scores, _structure(last["group_structure"], where))
            buckets["logic_score"].append(score)
        else:
            raise ValueError(f"{where}, field `group_type`: {kind!r} is neither relevance nor logic")
        level = last["level"]
        if not is_missing(level) and str(level) != "None":
            buckets.setdefault(f"level_{int(float(level))}", []).append(score)
        buckets["total"].append(score)
        second.setdefault(str(last["second_head"]), []).append(score)
        third.setdefault(str(last["third_head"]), []).append(score)
    metrics = {key: float(np.mean(values)) if values else 0.0 for key, values in buckets.items()}
    metrics.update({f"second_head: {k}": float(np.mean(v)) for k, v in second.items()})
    metrics.update({f"third_head: {k}": float(np.mean(v)) for k, v in third.items()})
    return metrics


def score_videomme_v2(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """Video-MME-v2 predictions -> EvalResult (module docstring); rows are put in `index` order first."""
    what = "Video-MME-v2"
    records, _ = keyed_records(df, COLUMNS, what)
    records.sort(key=lambda r: _sort_key(r["index"]))
    if len(records) % GROUP_SIZE:
        raise ValueError(f"{what}: questions come in groups of {GROUP_SIZE} consecutive rows; the predictions have "
                         f"{len(records)} rows")
    letters, methods = rule_letters(records, videomme_v2_letter)
    replies, judged = judge_unread(judge, records, letters, methods,
                                   lambda: [option_lines(r["options"]) for r in records])
    hits = [letters[i] is not None and letters[i] == str(r["answer"]).strip() for i, r in enumerate(records)]
    metrics = group_scores(records, hits)
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    theirs = [videomme_v2_letter(str(cell)) for cell in back]
    their_hits = [t is not None and t == str(r["answer"]).strip() for t, r in zip(theirs, records)]
    nan_rows = [r["index"] for r, f, cell in zip(records, failed, back)
                if not f and is_nan_cell(cell) and str(r["prediction"]) != "nan"]
    figure = VlmevalkitFigure(
        metrics=group_scores(records, their_hits), primary="total",
        differing=reading_differences(records, letters, theirs, hits, their_hits),
        notes=["VLMEvalKit scores a failed call by its fail message, whose 'F' reads as option F"],
    )  # fmt: skip
    notes = ["a failed inference is a miss", "VLMEvalKit's fallback finds no options in a Video-MME-v2 question "
             "(its options are a column of their own): a reply with no letter is a miss there; vlmkit's judge, when "
             "given, sees the row's options"]
    return letter_result(
        "videomme_v2", records, letters=letters, methods=methods, replies=replies, judged=judged, hits=hits,
        theirs=theirs, their_hits=their_hits, nan_rows=nan_rows, metrics=metrics, primary="total", notes=notes,
        scale=Scale(POINTS, out_of=100.0), figure=figure, table_suffix="score",
    )  # fmt: skip


def _sort_key(value: Any) -> tuple[int, Any]:
    key = index_key(value)
    try:
        return 0, float(key)
    except (TypeError, ValueError):
        return 1, str(key)
