"""M4Bench (State_Invariance, State_Comparison, Spatial_Perception, Instance_Comparison, Detailed_Difference) as
VLMEvalKit scores it (vlmeval/dataset/m4bench.py `M4Bench.evaluate` at e8e78f05).

Reading a text (`read_option`, VLMEvalKit's `get_ans`): the capital letter of a `(X)` at its start (spaces before it
allowed), else the first of A..Z it starts with (no stripping: ` A` reads nothing, `The answer` reads `T`), else
nothing. A row is right when that letter equals its `response` cell. Figure: `acc`, the percentage of right rows.

With a judge (VLMEvalKit always builds one, gpt-4o by default) every reply is given to it in VLMEvalKit's prompt
(`JUDGE_PROMPT`: the query up to its first `\\n(`, the options from there on, the reply), asked once at temperature 0,
and the judge's reply is read by the same rule. Without a judge the reply itself is read: VLMEvalKit's own fall-back
when its judge cannot be built.

Where vlmkit differs: a failed call is a miss and is not sent to the judge (VLMEvalKit judges its failure
message); a failed judge call is a judge error, the row a miss (VLMEvalKit reads its failure message
`Failed to obtain...` as the letter F). VLMEvalKit's figure reads the replies its xlsx round trip leaves (an empty
reply becomes `nan`); with a judge, a reply that round trip changes is asked again as VLMEvalKit would show it.
"""

from __future__ import annotations

import re
import string
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

JUDGE_PROMPT = (
    "You are an AI assistant who will help me to match "
    "an answer with several options of a single-choice question. "
    "You are provided with a question, several options, and an answer, "
    "and you need to find which option is most similar to the answer. "
    "If the meaning of all options are significantly different from the answer, output Z. "
    "Your should output a single uppercase character in A, B, C, D (if they are valid options), and Z. \n"
    "Example 1: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: a cute teddy bear\nYour output: A\n"
    "Example 2: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: Spider\nYour output: Z\n"
    "Example 3: \n"
    "Question: {question}\nOptions: {options}\nAnswer: {prediction}\nYour output: "
)
_LEADING_PAREN = re.compile(r"^\s*\(([A-Z])\)")


def read_option(text: str) -> str | None:
    """VLMEvalKit's `get_ans` (module docstring)."""
    found = _LEADING_PAREN.search(text)
    if found:
        return found.group(1)
    for letter in string.ascii_uppercase:
        if text.startswith(letter):
            return letter
    return None


def judge_prompt(query: str, reply: str) -> str:
    """VLMEvalKit's judge prompt for a row: the question is the query up to its first `\\n(`, the options the rest."""
    parts = query.split("\n(")
    options = "\n(".join(parts[1:]) if len(parts) > 1 else ""
    return JUDGE_PROMPT.format(question=parts[0], options=options, prediction=reply)


def _acc(hits: list[bool]) -> dict[str, float]:
    return {"acc": 100 * sum(hits) / len(hits)}


def score_m4bench(df: pd.DataFrame, judge: Judge | None = None) -> EvalResult:
    """Score M4Bench replies. Columns: `index`, `prediction` (None/NaN = a failed call), `query`, `response`."""
    require_columns(df, ("index", "prediction", "query", "response"), "M4Bench scoring")
    if len(df) == 0:
        raise ValueError("M4Bench scoring: the predictions table has no rows")
    records = df.to_dict("records")
    theirs_text = vlmevalkit_replies(df["prediction"].tolist())
    prompts: dict[str, str] = {}
    if judge is not None:
        for pos, (r, their) in enumerate(zip(records, theirs_text)):
            if failed_call(r["prediction"]):
                continue
            prompts[f"m{pos}"] = judge_prompt(str(r["query"]), str(r["prediction"]))
            if their is not None and their != str(r["prediction"]):
                prompts[f"v{pos}"] = judge_prompt(str(r["query"]), their)
    outcomes = judge_rounds(judge, prompts, lambda _k, reply: reply) if prompts and judge is not None else {}

    def reading(key: str, reply: str) -> tuple[str | None, str]:
        """(letter, method) of a reply: the judge's reply read, or the reply itself read without a judge."""
        if judge is None:
            return read_option(reply), "rule"
        outcome = outcomes[key]
        if outcome.error is not None:
            return None, "judge_error"
        return read_option(outcome.value or ""), "judge"

    letters: list[str | None] = []
    methods: list[str] = []
    hits: list[bool] = []
    theirs: list[bool] = []
    differing: list[ReadingDifference] = []
    errors: list[Any] = []
    for pos, (r, their) in enumerate(zip(records, theirs_text)):
        answer = str(r["response"])
        if failed_call(r["prediction"]):
            errors.append(r["index"])
            letters.append(None), methods.append("inference_error"), hits.append(False), theirs.append(False)
            continue
        letter, method = reading(f"m{pos}", str(r["prediction"]))
        their_letter = letter
        if their is not None and their != str(r["prediction"]):
            their_letter = reading(f"v{pos}", their)[0]
        letters.append(letter), methods.append(method)
        hits.append(letter is not None and letter == answer.strip())
        theirs.append(their_letter is not None and their_letter == answer)
        if hits[-1] != theirs[-1] or letter != their_letter:
            differing.append(ReadingDifference(r["index"], letter, their_letter, float(hits[-1]), float(theirs[-1])))
    notes = []
    if errors:
        notes.append(f"{len(errors)} failed call(s) are misses (not sent to the judge): index {listed(errors)}")
    if judge is None:
        notes.append("no judge given: each reply was read by VLMEvalKit's rule (a leading (X), else its first "
                     "letter), VLMEvalKit's fall-back when its judge (gpt-4o by default) cannot be built")  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "by_rule": methods.count("rule"), "by_judge": methods.count("judge"),
              "unread": sum(1 for l, m in zip(letters, methods) if l is None and m in ("rule", "judge")),
              "judge_errors": methods.count("judge_error")}  # fmt: skip
    metrics = _acc(hits)
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(letters, dtype=object),
                               "method": methods, "hit": hits})  # fmt: skip
    return EvalResult(
        scorer="m4bench", metrics=metrics, primary="acc", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="acc", counts=counts, notes=notes, scale=Scale(PERCENT),
        vlmevalkit=VlmevalkitFigure(_acc(theirs), "acc", differing),
    )  # fmt: skip
