"""GOBench as VLMEvalKit scores it (vlmeval/dataset/gobench.py `GOBenchDataset.evaluate` at e8e78f05), by rule.

The model rates a generated image three ways; the reply is read (`read_scores`): `Total Score` (optionally `for
Reality Assessment`) `:` then spaces or `*` and a number (reality); `Aesthetics Rating` then the first number after
it (aesthetics); `Instruction Consistency Rating` likewise (consistency); any case. The answer (`read_truth`):
`Reality Assessment Score:`, `Aesthetics Rating:`, `Instruction Consistency Rating:` each followed by a number. A
row without all three on either side, or whose number does not convert (`.`), is unscored (-1, left out of every
mean). Each score is max(0, (0.5 - |truth - reply|) / 0.5).
Figures, percent: `Reality_Score`, `Aesthetics_Score`, `Instruction_Consistency_Score` (the mean over scored rows,
0 without any) and `Overall` (their mean, the headline); VLMEvalKit rounds to 2 decimals (its figure here too).
VLMEvalKit offers a judge to read the scores, but asks it through `judge.score(...)`, a method its judge models do
not have; the error is caught and the rule reads every reply, so vlmkit asks no judge.
A failed call (and, in VLMEvalKit, a reply holding `Failed to obtain answer`) is unscored, as in VLMEvalKit.
"""

from __future__ import annotations

import re

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.scoring.common.breakdown import require_columns
from vlmkit.scoring.common.vlmevalkit_replies import failed_call, vlmevalkit_replies
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

KEYS = ("reality", "aesthetics", "consistency")
_TRUTH = {"reality": re.compile(r"Reality Assessment Score:\s*([\d.]+)", re.IGNORECASE),
          "aesthetics": re.compile(r"Aesthetics Rating:\s*([\d.]+)", re.IGNORECASE),
          "consistency": re.compile(r"Instruction Consistency Rating:\s*([\d.]+)", re.IGNORECASE)}  # fmt: skip
_REPLY = {"reality": re.compile(r"Total Score(?: for Reality Assessment)?:[\s\*]*([\d.]+)", re.IGNORECASE),
          "aesthetics": re.compile(r"Aesthetics Rating\D*([\d.]+)", re.IGNORECASE),
          "consistency": re.compile(r"Instruction Consistency Rating\D*([\d.]+)", re.IGNORECASE)}  # fmt: skip
Scores = dict[str, float]


def _read(text: str, patterns: dict[str, re.Pattern[str]]) -> Scores | None:
    """The three numbers, or None when one is missing or does not convert (VLMEvalKit's row-level failure)."""
    out: Scores = {}
    for key, pattern in patterns.items():
        found = pattern.search(text)
        if found:
            try:
                out[key] = float(found.group(1))
            except ValueError:
                return None
    return out if len(out) == 3 else None


def read_truth(answer: str) -> Scores | None:
    return _read(answer, _TRUTH)


def read_scores(reply: str) -> Scores | None:
    return _read(reply, _REPLY)


def row_scores(truth: Scores | None, reply: Scores | None) -> Scores | None:
    if truth is None or reply is None:
        return None
    return {k: max(0.0, (0.5 - abs(truth[k] - reply[k])) / 0.5) for k in KEYS}


def figures(rows: list[Scores | None], digits: int | None = None) -> dict[str, float]:
    scored = [r for r in rows if r is not None]
    means = {k: (sum(r[k] for r in scored) / len(scored) if scored else 0.0) for k in KEYS}
    out = {"Overall": 100 * sum(means.values()) / 3, "Reality_Score": 100 * means["reality"],
           "Aesthetics_Score": 100 * means["aesthetics"], "Instruction_Consistency_Score": 100 * means["consistency"]}
    return {k: round(v, digits) for k, v in out.items()} if digits is not None else out


def score_gobench(df: pd.DataFrame) -> EvalResult:
    """Score GOBench replies. Columns: `index`, `prediction` (None/NaN = a failed call), `answer`."""
    require_columns(df, ("index", "prediction", "answer"), "GOBench scoring")
    if len(df) == 0:
        raise ValueError("GOBench scoring: the predictions table has no rows")
    replies = df["prediction"].tolist()
    truths = [read_truth(str(a)) for a in df["answer"]]
    mine: list[Scores | None] = []
    theirs: list[Scores | None] = []
    differing, errors = [], []
    for index, pred, their, truth in zip(df["index"], replies, vlmevalkit_replies(replies), truths):
        if failed_call(pred):
            errors.append(index)
            mine.append(None), theirs.append(None)
            continue
        mine.append(row_scores(truth, read_scores(str(pred))))
        theirs.append(None if their is None or their == "nan" else row_scores(truth, read_scores(their)))
        if mine[-1] != theirs[-1]:
            differing.append(ReadingDifference(index, mine[-1], theirs[-1]))
    metrics = figures(mine)
    unscored = [i for i, s, e in zip(df["index"], mine, replies) if s is None and not failed_call(e)]
    notes = []
    if errors:
        notes.append(f"{len(errors)} failed call(s) are unscored (left out of the means): index {listed(errors)}")
    if unscored:
        notes.append(f"{len(unscored)} row(s) without all three scores in the reply or the answer are left out of "
                     f"the means, as in VLMEvalKit: index {listed(unscored)}")  # fmt: skip
    counts = {"total": len(df), "scored": sum(s is not None for s in mine), "inference_errors": len(errors),
              "unread": len(unscored), "by_rule": len(df) - len(errors), "by_judge": 0, "judge_errors": 0}  # fmt: skip
    per_sample = pd.DataFrame({"index": df["index"].tolist(),
                               **{k: [s[k] if s else None for s in mine] for k in KEYS}})  # fmt: skip
    return EvalResult(
        scorer="gobench", metrics=metrics, primary="Overall", per_sample=per_sample, table=pd.DataFrame([metrics]),
        table_suffix="score", counts=counts, notes=notes, scale=Scale(PERCENT),
        vlmevalkit=VlmevalkitFigure(figures(theirs, digits=2), "Overall", differing),
    )  # fmt: skip
