"""GSM8K's exact match of the final number, as lm-evaluation-harness's `gsm8k` task reads replies.

A reply is first cut at its first `Question:` (lm-evaluation-harness stops generating there: a model that goes on to
invent the next few-shot problem is not read past its answer). Then two readings, as that task's two filters:
- `strict_match`: the number after the first `#### ` (the training solutions' answer mark);
- `exact_match` (its `flexible-extract`, the headline: "the final number"): the last match of
  `(-?[$0-9.,]{2,})|(-?[0-9]+)` in the reply.
Both the reading and the reference (`answer`, the number after `####` in the solution) are compared as text after
removing commas, `$`, everything up to a `#### ` and one trailing `.` (lm-evaluation-harness's `regexes_to_ignore`):
`$1,080.` reads as `1080`; `18.00` is not `18`. A failed call or a reply with no number is wrong. Fractions of the rows.
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

STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
FLEXIBLE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
_IGNORED = (re.compile(","), re.compile(r"\$"), re.compile(r"(?s).*#### "), re.compile(r"\.$"))


def normalise(text: str) -> str:
    """A number as lm-evaluation-harness compares it (module docstring)."""
    out = text.strip()
    for pattern in _IGNORED:
        out = pattern.sub("", out)
    return out.strip()


def cut_reply(reply: str) -> str:
    """The reply up to its first `Question:` (where lm-evaluation-harness stops generating)."""
    return reply.split("Question:", 1)[0]


def strict_number(reply: str) -> str | None:
    found = STRICT.search(cut_reply(reply))
    return normalise(found.group(1)) if found else None


def final_number(reply: str) -> str | None:
    """The last number-like match of the reply (flexible-extract), normalised; None when there is none."""
    found = FLEXIBLE.findall(cut_reply(reply))
    if not found:
        return None
    last = next((group for group in found[-1] if group), "")
    return normalise(last) or None


def score_text_gsm8k(df: pd.DataFrame) -> EvalResult:
    """Score GSM8K replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer` (the final number, or
    the whole solution ending `#### N`)."""
    require_columns(df, ("index", "prediction", "answer"), "GSM8K scoring")
    if len(df) == 0:
        raise ValueError("GSM8K scoring: the predictions table has no rows")
    rows: list[dict[str, Any]] = df.to_dict("records")
    read: list[str | None] = []
    hits: list[bool] = []
    strict_hits: list[bool] = []
    errors: list[Any] = []
    for row in rows:
        if is_blank(row["answer"]) or not normalise(str(row["answer"])):
            raise ValueError(f"GSM8K scoring: row index {row['index']}, field answer: empty")
        target = normalise(str(row["answer"]))
        if failed_call(row["prediction"]):
            errors.append(row["index"])
            read.append(None), hits.append(False), strict_hits.append(False)
            continue
        reply = str(row["prediction"])
        number = final_number(reply)
        read.append(number)
        hits.append(number == target)
        strict_hits.append(strict_number(reply) == target)
    metrics = {"exact_match": sum(hits) / len(hits), "strict_match": sum(strict_hits) / len(hits)}
    notes = [f"{len(errors)} failed call(s) are wrong: index {listed(errors)}"] if errors else []
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "unread": sum(n is None for n in read) - len(errors), "by_rule": len(df) - len(errors),
              "by_judge": 0, "judge_errors": 0}
    return EvalResult(
        scorer="text_gsm8k", metrics=metrics, primary="exact_match",
        per_sample=pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(read, dtype=object),
                                 "hit": hits, "strict_hit": strict_hits}),
        table=pd.DataFrame([{"Metric": k, "Accuracy": v} for k, v in metrics.items()]),
        counts=counts, notes=notes, scale=Scale(FRACTION), also=("strict_match",),
    )  # fmt: skip
