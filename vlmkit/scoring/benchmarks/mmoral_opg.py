"""MMOral_OPG_CLOSED as VLMEvalKit scores it (vlmeval/dataset/mmoral_opg_closed.py and utils/mmoral_opg.py
`get_single_choice_prediction` at e8e78f05).

Reading a reply (`read_choice`): the characters , . ! ? ; : ' stripped from its ends (one after the other), then
padded with a space each side; the candidates are the letters A-D written `(X)`, else those standing alone
(` X `, ` X.`, ` X,`), else those whose option text the reply holds; of these, the one found first (by ` X `, else
`(X)`, else its option text). A row is right when that letter equals its `answer`.
Figures, in percent: `Overall`, one per main category (`Teeth`, `Patho`, `HisT`, `Jaw`, `SumRec`: the rows whose
`category` contains it; 0 without rows) and `category: <category>` per category.

Where vlmkit differs: a reply no rule reads is unread, a miss (VLMEvalKit picks a random letter: about one in four of
those count as right there, and its figure varies from run to run); a failed call is a miss (VLMEvalKit reads its
failure message, which falls to the random pick too). vlmkit's VLMEvalKit figure counts the random picks as misses.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from vlmkit.core.cells import is_blank, listed
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

CHOICES = ("A", "B", "C", "D")
MAIN_CATEGORIES = ("Teeth", "Patho", "HisT", "Jaw", "SumRec")


def read_choice(reply: str, options: Mapping[str, str]) -> str | None:
    for char in (",", ".", "!", "?", ";", ":", "'"):
        reply = reply.strip(char)
    reply = f" {reply} "
    found = [c for c in CHOICES if f"({c})" in reply]
    if not found:
        found = [c for c in CHOICES if f" {c} " in reply or f" {c}." in reply or f" {c}," in reply]
    if not found:
        found = [c for c in CHOICES if options[c] in reply]
    positions: dict[str, int] = {}
    for c in found:
        pos = reply.find(f" {c} ")
        if pos == -1:
            pos = reply.find(f"({c})")
        if pos == -1:
            pos = reply.find(options[c])
        if pos != -1:
            positions[c] = pos
    return min(positions.items(), key=lambda kv: kv[1])[0] if positions else None


def option_texts(row: Mapping[str, object]) -> dict[str, str]:
    """The four options as VLMEvalKit shows them (`str()` of the cell; a missing one reads `nan`)."""
    return {c: "nan" if is_blank(row[f"option{k}"]) else str(row[f"option{k}"]) for k, c in enumerate(CHOICES, 1)}


def figures(categories: list[str], hits: list[bool]) -> dict[str, float]:
    def pct(values: list[bool]) -> float:
        return 100 * sum(values) / len(values) if values else 0.0

    out = {"Overall": pct(hits)}
    for main in MAIN_CATEGORIES:
        out[main] = pct([h for c, h in zip(categories, hits) if main in c])
    for category in sorted(set(categories)):
        out[f"category: {category}"] = pct([h for c, h in zip(categories, hits) if c == category])
    return out


def score_mmoral_opg(df: pd.DataFrame) -> EvalResult:
    """Score MMOral_OPG_CLOSED replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`,
    `option1`..`option4`, `category`."""
    require_columns(df, ("index", "prediction", "answer", "option1", "option2", "option3", "option4", "category"),
                    "MMOral-OPG scoring")  # fmt: skip
    if len(df) == 0:
        raise ValueError("MMOral-OPG scoring: the predictions table has no rows")
    records = df.to_dict("records")
    mine, theirs, read, differing, errors = [], [], [], [], []
    for r, their in zip(records, vlmevalkit_replies(df["prediction"].tolist())):
        answer, options = str(r["answer"]), option_texts(r)
        if failed_call(r["prediction"]):
            errors.append(r["index"])
            mine.append(False), theirs.append(False), read.append(None)
            continue
        letter = read_choice(str(r["prediction"]), options)
        their_letter = read_choice(their, options) if their is not None else letter
        read.append(letter)
        mine.append(letter == answer), theirs.append(their_letter == answer)
        if letter != their_letter:
            differing.append(ReadingDifference(r["index"], letter, their_letter, float(mine[-1]), float(theirs[-1])))
    categories = [str(c) for c in df["category"]]
    unread = sum(1 for letter, r in zip(read, records) if letter is None and r["index"] not in errors)
    notes = [f"{len(errors)} failed call(s) are misses: index {listed(errors)}"] if errors else []
    their_notes = [f"VLMEvalKit picks a random letter for {unread + len(errors)} row(s) its rules do not read (about "
                   "one in four right): counted as misses here"] if unread + len(errors) else []  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "hits": sum(mine), "inference_errors": len(errors),
              "by_rule": len(df) - len(errors) - unread, "by_judge": 0, "unread": unread, "judge_errors": 0}
    return EvalResult(
        scorer="mmoral_opg", metrics=figures(categories, mine), primary="Overall",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(read, dtype=object),
                                 "hit": mine}),
        table=pd.DataFrame([figures(categories, mine)]), table_suffix="acc", counts=counts, notes=notes,
        scale=Scale(PERCENT), vlmevalkit=VlmevalkitFigure(figures(categories, theirs), "Overall", differing,
                                                          their_notes),
    )  # fmt: skip
