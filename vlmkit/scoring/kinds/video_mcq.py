"""Scoring of the video MCQ benchmarks VLMEvalKit builds from snapshots: Video-MME, MVBench (and MVBench_MP4),
LongVideoBench (`score_longvideobench`: Video-MME's letter rule over A-E, figures per duration group and category);
`ask_unread` and `method_counts` serve the video scorers of vlmkit/scoring/benchmarks/ too (MLVU_MCQ).

Video-MME (VLMEvalKit `VideoMME.evaluate`, `utils/videomme.py`):
- the reply's letter is `extract_characters_regex`: answer prefixes removed ("The best answer is", ...), then the
  first capital A-D anywhere; nothing when there is none, or when more than 10 words hold none;
- a reply no rule reads goes to the judge when there is one (VLMEvalKit's `extract_option`), else is a miss;
- figures are fractions (0..1), VLMEvalKit's `get_dimension_rating`: the mean score per duration (short, medium,
  long) and over all rows (`overall`), each also split by domain, sub_category and task_type. `metrics` holds
  `Overall`, the three durations and the per-value means over all rows (`domain: Knowledge`, ...); `table` has
  one row per duration and `overall`, with every group's columns.

MVBench (VLMEvalKit `MVBench.evaluate`, `utils/mvbench.py`): the target is `(L) text`, L the answer's position
among the candidates. A reply is right when its first space-separated word (lower-cased, dots removed) is part
of `(l)` or holds it (`check_ans`); otherwise VLMEvalKit's `can_infer` reads a letter from the whole reply
against the candidates (`extract_answer_from_item` without a judge), and with a judge a reply that names nothing
goes to the judge. Figures are percent, per task_type and overall (correct / total).

VLMEvalKit's own figure (`EvalResult.vlmevalkit`), for the replies as its xlsx round trip gives them back (an empty
reply, `None`, `N/A`... are NaN there): Video-MME with its prefix list as it is and its fallback, which finds no
options in a Video-MME question (a miss), figures rounded to 3 decimals; MVBench with its first-word test as it is, a
NaN reply counted as right (its score is left NaN, which the rating counts), figures with 2 decimals.

Deliberate differences from VLMEvalKit (each also in EvalResult.notes):
- Video-MME's prefix list lacks two commas, so "The best option is", "The correct option is", "Best answer:" and
  "Best option:" are never removed and the B of a leading "Best ..." reads as option B; vlmkit removes each prefix.
- Video-MME's judge fallback builds the options from question lines that the Video-MME question does not have,
  so VLMEvalKit's judge sees no options; vlmkit gives the judge the row's candidates.
- MVBench's first-word test counts an empty first word (a reply starting with a space, a blank reply) and a bare
  bracket as right, because "" and "(" are part of "(a)"; vlmkit requires a letter or digit in that word.
- a failed inference is a miss in both (MVBench's rating counts its -1 score as right).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vlmkit.core.cells import is_missing
from vlmkit.judging import Judge
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.choice_judge import (
    MCQ_TEMPERATURES,
    NO_OPTION,
    ask_judge,
    judge_notes,
    mcq_judge_prompt,
    read_mcq_reply,
    row_keys,
)
from vlmkit.scoring.common.choice_reading import vlmevalkit_read
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_cells import is_nan_cell, nan_note, vlmevalkit_cells
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

__all__ = [
    "DURATIONS", "VIDEOMME_GROUPS", "candidate_list", "candidate_options", "mvbench_first_word", "mvbench_target",
    "INFERENCE_ERROR", "RULE", "UNPARSED", "ask_unread", "method_counts", "score_longvideobench", "score_mvbench",
    "score_videomme", "videomme_letter", "videomme_vlmevalkit_readings",
]  # fmt: skip

RULE, UNPARSED, INFERENCE_ERROR = "rule", "unparsed", "inference_error"
DURATIONS = ("short", "medium", "long")
VIDEOMME_GROUPS = ("domain", "sub_category", "task_type")
VIDEOMME_PREFIXES = (
    "The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
    "The correct option is", "Best answer:", "Best option:", "Answer:", "Option:",
)  # fmt: skip
# VLMEvalKit's list as it runs: two missing commas glue four of its prefixes into two strings that never occur
VLMEVALKIT_VIDEOMME_PREFIXES = (
    "The best answer is", "The correct answer is", "The answer is", "The answer",
    "The best option isThe correct option is", "Best answer:Best option:", "Answer:", "Option:",
)  # fmt: skip
_ABCD = re.compile(r"[ABCD]")
_WORD_CHAR = re.compile(r"[0-9a-z]")

NOTE_VIDEOMME_PREFIXES = (
    "Video-MME letter rule: VLMEvalKit's answer-prefix list lacks two commas, so 'The best option is', 'The correct "
    "option is', 'Best answer:' and 'Best option:' are never removed and the B of 'Best ...' reads as option B; "
    "vlmkit removes each prefix"
)
NOTE_VIDEOMME_JUDGE = (
    "Video-MME judge fallback: VLMEvalKit builds the judge's options from question lines the Video-MME question "
    "does not have (its judge sees no options); vlmkit gives the judge the row's candidates"
)
NOTE_MVBENCH_EMPTY = (
    "MVBench first-word rule: VLMEvalKit counts a reply whose first word is empty or only punctuation (a blank "
    "reply, a leading space, a bare '(') as right, since '' and '(' are part of '(a)'; vlmkit requires a letter or "
    "digit in that word"
)
NOTE_VIDEOMME_ROUNDED = "VLMEvalKit prints Video-MME's figures rounded to 3 decimals; so does this figure"
NOTE_VIDEOMME_THEIR_JUDGE = (
    "VLMEvalKit's fallback for a reply its letter rule cannot read finds no options in a Video-MME question, so "
    "neither can_infer nor its judge can name one: those rows are misses in its figure"
)
NOTE_FAILED = "a failed inference is a miss (MVBench's rating in VLMEvalKit counts its -1 score as right)"


# --- Video-MME -------------------------------------------------------------------------------------------------
def videomme_letter(prediction: str, letters: str = "ABCD") -> str | None:
    """VLMEvalKit's `extract_characters_regex` with every listed prefix removed: the first of `letters` (A-D for
    Video-MME, A-E for LongVideoBench), or None."""
    text = prediction.strip()
    for prefix in VIDEOMME_PREFIXES:
        text = text.replace(prefix, "")
    match = (_ABCD if letters == "ABCD" else re.compile(f"[{letters}]")).search(text)
    if match is None:  # (VLMEvalKit's "more than 10 words and no A-D" test gives the same answer)
        return None
    return match.group(0)


def candidate_options(candidates: Sequence[str]) -> dict[str, str]:
    """Video-MME candidates (`A. text`, ...) as {letter: text}; a candidate without its `L.` prefix is kept whole."""
    out: dict[str, str] = {}
    for pos, text in enumerate(candidates):
        letter = chr(ord("A") + pos)
        value = str(text)
        out[letter] = value[len(letter) + 1:].strip() if value.startswith(f"{letter}.") else value
    return out


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def score_videomme(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """Video-MME predictions -> EvalResult (module docstring). Columns: index, prediction, answer (a letter),
    question, candidates (a list of `L. text`), duration, domain, sub_category, task_type."""
    what = "Video-MME"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "candidates", "duration",
                                    *VIDEOMME_GROUPS), what)
    n = len(records)
    letters: list[str | None] = [None] * n
    methods = [INFERENCE_ERROR] * n
    replies: list[str | None] = [None] * n
    for i, row in enumerate(records):
        if is_missing(row["prediction"]):
            continue
        letters[i] = videomme_letter(str(row["prediction"]))
        methods[i] = RULE if letters[i] is not None else UNPARSED
    options = [
        candidate_options(candidate_list(row["candidates"], f"{what}: row index {row['index']}, field `candidates`"))
        for row in records
    ]
    ask = [i for i in range(n) if methods[i] == UNPARSED]
    if judge is not None and ask:
        verdicts = ask_unread(judge, records, options, ask)
        for i, verdict in verdicts.items():
            methods[i], letters[i], replies[i] = verdict.method, verdict.value, verdict.reply
    hits = np.array([letters[i] is not None and letters[i] == str(records[i]["answer"]).strip() for i in range(n)])
    per_sample = pd.DataFrame({
        "index": [row["index"] for row in records], "extracted": letters, "hit": hits, "method": methods,
        "judge": replies,
    })  # fmt: skip
    metrics, table_rows, frame = _videomme_figures(records, hits)
    theirs, their_hits, nan_rows, asked_rows = videomme_vlmevalkit_readings(records,
                                                                            [m == INFERENCE_ERROR for m in methods])
    their_metrics = {k: round(v, 3) for k, v in _videomme_figures(records, their_hits)[0].items()}
    figure = VlmevalkitFigure(
        metrics=their_metrics, primary="Overall",
        differing=[
            ReadingDifference(row["index"], ours, their, float(hit), float(their_hit))
            for row, ours, their, hit, their_hit, method in zip(records, letters, theirs, hits, their_hits, methods)
            if method != INFERENCE_ERROR and (ours != their or bool(hit) != bool(their_hit))
        ],
        notes=[NOTE_VIDEOMME_ROUNDED, NOTE_VIDEOMME_THEIR_JUDGE],
    )  # fmt: skip
    per_sample["vlmevalkit"] = pd.Series(theirs, dtype=object)
    per_sample["vlmevalkit_hit"] = their_hits
    if nan_rows:
        figure.notes.append(nan_note(nan_rows, "reads the reply itself"))
    if asked_rows and judge is not None:
        figure.notes.append(f"{len(asked_rows)} row(s) whose question holds option lines would go to VLMEvalKit's "
                            "judge; counted here as its rule reads them (misses where it reads nothing)")
    unknown = sorted(set(frame["duration"]) - set(DURATIONS))
    notes = [NOTE_VIDEOMME_PREFIXES, NOTE_VIDEOMME_JUDGE, NOTE_FAILED]
    if unknown:
        notes.append(f"durations other than short/medium/long ({', '.join(unknown)}) count in overall only")
    notes += judge_notes(methods, judge is not None and bool(ask), methods.count(UNPARSED))
    counts = method_counts(methods, n)
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    return EvalResult(
        scorer="videomme", metrics=metrics, primary="Overall", per_sample=per_sample,
        table=pd.DataFrame(table_rows), table_suffix="acc", counts=counts, notes=notes,
        scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip


def _videomme_figures(records: list[dict[str, Any]], hits: Sequence[bool]
                      ) -> tuple[dict[str, float], list[dict[str, Any]], pd.DataFrame]:
    """(metrics, table rows, the per-row frame) of get_dimension_rating from per-row hits."""
    frame = pd.DataFrame({"duration": [str(r["duration"]) for r in records], "score": np.asarray(hits, dtype=float),
                          **{g: [str(r[g]) for r in records] for g in VIDEOMME_GROUPS}})
    metrics: dict[str, float] = {"Overall": _mean(frame["score"])}
    present = [d for d in DURATIONS if (frame["duration"] == d).any()]  # a duration without rows has no figure
    for duration in present:
        metrics[duration] = _mean(frame.loc[frame["duration"] == duration, "score"])
    for group in VIDEOMME_GROUPS:
        for value, scores in frame.groupby(group, sort=True)["score"]:
            metrics[f"{group}: {value}"] = _mean(scores)
    table_rows = []
    for duration in (*present, "overall"):
        part = frame if duration == "overall" else frame[frame["duration"] == duration]
        row: dict[str, Any] = {"duration": duration, "Overall": _mean(part["score"])}
        for group in VIDEOMME_GROUPS:
            for value in sorted(frame[group].unique()):
                row[f"{group}: {value}"] = _mean(part.loc[part[group] == value, "score"])
        table_rows.append(row)
    return metrics, table_rows, frame


def vlmevalkit_videomme_letter(text: str, letters: str = "ABCD") -> str | None:
    """VLMEvalKit's Video-MME `extract_characters_regex` as it is (its prefix list with the two missing commas);
    LongVideoBench's copy reads A-E."""
    s = text.strip()
    for prefix in VLMEVALKIT_VIDEOMME_PREFIXES:
        s = s.replace(prefix, "")
    match = (_ABCD if letters == "ABCD" else re.compile(f"[{letters}]")).search(s)
    return match.group(0) if match else None


def videomme_vlmevalkit_readings(records: list[dict[str, Any]], failed: list[bool], letters: str = "ABCD"
                         ) -> tuple[list[str | None], list[bool], list[Any], list[int]]:
    """VLMEvalKit's reading of every row (its rule on the reply its xlsx round trip gives back; where that reads
    nothing, `extract_option`: options from the question's lines, none in Video-MME's questions, so can_infer and its
    judge can only say Z, a miss), its hits, the indices of `nan` replies, and the rows whose question holds option
    lines (their judge asks are not reproduced)."""
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    readings: list[str | None] = []
    hits: list[bool] = []
    nan_rows: list[Any] = []
    asked: list[int] = []
    for i, (row, cell) in enumerate(zip(records, back)):
        letter = None
        if not failed[i]:
            if is_nan_cell(cell) and str(row["prediction"]) != "nan":
                nan_rows.append(row["index"])
            text = str(cell)
            letter = vlmevalkit_videomme_letter(text, letters)
            if letter is None:
                choices = _question_options(str(row["question"]))
                if choices:
                    asked.append(i)
                    letter = vlmevalkit_read(text, choices)
        readings.append(letter)
        hits.append(letter is not None and letter == str(row["answer"]))
    return readings, hits, nan_rows, asked


def _question_options(question: str) -> dict[str, str]:
    """The options VLMEvalKit's extract_option finds in the lines after the question's first (`A.` in line k)."""
    out = {}
    for pos, line in enumerate(question.split("\n")[1:]):
        tag = chr(ord("A") + pos) + "."
        found = line.find(tag)
        if found >= 0:
            out[chr(ord("A") + pos)] = line[found + len(tag):].strip(". \n")
    return out


# --- LongVideoBench ----------------------------------------------------------------------------------------------
LONGVIDEOBENCH_GROUPS = ("duration_group", "question_category")


def score_longvideobench(df: pd.DataFrame, *, judge: Judge | None = None) -> EvalResult:
    """LongVideoBench predictions -> EvalResult. VLMEvalKit's `LongVideoBench.evaluate` (utils/longvideobench.py at
    e8e78f05): the letter is Video-MME's rule over A-E (its prefix list with the same two missing commas); a reply no
    rule reads goes to the judge when there is one (VLMEvalKit's `extract_option` finds no options in the stored
    question, as for Video-MME: a miss there). Figures are fractions: `Overall`, per duration group
    (`duration_group: 15`, ...) and per question category, VLMEvalKit's get_dimension_rating printed with 3
    decimals in its figure. Columns: index, prediction, answer (a letter), question, candidates (a list of texts),
    duration_group, question_category."""
    what = "LongVideoBench"
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "candidates",
                                    *LONGVIDEOBENCH_GROUPS), what)
    n = len(records)
    letters: list[str | None] = [None] * n
    methods = [INFERENCE_ERROR] * n
    replies: list[str | None] = [None] * n
    for i, row in enumerate(records):
        if not is_missing(row["prediction"]):
            letters[i] = videomme_letter(str(row["prediction"]), "ABCDE")
            methods[i] = RULE if letters[i] is not None else UNPARSED
    options = [
        {chr(ord("A") + p): c for p, c in enumerate(candidate_list(row["candidates"],
                                                                   f"{what}: row index {row['index']}, field `candidates`"))}
        for row in records
    ]  # fmt: skip
    ask = [i for i in range(n) if methods[i] == UNPARSED]
    if judge is not None and ask:
        for i, verdict in ask_unread(judge, records, options, ask).items():
            methods[i], letters[i], replies[i] = verdict.method, verdict.value, verdict.reply
    hits = np.array([letters[i] is not None and letters[i] == str(records[i]["answer"]).strip() for i in range(n)])
    theirs, their_hits, nan_rows, _ = videomme_vlmevalkit_readings(records, [m == INFERENCE_ERROR for m in methods],
                                                                   "ABCDE")
    metrics = _grouped_means(records, hits, LONGVIDEOBENCH_GROUPS)
    figure = VlmevalkitFigure(
        metrics={k: round(v, 3) for k, v in _grouped_means(records, their_hits, LONGVIDEOBENCH_GROUPS).items()},
        primary="Overall",
        differing=[
            ReadingDifference(row["index"], ours, their, float(hit), float(their_hit))
            for row, ours, their, hit, their_hit, method in zip(records, letters, theirs, hits, their_hits, methods)
            if method != INFERENCE_ERROR and (ours != their or bool(hit) != bool(their_hit))
        ],
        notes=["VLMEvalKit prints LongVideoBench's figures rounded to 3 decimals; so does this figure",
               NOTE_VIDEOMME_THEIR_JUDGE.replace("a Video-MME question", "the stored LongVideoBench question")],
    )  # fmt: skip
    per_sample = pd.DataFrame({
        "index": [row["index"] for row in records], "extracted": letters, "hit": hits, "method": methods,
        "judge": replies, "vlmevalkit": pd.Series(theirs, dtype=object), "vlmevalkit_hit": their_hits,
    })  # fmt: skip
    notes = [NOTE_VIDEOMME_PREFIXES.replace("Video-MME", "LongVideoBench (Video-MME's)"), NOTE_FAILED]
    notes += judge_notes(methods, judge is not None and bool(ask), methods.count(UNPARSED))
    counts = method_counts(methods, n)
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    table = pd.DataFrame([{"split": "none", **metrics}])
    return EvalResult(
        scorer="longvideobench", metrics=metrics, primary="Overall", per_sample=per_sample, table=table,
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(FRACTION), vlmevalkit=figure,
    )  # fmt: skip


def _grouped_means(records: list[dict[str, Any]], hits: Sequence[bool], groups: Sequence[str]) -> dict[str, float]:
    """{"Overall": mean, "<group>: <value>": mean, ...} over the rows (values in sorted order)."""
    frame = pd.DataFrame({"score": np.asarray(hits, dtype=float), **{g: [str(r[g]) for r in records] for g in groups}})
    metrics = {"Overall": _mean(frame["score"])}
    for group in groups:
        for value, scores in frame.groupby(group, sort=True)["score"]:
            metrics[f"{group}: {value}"] = _mean(scores)
    return metrics


# --- MVBench ---------------------------------------------------------------------------------------------------
def mvbench_target(candidates: Sequence[str], answer: str) -> tuple[str, str]:
    """(letter, `(L) answer`) of the answer among the candidates (the last equal candidate, as VLMEvalKit's loop)."""
    position = -1
    for pos, candidate in enumerate(candidates):
        if str(candidate) == answer:
            position = pos
    if position < 0:
        raise ValueError(f"answer {answer!r} is not one of the candidates")
    letter = chr(ord("A") + position)
    return letter, f"({letter}) {answer}"


def mvbench_first_word(prediction: str, target: str) -> bool:
    """VLMEvalKit's `check_ans` (first word of the reply against `(l)`), with an empty or punctuation-only first
    word never right (module docstring)."""
    pred_option = prediction.lower().split(" ")[0]
    gt_option = target.lower().split(" ")[0]
    bare = pred_option.replace(".", "")
    if _WORD_CHAR.search(bare) and bare in gt_option:
        return True
    return gt_option in pred_option


def score_mvbench(df: pd.DataFrame, *, judge: Judge | None = None, name: str = "MVBench") -> EvalResult:
    """MVBench predictions -> EvalResult (module docstring). Columns: index, prediction, answer (the answer text),
    question, candidates (a list of texts), task_type."""
    records, _ = keyed_records(df, ("index", "prediction", "answer", "question", "candidates", "task_type"), name)
    n = len(records)
    methods = [INFERENCE_ERROR] * n
    letters: list[str | None] = [None] * n
    replies: list[str | None] = [None] * n
    hits = np.zeros(n, dtype=bool)
    targets: list[str] = []
    options: list[dict[str, str]] = []
    for i, row in enumerate(records):
        candidates = candidate_list(row["candidates"], f"{name}: row index {row['index']}, field `candidates`")
        try:
            letter, target = mvbench_target(candidates, str(row["answer"]))
        except ValueError as exc:
            raise ValueError(f"{name}: row index {row['index']}, field `answer`: {exc}") from None
        targets.append(letter)
        options.append({chr(ord("A") + p): c for p, c in enumerate(candidates)})
        if is_missing(row["prediction"]):
            continue
        prediction = str(row["prediction"])
        if mvbench_first_word(prediction, target):
            methods[i], letters[i], hits[i] = RULE, letter, True
            continue
        read = vlmevalkit_read(prediction, options[i])
        if read is None:
            methods[i] = UNPARSED
        else:
            methods[i], letters[i] = RULE, None if read == NO_OPTION else read
    ask = [i for i in range(n) if methods[i] == UNPARSED]
    if judge is not None and ask:
        for i, verdict in ask_unread(judge, records, options, ask).items():
            methods[i], letters[i], replies[i] = verdict.method, verdict.value, verdict.reply
    for i in range(n):
        if methods[i] != INFERENCE_ERROR and not hits[i]:
            hits[i] = letters[i] is not None and letters[i] == targets[i]
    per_sample = pd.DataFrame({
        "index": [row["index"] for row in records], "extracted": letters, "hit": hits, "method": methods,
        "judge": replies,
    })  # fmt: skip
    tasks = list(dict.fromkeys(str(row["task_type"]) for row in records))
    task_of = np.array([str(row["task_type"]) for row in records], dtype=object)
    metrics = _mvbench_metrics(hits, tasks, task_of)
    table = pd.DataFrame([{"split": "none", **metrics}])
    figure = _mvbench_vlmevalkit(records, methods, letters, hits, targets, tasks, task_of)
    per_sample["vlmevalkit"] = pd.Series(figure.pop("readings"), dtype=object)
    per_sample["vlmevalkit_hit"] = figure.pop("hits")
    counts = method_counts(methods, n)
    counts.update({f"correct: {t}": int(hits[task_of == t].sum()) for t in tasks})
    notes = [NOTE_MVBENCH_EMPTY, NOTE_FAILED]
    notes += judge_notes(methods, judge is not None and bool(ask), methods.count(UNPARSED))
    nan_rows = figure.pop("nan_rows")
    if nan_rows:
        counts["vlmevalkit_nan_replies"] = len(nan_rows)
        notes.append(nan_note(nan_rows, "reads the reply itself"))
    return EvalResult(
        scorer="mvbench", metrics=metrics, primary="Overall", per_sample=per_sample, table=table,
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT), vlmevalkit=figure.pop("figure"),
    )  # fmt: skip


def _mvbench_metrics(hits: np.ndarray, tasks: list[str], task_of: np.ndarray) -> dict[str, float]:
    metrics = {"Overall": 100.0 * float(hits.mean())}
    for task in tasks:
        metrics[task] = 100.0 * float(hits[task_of == task].mean())
    return metrics


def _mvbench_vlmevalkit(records: list[dict[str, Any]], methods: list[str], letters: list[str | None],
                        hits: np.ndarray, targets: list[str], tasks: list[str], task_of: np.ndarray
                        ) -> dict[str, Any]:
    """VLMEvalKit's MVBench figure (MVBench.evaluate, utils/mvbench.check_ans_with_model and get_dimension_rating
    at VLMEVALKIT_COMMIT) for the replies as its xlsx round trip gives them back: a reply read as NaN is skipped
    there, its score left NaN, which the rating counts as right (`if item['score']`); otherwise its first-word test
    as it is (a blank first word is part of `(a)`: right), else the letter read as vlmkit reads it (can_infer, then
    the judge: the same asks). Figures printed with 2 decimals. A failed call is a miss here (VLMEvalKit's -1 score
    also counts as right). Returns figure, readings, hits and the indices of `nan` replies."""
    failed = [m == INFERENCE_ERROR for m in methods]
    back = vlmevalkit_cells([VLMEVALKIT_FAIL_MARKER if f else r["prediction"] for r, f in zip(records, failed)])
    readings: list[str | None] = []
    their_hits = np.zeros(len(records), dtype=bool)
    nan_rows: list[Any] = []
    for i, (row, cell) in enumerate(zip(records, back)):
        letter = None
        if failed[i]:
            pass
        elif is_nan_cell(cell):
            if str(row["prediction"]) != "nan":
                nan_rows.append(row["index"])
            their_hits[i] = True
        else:
            first = str(cell).lower().strip().split(" ")[0]
            gt_option = f"({targets[i].lower()})"
            if first.replace(".", "") in gt_option or gt_option in first:
                letter, their_hits[i] = targets[i], True
            else:
                letter, their_hits[i] = letters[i], bool(hits[i])
        readings.append(letter)
    differing = [
        ReadingDifference(row["index"], ours, theirs, float(hit), float(their_hit))
        for row, ours, theirs, hit, their_hit, fail in zip(records, letters, readings, hits, their_hits, failed)
        if not fail and (ours != theirs or bool(hit) != bool(their_hit))
    ]
    notes = ["VLMEvalKit prints MVBench's figures with 2 decimals; so does this figure"]
    if nan_rows:
        notes.append(nan_note(nan_rows, "reads the reply itself") + "; VLMEvalKit counts them as right")
    metrics = {k: round(v, 2) for k, v in _mvbench_metrics(their_hits, tasks, task_of).items()}
    return {"figure": VlmevalkitFigure(metrics=metrics, primary="Overall", differing=differing, notes=notes),
            "readings": readings, "hits": their_hits, "nan_rows": nan_rows}


# --- shared ----------------------------------------------------------------------------------------------------
def ask_unread(judge: Judge, records: list[dict[str, Any]], options: list[dict[str, str]], ask: list[int]) -> dict:
    """The judge's verdicts by row position for the rows no rule read (VLMEvalKit's MCQ extraction prompt)."""
    keys = row_keys([records[i]["index"] for i in ask])
    position = dict(zip(keys, ask))
    prompts = {
        key: mcq_judge_prompt(str(records[i]["question"]), options[i], str(records[i]["prediction"]))
        for key, i in position.items()
    }
    verdicts = ask_judge(judge, prompts, lambda key, reply: read_mcq_reply(reply, options[position[key]]),
                         MCQ_TEMPERATURES, no_answer=NO_OPTION)
    return {position[key]: verdict for key, verdict in verdicts.items()}


def method_counts(methods: Sequence[str], n: int) -> dict[str, int]:
    by_rule = sum(m == RULE for m in methods)
    by_judge = sum(m == "judge" for m in methods)
    errors = sum(m == INFERENCE_ERROR for m in methods)
    return {
        "total": n, "scored": n, "by_rule": by_rule, "by_judge": by_judge,
        "unread": sum(m in (UNPARSED, "judge_unread") for m in methods),
        "judge_errors": sum(m == "judge_error" for m in methods), "inference_errors": errors,
    }  # fmt: skip


def candidate_list(value: Any, what: str) -> list[str]:
    """A row's candidates: a list, or its text as VLMEvalKit's TSVs hold it (a JSON or Python list literal)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(v) for v in value]
    if isinstance(value, str):
        for parse in (json.loads, ast.literal_eval):
            try:
                parsed = parse(value)
            except (ValueError, SyntaxError):
                continue
            if isinstance(parsed, (list, tuple)):
                return [str(v) for v in parsed]
    raise ValueError(f"{what}: not a list of candidates: {str(value)[:80]!r}")
