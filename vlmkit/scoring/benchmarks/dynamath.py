"""DynaMath as VLMEvalKit scores it (vlmeval/dataset/dynamath.py at e8e78f05).

Reading a reply (`short_answer`): the text from its first `{` to its last `}` (when there is such a span), all
backslashes removed, parsed as JSON (control characters allowed); its `short answer` read by the row's
`answer_type`: `float`: a string of digits, or the first space-separated word as a number (`2π` is 2 x pi);
`multiple choice`: one character (upper-cased), or the one letter of A-E the text holds; anything else: the text
as it is. When that fails the whole (cleaned) reply is read the same way, and when that fails too the judge is
asked once (system prompt and instruction below, VLMEvalKit's) and its reply is read the same way.
A row is right: float, within 0.001 of the answer; multiple choice, the letter equals the answer (unread: right
when the answer is among the first three characters of the cleaned reply, upper-cased); free form, the short
answer (lower-cased) is part of the answer (lower-cased).
Figures, fractions: `Overall`, `Subject-<s>` and `Level-<l>` over all rows (VLMEvalKit's Average setting), and the
same prefixed `Worst Case: ` over the questions (`qid`) with a `varid` 1 row, right when every variant is.

Without a judge (vlmkit's choice: VLMEvalKit always builds one) a reply no rule reads is read as unread.
Where vlmkit differs: VLMEvalKit keys the worst case by the `index` of the varid 1 rows (its TSV gives those rows
index = qid); vlmkit groups by `qid`. A failed call is a miss and is not sent to the judge.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.judging import Judge, judge_rounds
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, Scale

JUDGE_SYSTEM = ("You are a helpful assistant that helps me to format free-form answers into a short answer "
                "according to the instruction.\n")  # fmt: skip
JUDGE_INSTRUCTIONS = {
    "multiple choice": "Output the corresponing choice option, such as 'A', 'B', 'C', 'D', in a single line.",
    "float": "Output a three-digit floating-point number in a single line.",
}
JUDGE_OTHER = ("Output a short answer in a single line. Any float numbers in the answer should be formatted as "
               "three-digit floating-point numbers.")  # fmt: skip


def clean(reply: str) -> str:
    start, end = reply.find("{"), reply.rfind("}")
    if 0 <= start < end:
        reply = reply[start : end + 1]
    return reply.replace("\\", "")


def _number(text: str) -> float:
    if "\u03c0" in text:
        return float(text.split("\u03c0")[0]) * math.pi
    return float(text)


def parse_answer(text: Any, answer_type: str) -> tuple[bool, Any]:
    """VLMEvalKit's parse_answer; a value that is not text fails (its `.isdigit()` raises there)."""
    if not isinstance(text, str):
        return False, None
    if answer_type == "float":
        if text.isdigit():
            return True, float(text)
        try:
            return True, _number(text.split(" ")[0])
        except ValueError:
            return False, None
    if answer_type == "multiple choice":
        if len(text) == 1:
            return True, text.upper()
        found = [ch for ch in "ABCDE" if ch in text.upper()]
        return (True, found[0]) if len(found) == 1 else (False, None)
    return True, text


def rule_answer(reply: str, answer_type: str) -> tuple[bool, Any]:
    """The short answer the rules read (JSON `short answer`, else the whole cleaned reply)."""
    text = clean(reply)
    try:
        content = json.loads(text, strict=False)
        if isinstance(content, dict) and content.get("short answer") is not None:
            ok, value = parse_answer(content["short answer"], answer_type)
            if ok:
                return True, value
    except ValueError:
        pass
    return parse_answer(text, answer_type)


def judge_prompt(reply: str, answer_type: str) -> str:
    instruction = JUDGE_INSTRUCTIONS.get(answer_type, JUDGE_OTHER)
    return f"Free-form answer: {clean(reply)}\nInstruction: {instruction}"


def verdict(ok: bool, value: Any, answer: str, answer_type: str, reply: str) -> bool:
    if answer_type == "float":
        try:
            return ok and abs(float(value) - float(answer)) <= 0.001
        except ValueError:
            return False
    if answer_type == "multiple choice":
        return value == answer if ok else answer in clean(reply)[:3].upper()
    return ok and str(value).lower() in answer.lower()


def figures(df: pd.DataFrame, hits: list[bool], prefix: str = "") -> dict[str, float]:
    def mean(values: list[bool]) -> float:
        return sum(values) / len(values)

    out = {f"{prefix}Overall": mean(hits)}
    for column, label in (("subject", "Subject"), ("knowledge_level", "Level")):
        cells = [str(v) for v in df[column]]
        for value in sorted(set(cells)):
            out[f"{prefix}{label}-{value}"] = mean([h for c, h in zip(cells, hits) if c == value])
    return out


def score_dynamath(df: pd.DataFrame, judge: Judge | None = None) -> EvalResult:
    """Score DynaMath replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`, `answer_type`,
    `subject`, `knowledge_level`, `qid`, `varid`."""
    columns = ("index", "prediction", "answer", "answer_type", "subject", "knowledge_level", "qid", "varid")
    require_columns(df, columns, "DynaMath scoring")
    if len(df) == 0:
        raise ValueError("DynaMath scoring: the predictions table has no rows")
    records = df.to_dict("records")
    read: dict[int, tuple[bool, Any, str]] = {}
    prompts: dict[str, str] = {}
    errors = []
    for pos, r in enumerate(records):
        if failed_call(r["prediction"]):
            errors.append(r["index"])
            continue
        ok, value = rule_answer(str(r["prediction"]), str(r["answer_type"]))
        read[pos] = (ok, value, "rule" if ok else "unread")
        if not ok and judge is not None:
            prompts[str(pos)] = judge_prompt(str(r["prediction"]), str(r["answer_type"]))
    outcomes = judge_rounds(judge, prompts, lambda k, reply: parse_answer(reply, str(records[int(k)]["answer_type"])),
                            system=JUDGE_SYSTEM) if prompts and judge is not None else {}  # fmt: skip
    hits, methods, values = [], [], []
    for pos, r in enumerate(records):
        if pos not in read:
            hits.append(False), methods.append("inference_error"), values.append(None)
            continue
        ok, value, method = read[pos]
        outcome = outcomes.get(str(pos))
        if outcome is not None:
            method = "judge_error" if outcome.error is not None else "judge"
            if outcome.value is not None:
                ok, value = outcome.value
        hits.append(verdict(ok, value, str(r["answer"]), str(r["answer_type"]), str(r["prediction"])))
        methods.append(method)
        values.append(value if ok else None)
    metrics = figures(df, hits)
    worst = worst_case(df, hits)
    if worst is not None:
        metrics.update(figures(worst[0], worst[1], "Worst Case: "))
    notes = []
    if errors:
        notes.append(f"{len(errors)} failed call(s) are misses (not sent to the judge): index {listed(errors)}")
    if judge is None and methods.count("unread"):
        notes.append(f"{methods.count('unread')} reply(ies) no rule reads were not sent to a judge (none given): "
                     "read as unread, as VLMEvalKit does when its judge's reply is unread too")  # fmt: skip
    counts = {"total": len(df), "scored": len(df), "hits": sum(hits), "inference_errors": len(errors),
              "by_rule": methods.count("rule"), "by_judge": methods.count("judge"), "unread": methods.count("unread"),
              "judge_errors": methods.count("judge_error")}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(), "extracted": pd.Series(values, dtype=object),
                               "method": methods, "hit": hits})  # fmt: skip
    return EvalResult(
        scorer="dynamath", metrics=metrics, primary="Overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="score", counts=counts, notes=notes, scale=Scale(FRACTION),
    )  # fmt: skip


def worst_case(df: pd.DataFrame, hits: list[bool]) -> tuple[pd.DataFrame, list[bool]] | None:
    """The varid 1 rows and whether every variant of their question is right (None when no row is varid 1)."""
    qids = [str(v) for v in df["qid"]]
    all_right: dict[str, bool] = {}
    for qid, hit in zip(qids, hits):
        all_right[qid] = all_right.get(qid, True) and hit
    first = [str(v).strip() in ("1", "1.0") for v in df["varid"]]
    if not any(first):
        return None
    picked = df[first]
    return picked, [all_right[q] for q, f in zip(qids, first) if f]
