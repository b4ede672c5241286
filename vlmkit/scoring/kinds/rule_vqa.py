"""Rule-scored short answers of single benchmarks' own kinds, as VLMEvalKit scores them (vlmeval/dataset/image_vqa.py,
vlmeval/dataset/utils/tallyqa.py at VLMEVALKIT_COMMIT), each result carrying VLMEvalKit's figure for the same replies:

- `tallyqa` (TallyQA): the count read from the reply equals the whole number in `answer`. vlmkit reads the first
  whole number in the reply, digits of any size or an English number word zero..twenty (`Three.` -> 3,
  `I see 4 dogs` -> 4, `25 then 3` -> 25); VLMEvalKit reads only the numbers 0..20 (`25 then 3` -> 3, `21` -> nothing)
  and a numeric cell as it is (its xlsx round trip makes an all-number column numbers). The headline is VLMEvalKit's:
  key `TallyQA`, a fraction (0..1), as its `_acc.csv` prints it.
- `countbench` (CountBenchQA): vlmkit's `accuracy` is the share of rows whose first whole number in the reply equals
  the answer; VLMEvalKit's is a substring test (`1` is found in `10`, `0` in `3.0`), a defect shown in its figure.
  `accuracy` x100 in both, as VLMEvalKit reports it.
- `zerobench` (ZEROBench, ZEROBench_sub): the reply lower-cased, the text inside its last `{...}` (on one line);
  a hit when the answer, stripped and lower-cased, is a substring of it (no braces: a miss). `accuracy` as a
  fraction (0..1), as VLMEvalKit returns it.
- `mtvqa` (MTVQA_TEST): answer and reply stripped, lower-cased, every `.` removed; a hit when the answer is a
  substring of the reply; accuracy x100 per `category` and over all rows (`Average`, the headline).
A failed call (no prediction) is a miss, counted under `inference_errors`; a row without an answer is a miss,
counted under `invalid_target` and named in a note. VLMEvalKit reads an empty or `None`/`N/A` reply as the text `nan`
(vlmkit.scoring.common.vlmevalkit_cells); its figure lists every row scored (TallyQA: read) differently (a failed
call is a miss on both sides, never listed: vlmkit.scoring.common.vlmevalkit_replies).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, is_missing, listed, whole_number
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER
from vlmkit.scoring.common.vlmevalkit_replies import vlmevalkit_cells_of
from vlmkit.scoring.common.vlmevalkit_cells import NAN_TEXT, is_nan_cell, nan_note, vlmevalkit_cells
from vlmkit.scoring.common.intervals import wilson
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

METRICS = ("tallyqa", "countbench", "zerobench", "mtvqa")
COUNTS = ("tallyqa", "countbench")  # answers are whole numbers
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
)  # fmt: skip
_COUNT = re.compile(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")\b")
_BRACES = re.compile(r"\{(.*?)\}")
# VLMEvalKit's text_to_int: the first of a number 0..20 in digits or a number word (vlmeval/dataset/utils/tallyqa.py)
_VLMEVALKIT_COUNT = re.compile(r"\b([0-9]|1[0-9]|20)\b|\b(" + "|".join(_NUMBER_WORDS) + r")\b")
TALLYQA_PRIMARY = "TallyQA"


def read_count(text: str) -> int | None:
    """The first whole number in a reply: digits or a number word zero..twenty (any case); None when there is none."""
    match = _COUNT.search(str(text).lower())
    if match is None:
        return None
    word = match.group(1)
    return int(word) if word.isdigit() else _NUMBER_WORDS.index(word)


def vlmevalkit_count(value: Any) -> int | None:
    """VLMEvalKit's TallyQA reading of a cell as its xlsx round trip leaves it: a number 0..20 as it is (NaN or
    another number: None), else the first of 0..20 in digits or words in the lower-cased text."""
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return None
        return int(value) if 0 <= value <= 20 else None
    match = _VLMEVALKIT_COUNT.search(str(value).lower())
    if match is None:
        return None
    found = match.group(0)
    return int(found) if found.isdigit() else _NUMBER_WORDS.index(found)


def tallyqa_hit(prediction: str, answer: str) -> bool:
    target = whole_number(answer)
    return target is not None and read_count(prediction) == target


def countbench_hit(prediction: str, answer: str) -> bool:
    """vlmkit's reading: the first whole number of the reply is the answer (`10` is not `1`)."""
    target = whole_number(answer)
    return target is not None and read_count(prediction) == target


def countbench_substring(prediction: str, answer: str) -> bool:
    """VLMEvalKit's CountBenchQA rule: the answer's text is found in the reply's."""
    return str(answer) in str(prediction)


def braces_answer(prediction: str) -> str:
    """The text inside the last `{...}` of the lower-cased, stripped reply ("" when there is none)."""
    found = _BRACES.findall(str(prediction).strip().lower())
    return found[-1] if found else ""


def zerobench_hit(prediction: str, answer: str) -> bool:
    return str(answer).strip().lower() in braces_answer(prediction)


def _mtvqa_norm(text: str) -> str:
    return str(text).strip().lower().replace(".", "")


def mtvqa_hit(prediction: str, answer: str) -> bool:
    return _mtvqa_norm(answer) in _mtvqa_norm(prediction)


_HITS: dict[str, Callable[[str, str], bool]] = {
    "tallyqa": tallyqa_hit, "countbench": countbench_hit, "zerobench": zerobench_hit, "mtvqa": mtvqa_hit,
}  # fmt: skip


def score_rule_vqa(df: pd.DataFrame, metric: str) -> EvalResult:
    """Score with one of METRICS. Columns: `index`, `prediction` (None/NaN = a failed call), `answer` (one answer;
    the dataset renames another answer column to it), and `category` for "mtvqa"."""
    if metric not in METRICS:
        raise ValueError(f"rule VQA scoring: unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    what = f"{metric} scoring"
    require_columns(df, ("index", "prediction", "answer", *(("category",) if metric == "mtvqa" else ())), what)
    if len(df) == 0:
        raise ValueError(f"{what}: the predictions table has no rows")
    hit_of = _HITS[metric]
    indices = df["index"].tolist()
    hits, errors, invalid = [], [], []
    for index, pred, answer in zip(indices, df["prediction"], df["answer"], strict=True):
        bad_target = is_blank(answer) or (metric in COUNTS and whole_number(str(answer)) is None)
        if bad_target:
            invalid.append(index)
        if is_missing(pred) or VLMEVALKIT_FAIL_MARKER in str(pred):
            errors.append(index)
            hits.append(False)
            continue
        hits.append(not bad_target and hit_of(str(pred), str(answer)))
    per_sample = pd.DataFrame({"index": indices, "hit": hits})
    counts = {"total": len(df), "scored": len(df), "hits": int(sum(hits)), "inference_errors": len(errors),
              "invalid_target": len(invalid)}  # fmt: skip
    notes = []
    if invalid:
        why = "no whole-number answer" if metric in COUNTS else "no answer"
        notes.append(f"{len(invalid)} row(s) have {why} to compare with (scored as misses): index {listed(invalid)}")
    accuracy = sum(hits) / len(hits)
    figure = _vlmevalkit_figure(df, metric, hits)
    if metric == "zerobench":
        metrics = {"accuracy": accuracy}
        return _result(metric, metrics, "accuracy", per_sample, counts, notes, Scale(FRACTION), figure)
    if metric == "mtvqa":
        return _result(metric, _mtvqa_metrics(df, hits), "Average", per_sample, counts, notes, Scale(PERCENT), figure)
    if metric == "tallyqa":
        metrics = {TALLYQA_PRIMARY: accuracy}
        return _result(metric, metrics, TALLYQA_PRIMARY, per_sample, counts, notes, Scale(FRACTION), figure)
    metrics = {"accuracy": accuracy * 100}
    return _result(metric, metrics, "accuracy", per_sample, counts, notes, Scale(PERCENT), figure)


def _mtvqa_metrics(df: pd.DataFrame, hits: list[bool]) -> dict[str, float]:
    metrics = {"Average": sum(hits) / len(hits) * 100}
    by_cat = pd.Series(hits, dtype=float).groupby(df["category"].map(str).to_numpy()).mean() * 100
    metrics.update({str(cat): float(value) for cat, value in by_cat.items()})
    return metrics


def _vlmevalkit_hit(metric: str, prediction: Any, answer: Any) -> tuple[Any, bool]:
    """(what VLMEvalKit reads, whether it is a hit) for one row, from the cells its xlsx round trip leaves."""
    if metric == "tallyqa":
        got, target = vlmevalkit_count(prediction), whole_number(answer)
        return got, got is not None and got == target
    text, answer_text = str(prediction), str(answer)
    if metric == "countbench":
        return text, countbench_substring(text, answer_text)
    return text, _HITS[metric](text, answer_text)


def _vlmevalkit_figure(df: pd.DataFrame, metric: str, hits: list[bool]) -> VlmevalkitFigure:
    """VLMEvalKit's figure for the same replies, with every row scored (TallyQA: read) differently."""
    preds = df["prediction"].tolist()
    cells = vlmevalkit_cells_of(preds)
    answers = vlmevalkit_cells(df["answer"].tolist())
    theirs: list[bool] = []
    differing: list[ReadingDifference] = []
    nan_rows = []
    for index, pred, cell, answer, hit in zip(df["index"].tolist(), preds, cells, answers, hits, strict=True):
        if cell is None:  # a failed call: a miss on both sides, never listed (vlmevalkit_replies)
            theirs.append(False)
            continue
        read, their_hit = _vlmevalkit_hit(metric, cell, answer)
        theirs.append(their_hit)
        text = str(pred)
        mine = read_count(text) if metric in COUNTS else text
        if is_nan_cell(cell) and text.strip().lower() != NAN_TEXT:
            nan_rows.append(index)
        # TallyQA: both read a count, listed when the counts differ; the others score a text: listed when the verdict
        # differs (a reply the round trip changes without changing its verdict is only counted in the note)
        if hit != their_hit or (metric == "tallyqa" and mine != read):
            differing.append(ReadingDifference(index, mine, read, float(hit), float(their_hit)))
    accuracy = sum(theirs) / len(theirs)
    notes = [nan_note(nan_rows, "scores them as the reply given")] if nan_rows else []
    if metric == "zerobench":
        return VlmevalkitFigure({"accuracy": accuracy}, "accuracy", differing, notes)
    if metric == "mtvqa":
        return VlmevalkitFigure(_mtvqa_metrics(df, theirs), "Average", differing, notes)
    if metric == "tallyqa":
        notes.append("VLMEvalKit reads only the numbers 0..20 (the first of them); vlmkit the first whole number")
        return VlmevalkitFigure({TALLYQA_PRIMARY: accuracy}, TALLYQA_PRIMARY, differing, notes)
    notes.append("VLMEvalKit's CountBenchQA rule is a substring test (the answer `1` is found in the reply `10`); "
                 "vlmkit compares the reply's first whole number with the answer")  # fmt: skip
    return VlmevalkitFigure({"accuracy": accuracy * 100}, "accuracy", differing, notes)


def _result(metric: str, metrics: dict[str, float], primary: str, per_sample: pd.DataFrame, counts: dict[str, int],
            notes: list[str], scale: Scale, figure: VlmevalkitFigure) -> EvalResult:
    return EvalResult(
        scorer=metric, metrics=metrics, primary=primary, per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=scale, vlmevalkit=figure,
        interval=wilson(per_sample["hit"].to_numpy(dtype=float), primary,
                        factor=100.0 if scale.kind == PERCENT else 1.0),
    )  # fmt: skip
