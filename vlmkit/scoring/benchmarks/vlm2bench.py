"""VLM2Bench as VLMEvalKit scores it (vlmeval/dataset/vlm2bench.py `VLM2Bench.evaluate` and utils/vlm2bench.py at
e8e78f05), by rule, one figure per `category` (percent):

- true/false pairs (`gc-mat`, `gc-trk`, `oc-cpr`, `pc-cpr`): rows are grouped by `index` without its last `_part`
  (`pc-cpr_1_p`, `pc-cpr_1_n` -> `pc-cpr_1`; an index without `_` is left out); a group is right when it has at least
  two rows and each reply, upper-cased, holds exactly one standalone `T`, `F`, `TRUE` or `FALSE` whose first letter
  equals the upper-cased `answer`. The figure: right groups / all groups (a one-row group counts as wrong).
- counting (`oc-cnt`, `pc-cnt`): the reply's numbers (every run of digits, plus one number made of all its number
  words, `twenty one` = 21) must be exactly one, else the row scores 0; equal to `int(answer)` scores 100; otherwise
  `100 * (1 - penalty)` (0 when penalty >= 1) with penalty = (4 / n) * (|pred - answer| / max(answer - 1, n - answer,
  or 1 when that is <= 0)) ** (1 / 10), n the row's image count: its `image_seq_len`, else the length of its
  `image_path` list, else 2 (VLMEvalKit's scored file has no `image` column). A row whose answer is not an integer
  is left out.
- grouping (`oc-grp`, `pc-grp`): a reply holding more than one `(X)` option is wrong; otherwise right when the text
  before its first `)` equals the answer's (both stripped).
Other categories get no figure (VLMEvalKit writes None). `Overall`, the mean of the category figures, is vlmkit's
headline (VLMEvalKit prints none). A failed call is wrong on both sides (VLMEvalKit's failure message reads the same).
Overall's 95% interval: a bootstrap of the mean of category means, each category's units (a pair category's groups,
whole) drawn within it (`overall_interval`): the generic rescored bootstrap cannot serve, as the pairs are read from the
index text that it renumbers.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.intervals import Interval, stratum_mean_of_means
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

TF_PAIRS, COUNTING, GROUPING = ("gc-mat", "gc-trk", "oc-cpr", "pc-cpr"), ("oc-cnt", "pc-cnt"), ("oc-grp", "pc-grp")
NUM_WORDS = {w: n for n, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                          "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                                          "sixteen", "seventeen", "eighteen", "nineteen"))}  # fmt: skip
NUM_WORDS.update({"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                  "ninety": 90, "hundred": 100, "thousand": 1000})  # fmt: skip
_TF = re.compile(r"\b(t|f|true|false)\b", re.IGNORECASE)
_WORD = re.compile(r"\b(" + "|".join(NUM_WORDS) + r")\b", re.IGNORECASE)
_OPTION = re.compile(r"\([A-Z]\)")


def read_tf(reply: str) -> str | None:
    """`T` or `F` when the reply holds exactly one of t/f/true/false as a word; else None."""
    found = [m.upper()[0] for m in _TF.findall(reply)]
    return found[0] if len(found) == 1 else None


def words_to_number(phrase: str) -> int | None:
    total = current = 0
    for token in phrase.lower().replace("-", " ").replace("and", " ").split():
        if token not in NUM_WORDS:
            return None
        value = NUM_WORDS[token]
        if value in (100, 1000):
            total += (current or 1) * value
            current = 0
        else:
            current += value
    total += current
    return total or None


def read_count(reply: str) -> int | None:
    """The one number of the reply (digits, or its number words read as one number); None for none or several."""
    text = reply.lower()
    numbers = [int(d) for d in re.findall(r"\d+", text)]
    words = _WORD.findall(text)
    if words:
        number = words_to_number(" ".join(words))
        if number is not None:
            numbers.append(number)
    return numbers[0] if len(numbers) == 1 else None


def count_score(reply: str, answer: int, images: int) -> float:
    pred = read_count(reply.strip())
    if pred is None:
        return 0.0
    if pred == answer:
        return 100.0
    worst = max(answer - 1, images - answer)
    worst = 1 if worst <= 0 else worst
    penalty = (4 / images) * ((abs(pred - answer) / worst) ** (1 / 10))
    return 100 * (1 - penalty) if penalty < 1 else 0.0


def _before_paren(text: str) -> str:
    return text.split(")")[0].strip() if ")" in text else text.strip()


def grouping_right(reply: str, answer: str) -> bool:
    return len(_OPTION.findall(reply)) <= 1 and _before_paren(reply) == _before_paren(answer)


def image_count(row: dict[str, Any]) -> int:
    """`image_seq_len` if a positive integer, else the length of `image_path` (a list or one path), else 2."""
    try:
        count = int(row.get("image_seq_len"))  # type: ignore[arg-type]
        if count > 0:
            return count
    except (TypeError, ValueError):
        pass
    path = row.get("image_path")
    if isinstance(path, (list, tuple)):
        return len(path) or 2
    if is_blank(path):
        return 2
    text = str(path)
    if text.startswith("[") and text.endswith("]"):
        try:
            return len(ast.literal_eval(text)) or 2
        except (ValueError, SyntaxError):
            pass
    return 1


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def row_scores(rows: list[dict[str, Any]], replies: list[str | None]) -> list[float | None]:
    """Per row: 100/0 (true/false and grouping rows), the counting score, None (no figure for the row)."""
    out: list[float | None] = []
    for row, reply in zip(rows, replies):
        category, text = str(row["category"]), "" if reply is None else reply
        if category in TF_PAIRS:
            out.append(100.0 if reply is not None and read_tf(text.strip().upper()) == str(row["answer"]).strip()
                       .upper() else 0.0)  # fmt: skip
        elif category in COUNTING:
            answer = _int(row["answer"])
            out.append(None if answer is None else 0.0 if reply is None else
                       count_score(text, answer, image_count(row)))  # fmt: skip
        elif category in GROUPING:
            out.append(100.0 if reply is not None and grouping_right(text, str(row["answer"])) else 0.0)
        else:
            out.append(None)
    return out


def category_units(rows: list[dict[str, Any]], scores: list[float | None]) -> dict[str, list[float]]:
    """Per scored category, the figures its figure is the mean of: a true/false pair category's groups (100 when right,
    else 0), a counting or grouping category's scored rows."""
    units: dict[str, list[float]] = {}
    for category in sorted({str(r["category"]) for r in rows}):
        picked = [(r, s) for r, s in zip(rows, scores) if str(r["category"]) == category]
        if category in TF_PAIRS:
            groups: dict[str, list[float | None]] = defaultdict(list)
            for row, score in picked:
                index = str(row["index"])
                if "_" in index:
                    groups["_".join(index.split("_")[:-1])].append(score)
            units[category] = [100.0 if len(g) >= 2 and all(s == 100.0 for s in g) else 0.0 for g in groups.values()]
        elif category in COUNTING or category in GROUPING:
            units[category] = [s for _, s in picked if s is not None]
    return units


def figures(rows: list[dict[str, Any]], scores: list[float | None]) -> dict[str, float]:
    return figures_of(category_units(rows, scores))


def figures_of(units: dict[str, list[float]]) -> dict[str, float]:
    """Each category's mean of its units, and Overall, the mean of those (VLMEvalKit prints the categories only)."""
    out = {category: sum(values) / len(values) if values else 0.0 for category, values in units.items()}
    if out:
        out["Overall"] = sum(out.values()) / len(out)
    return out


def overall_interval(units: dict[str, list[float]], estimate: float) -> Interval | None:
    """Overall's interval: each category's units resampled within it (a pair category's groups whole), the mean of the
    category means each time; a category with no unit adds its 0 to every resample. None with no unit at all."""
    kept = {category: values for category, values in units.items() if values}
    if not kept:
        return None
    share = len(kept) / len(units)  # the empty categories' zeros, in the mean of every resample
    values = [v * share for vs in kept.values() for v in vs]
    strata = [category for category, vs in kept.items() for _ in vs]
    return stratum_mean_of_means(values, strata, "Overall", estimate)


def score_vlm2bench(df: pd.DataFrame) -> EvalResult:
    """Score VLM2Bench replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `category`;
    optional `image_seq_len`, `image_path` (counting)."""
    require_columns(df, ("index", "prediction", "answer", "category"), "VLM2Bench scoring")
    if len(df) == 0:
        raise ValueError("VLM2Bench scoring: the predictions table has no rows")
    rows, replies = df.to_dict("records"), df["prediction"].tolist()
    failed = [failed_call(p) for p in replies]
    mine = row_scores(rows, [None if f else str(p) for p, f in zip(replies, failed)])
    theirs = row_scores(rows, vlmevalkit_replies(replies))
    units = category_units(rows, mine)
    metrics = figures_of(units)
    if not metrics:
        raise ValueError("VLM2Bench scoring: no row has a category VLMEvalKit scores "
                         f"({', '.join(TF_PAIRS + COUNTING + GROUPING)})")  # fmt: skip
    errors = [r["index"] for r, f in zip(rows, failed) if f]
    unscored = sorted({str(r["category"]) for r, s in zip(rows, mine) if s is None})
    notes = ["Overall is the mean of the category figures (VLMEvalKit prints the categories only)"]
    if errors:
        notes.append(f"{len(errors)} failed call(s) score 0: index {listed(errors)}")
    if unscored:
        notes.append(f"rows left out (a category VLMEvalKit does not score, or a counting answer that is not an "
                     f"integer): {', '.join(unscored)}")  # fmt: skip
    differing = [ReadingDifference(r["index"], str(p), t, m, s)
                 for r, p, t, m, s in zip(rows, replies, vlmevalkit_replies(replies), mine, theirs)
                 if m != s]  # fmt: skip
    counts = {"total": len(df), "scored": sum(s is not None for s in mine), "inference_errors": len(errors),
              "by_rule": len(df) - len(errors), "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    return EvalResult(
        scorer="vlm2bench", metrics=metrics, primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "category": df["category"].tolist(),
                                 "score": pd.Series(mine, dtype=object)}),
        table=pd.DataFrame([metrics]), table_suffix="score", counts=counts, notes=notes, scale=Scale(PERCENT),
        vlmevalkit=VlmevalkitFigure(figures(rows, theirs), "Overall", differing),
        interval=overall_interval(units, metrics["Overall"]),
    )  # fmt: skip
