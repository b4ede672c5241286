"""Accuracy of the text-only benchmarks whose answer is one of a row's options (MMLU, MMLU-Pro, C-Eval, HellaSwag, ARC,
WinoGrande: a letter; BoolQ: Yes/No), from a generated reply or a likelihood run's chosen option.

Reading a reply (`read_choice`, by `reader`):
- `letter`: the reply's first token when it is an option letter (`B`, `B.`, `(B)`, `B) text`); else the last
  `answer is (B)` / `answer is B`; else the last `Answer: B`; else unread. A likelihood run's prediction is the letter
  itself. Only the row's own option letters (its filled A, B, ... columns) count.
- `answer_is` (MMLU-Pro, as TIGER-Lab's and lm-evaluation-harness's `answer is \\(?([A-J])\\)?`): the first
  `answer is (X)`, else the `letter` reading.
- `yorn`: the first word when it is yes or no (any case); else the one of them that occurs as a word when only one
  does; else unread.
A failed call or an unread reply is wrong. Figures, fractions: `Overall` (right / rows, every row weighing the same,
as lm-evaluation-harness's size-weighted group accuracy), and `<group>:<value>` per value of the `group` column
(MMLU's subject, MMLU-Pro's category) when the table has it.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

READERS = ("letter", "answer_is", "yorn")
_LEADING = re.compile(r"^\(?([A-Z])\)?(?=$|[\s.:)\],;])")
_ANSWER_IS = re.compile(r"answer is:?\s*\(?([A-Z])\)?(?![A-Za-z])", re.IGNORECASE)
_ANSWER_COLON = re.compile(r"answer\s*:\s*\(?([A-Z])\)?(?![A-Za-z])", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+")


def row_letters(row: dict[str, Any]) -> list[str]:
    """The option letters a row fills (A, B, ... up to the first empty one)."""
    letters = []
    for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        if letter not in row or is_blank(row[letter]):
            break
        letters.append(letter)
    return letters


def read_choice(reply: str, letters: list[str], reader: str = "letter") -> str | None:
    """The option a reply chose (module docstring), or None."""
    text = reply.strip()
    if reader == "yorn":
        words = [w.casefold() for w in _WORD.findall(text)]
        if words and words[0] in ("yes", "no"):
            return words[0].capitalize()
        said = {w for w in words if w in ("yes", "no")}
        return said.pop().capitalize() if len(said) == 1 else None
    if reader == "answer_is":
        first = _ANSWER_IS.search(text)
        if first and first.group(1).upper() in letters:
            return first.group(1).upper()
    leading = _LEADING.match(text)
    if leading and leading.group(1) in letters:
        return leading.group(1)
    for pattern in (_ANSWER_IS, _ANSWER_COLON):
        found = [m.upper() for m in pattern.findall(text) if m.upper() in letters]
        if found:
            return found[-1]
    return None


def score_text_choice(df: pd.DataFrame, reader: str = "letter", group: str | None = None) -> EvalResult:
    """Score replies to option questions. Columns: `index`, `prediction` (None/NaN = a failed call), `answer` (a
    letter, or Yes/No for reader `yorn`), the option columns A, B, ... (not for `yorn`); `group` names an optional
    breakdown column."""
    if reader not in READERS:
        raise ValueError(f"text_choice scoring: reader {reader!r}; choose one of {', '.join(READERS)}")
    require_columns(df, ("index", "prediction", "answer"), "text_choice scoring")
    if len(df) == 0:
        raise ValueError("text_choice scoring: the predictions table has no rows")
    rows: list[dict[str, Any]] = df.to_dict("records")
    chosen: list[str | None] = []
    hits: list[bool] = []
    errors: list[Any] = []
    for row in rows:
        answer = "" if is_blank(row["answer"]) else str(row["answer"]).strip()
        if not answer:
            raise ValueError(f"text_choice scoring: row index {row['index']}, field answer: empty")
        if failed_call(row["prediction"]):
            errors.append(row["index"])
            chosen.append(None)
            hits.append(False)
            continue
        letters = ["Yes", "No"] if reader == "yorn" else row_letters(row)
        pick = read_choice(str(row["prediction"]), letters, reader)
        chosen.append(pick)
        hits.append(pick is not None and pick.casefold() == answer.casefold())
    metrics = {"Overall": sum(hits) / len(hits)}
    if group and group in df.columns:
        values = [row[group] for row in rows]
        for value in dict.fromkeys(v for v in values if not is_blank(v)):
            picked = [hit for v, hit in zip(values, hits) if v == value]
            metrics[f"{group}:{value}"] = sum(picked) / len(picked)
    notes = [f"{len(errors)} failed call(s) are wrong: index {listed(errors)}"] if errors else []
    unread = sum(c is None for c in chosen) - len(errors)
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "unread": unread, "by_rule": len(df) - len(errors), "by_judge": 0, "judge_errors": 0}
    return EvalResult(
        scorer="text_choice", metrics=metrics, primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(chosen, dtype=object),
                                 "hit": hits}),
        table=pd.DataFrame([{"Metric": k, "Accuracy": v} for k, v in metrics.items()]),
        counts=counts, notes=notes, scale=Scale(FRACTION),
    )  # fmt: skip
