"""ReasonMap-Plus as VLMEvalKit scores it (vlmeval/dataset/reasonmap_plus.py `ReasonMap_Plus.evaluate` and
`normalize_prediction` at e8e78f05), by rule.

Reading a reply (`normalize`): the text of the last `\\boxed{...}` (or `boxed{...}`; its `\\text{...}` pieces joined
by spaces; `[^}]*` stops at the first `}`, so a nested `\\text{...}` is cut, as in VLMEvalKit), else what follows the
last occurrence of the first of `PHRASES` found in it (up to a line break or a full stop), else the whole reply,
stripped. Then by the row's `type` (lower-cased): a `torf` type keeps yes/no (`YES`, `NO` words, from that text or
else the whole reply); a `counting1` type the first standalone letter A-D (any case); another `counting...` type the
first integer. A row is right (`is_right`): `torf`: the reading's yes/no is `yes` when `int(answer) == 1`, else `no`;
`counting1`: the letter's position (A=0..D=3) equals `int(answer)`; other `counting`: `int(reading) == int(answer)`;
other types: the two equal ignoring case and surrounding spaces. Anything that fails to convert is wrong. Figures
(fractions): `accuracy` (right / rows) and `weighted_accuracy` (each right row counts its `difficulty_city` weight,
easy 1, middle 1.5, hard 2, over the sum of the weights of all rows), and both per `type` as `accuracy[<type>]`,
`weighted_accuracy[<type>]`. Where vlmkit differs: a failed call is a miss on both sides (VLMEvalKit reads its failure
message); a `difficulty_city` outside the three is an error naming the row (VLMEvalKit stops with a KeyError). """

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

PHRASES = ("the final answer is", "final answer is", "the answer is", "answer is", "the correct answer is",
           "correct answer is", "final answer:", "final:", "answer:", "ans:")  # fmt: skip
WEIGHTS = {"easy": 1.0, "middle": 1.5, "hard": 2.0}
YES, NO = {"yes", "y", "true", "t", "1"}, {"no", "n", "false", "f", "0"}
_BOXED = re.compile(r"(?:\\boxed|boxed)\{([^}]*)\}", re.IGNORECASE)
_TEXT = re.compile(r"\\text\{([^}]*)\}", re.IGNORECASE)
_LETTER = re.compile(r"\b([ABCD])\b", re.IGNORECASE)
_INT = re.compile(r"[-+]?\d+")


def _boxed(text: str) -> str | None:
    found = list(_BOXED.finditer(text))
    if not found:
        return None
    raw = found[-1].group(1).strip()
    pieces = _TEXT.findall(raw)
    return " ".join(p.strip() for p in pieces) if pieces else raw


def _after_phrase(text: str) -> str:
    low = text.lower()
    for phrase in PHRASES:
        if phrase in low:
            part = text[low.rfind(phrase) + len(phrase):].strip()
            return re.split(r"(?:\n|\. |\.$)", part, maxsplit=1)[0].strip()
    return text.strip()


def yes_no(text: str) -> str | None:
    word = text.strip().lower()
    return "yes" if word in YES else "no" if word in NO else None


def letter(text: str) -> str | None:
    found = _LETTER.search(text)
    return found.group(1).upper() if found else None


def first_int(text: str) -> int | None:
    found = _INT.search(text)
    return int(found.group(0)) if found else None


def normalize(reply: str, kind: str) -> str:
    """The reading of a reply for a row of this `type` (module docstring)."""
    text = reply.strip()
    if not text:
        return ""
    cand = _boxed(text) or _after_phrase(text)
    kind = kind.lower()
    if "torf" in kind:
        return yes_no(cand) or yes_no(text) or cand
    if "counting1" in kind:
        return letter(cand) or letter(text) or cand
    if kind.startswith("counting"):
        number = first_int(cand)
        number = first_int(text) if number is None else number
        return str(number) if number is not None else cand
    return cand


def is_right(answer: str, reading: str, kind: str) -> bool:
    kind = kind.lower()
    try:
        if "torf" in kind:
            return yes_no(reading) == ("yes" if int(answer) == 1 else "no")
        if "counting1" in kind:
            found = letter(reading)
            return found is not None and "ABCD".index(found) == int(answer)
        if kind.startswith("counting"):
            return int(reading) == int(answer)
    except ValueError:
        return False
    return answer.strip().lower() == reading.strip().lower()


def figures(kinds: list[str], weights: list[float], hits: list[bool]) -> dict[str, float]:
    out = {"accuracy": sum(hits) / len(hits),
           "weighted_accuracy": sum(w for w, h in zip(weights, hits) if h) / sum(weights)}  # fmt: skip
    for kind in sorted(set(kinds)):
        picked = [i for i, k in enumerate(kinds) if k == kind]
        out[f"accuracy[{kind}]"] = sum(hits[i] for i in picked) / len(picked)
        out[f"weighted_accuracy[{kind}]"] = (sum(weights[i] for i in picked if hits[i])
                                             / sum(weights[i] for i in picked))  # fmt: skip
    return out


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def score_reasonmap_plus(df: pd.DataFrame) -> EvalResult:
    """Score ReasonMap-Plus replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `type`,
    `difficulty_city`."""
    require_columns(df, ("index", "prediction", "answer", "type", "difficulty_city"), "ReasonMap-Plus scoring")
    if len(df) == 0:
        raise ValueError("ReasonMap-Plus scoring: the predictions table has no rows")
    weights = []
    for index, level in zip(df["index"], df["difficulty_city"]):
        if str(level) not in WEIGHTS:
            raise ValueError(f"ReasonMap-Plus scoring: row index {index}, field difficulty_city: {level!r} is not one "
                             f"of {', '.join(WEIGHTS)}")  # fmt: skip
        weights.append(WEIGHTS[str(level)])
    kinds, answers = [_text(t) for t in df["type"]], [_text(a) for a in df["answer"]]
    replies = df["prediction"].tolist()
    mine, theirs, read, differing, errors = [], [], [], [], []
    for index, pred, their, answer, kind in zip(df["index"], replies, vlmevalkit_replies(replies), answers, kinds):
        if failed_call(pred):
            errors.append(index)
            mine.append(False), theirs.append(False), read.append(None)
            continue
        value = normalize(str(pred), kind)
        their_value = normalize(their, kind) if their is not None else value
        mine.append(is_right(answer, value, kind)), theirs.append(is_right(answer, their_value, kind))
        read.append(value)
        if mine[-1] != theirs[-1]:
            differing.append(ReadingDifference(index, value, their_value, float(mine[-1]), float(theirs[-1])))
    metrics = figures(kinds, weights, mine)
    notes = [f"{len(errors)} failed call(s) are misses: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "hits": sum(mine), "inference_errors": len(errors),
              "by_rule": len(df) - len(errors), "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    return EvalResult(
        scorer="reasonmap_plus", metrics=metrics, primary="accuracy",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(read, dtype=object),
                                 "hit": mine}),
        table=pd.DataFrame([{"metric": k, "value": v} for k, v in metrics.items()]), table_suffix="acc",
        counts=counts, notes=notes, scale=Scale(FRACTION),
        vlmevalkit=VlmevalkitFigure(figures(kinds, weights, theirs), "accuracy", differing),
    )  # fmt: skip
