"""Rule-scored short answers of single benchmarks' own kinds, as VLMEvalKit scores them (vlmeval/dataset/image_vqa.py):

- `tallyqa` (TallyQA): the count read from the reply equals the whole number in `answer`. The count is the first
  whole number in the reply, digits or an English number word zero..twenty (`Three.` -> 3, `I see 4 dogs` -> 4).
  Reported as `accuracy` x100.
- `countbench` (CountBenchQA): `answer` as text is a substring of the reply, as VLMEvalKit does it, so `1` is found
  in `10` (a defect kept so figures compare; `exact_count`, the share of rows whose first number in the reply equals
  the answer, is reported beside it). `accuracy` x100, as VLMEvalKit's current CountBenchQA reports it.
- `zerobench` (ZEROBench, ZEROBench_sub): the reply lower-cased, the text inside its last `{...}` (on one line);
  a hit when the answer, stripped and lower-cased, is a substring of it (no braces: a miss). `accuracy` as a
  fraction (0..1), as VLMEvalKit returns it.
- `mtvqa` (MTVQA_TEST): answer and reply stripped, lower-cased, every `.` removed; a hit when the answer is a
  substring of the reply; accuracy x100 per `category` and over all rows (`Average`, the headline).
A failed call (no prediction) is a miss, counted under `inference_errors`; a row without an answer is a miss,
counted under `invalid_target` and named in a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd

from vlmkit.core.cells import is_blank, is_missing, listed, whole_number
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER

METRICS = ("tallyqa", "countbench", "zerobench", "mtvqa")
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
)  # fmt: skip
_COUNT = re.compile(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")\b")
_BRACES = re.compile(r"\{(.*?)\}")


def read_count(text: str) -> int | None:
    """The first whole number in a reply: digits or a number word zero..twenty (any case); None when there is none."""
    match = _COUNT.search(str(text).lower())
    if match is None:
        return None
    word = match.group(1)
    return int(word) if word.isdigit() else _NUMBER_WORDS.index(word)


def tallyqa_hit(prediction: str, answer: str) -> bool:
    target = whole_number(answer)
    return target is not None and read_count(prediction) == target


def countbench_hit(prediction: str, answer: str) -> bool:
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
        bad_target = is_blank(answer) or (metric == "tallyqa" and whole_number(str(answer)) is None)
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
        why = "no whole-number answer" if metric == "tallyqa" else "no answer"
        notes.append(f"{len(invalid)} row(s) have {why} to compare with (scored as misses): index {listed(invalid)}")
    accuracy = sum(hits) / len(hits)
    if metric == "zerobench":
        metrics = {"accuracy": accuracy}
        return _result(metric, metrics, "accuracy", per_sample, counts, notes, Scale(FRACTION))
    if metric == "mtvqa":
        metrics = {"Average": accuracy * 100}
        by_cat = pd.Series(hits, dtype=float).groupby(df["category"].map(str).to_numpy()).mean() * 100
        metrics.update({str(cat): float(value) for cat, value in by_cat.items()})
        return _result(metric, metrics, "Average", per_sample, counts, notes, Scale(PERCENT))
    metrics = {"accuracy": accuracy * 100}
    if metric == "countbench":
        exact = [
            not is_missing(p) and whole_number(str(a)) is not None and read_count(str(p)) == whole_number(str(a))
            for p, a in zip(df["prediction"], df["answer"], strict=True)
        ]
        per_sample["exact_count"] = exact
        metrics["exact_count"] = sum(exact) / len(exact) * 100
        notes.append(
            "accuracy is VLMEvalKit's substring rule (the answer `1` is found in the reply `10`); exact_count is the "
            "share of rows whose first number in the reply equals the answer"
        )
    return _result(metric, metrics, "accuracy", per_sample, counts, notes, Scale(PERCENT))


def _result(metric: str, metrics: dict[str, float], primary: str, per_sample: pd.DataFrame, counts: dict[str, int],
            notes: list[str], scale: Scale) -> EvalResult:
    return EvalResult(
        scorer=metric, metrics=metrics, primary=primary, per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=scale,
    )  # fmt: skip
