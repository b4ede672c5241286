"""HiPhO (physics olympiads: IPhO, EuPhO, APhO, PanPhO, NBPhO, F=MA, PanMechanics; HiPhO_ALL): each solution earns
points twice, as VLMEvalKit scores it (vlmeval/dataset/hipho.py at e8e78f05), and keeps the larger.

- Fine-grained (the marking scheme): an LLM judge grades the solution against each marking criterion of the row
  (`marking`: a list of criteria, or several lists = alternative schemes) with VLMEvalKit's grading prompt
  (vlmkit.scoring.benchmarks.hipho_prompts), one ask per criterion, temperature 0, max_tokens 4096; its score is read
  from the reply (hipho_answers.grader_score). One scheme: when the criteria's scores add up above the row's points
  (the sum of `points`), all criteria are asked again with the retry notice (up to 3 more rounds, the attempt number
  in the prompt); still above after the last, they are scaled down to the points. Several schemes: each asked once,
  scaled down to the points when above, the best one kept. No marking: 0.
- Coarse-grained (the answers): the last n boxed answers of the solution (n = the number of reference answers in
  `answer`) are checked one by one against the references: by rule (hipho_answers.rule_match), then, unless matched,
  by VLMEvalKit's xverify prompt to the judge (`[Correct]` / `Correct` as the whole reply), and again on the parts after
  the last `=` when that changes the prompt. Points: the sum of the points of the answers found right when `points`
  has one entry per answer; otherwise the last answer's 0/1, as VLMEvalKit computes it. No boxed answer: 0.
- A row earns max(fine, coarse), each rounded to 2 decimals.

Figures (VLMEvalKit's `_score.json`): `total_score`, `fine_grained_total_score`, `coarse_grained_total_score` (sums
rounded to 2 decimals at every step, as VLMEvalKit adds them), `max_possible_score` (the sum of the rows' points), and
the three rates (`score_rate`, the headline, `fine_grained_score_rate`, `coarse_grained_score_rate`: total / max x
100, rounded to 2 decimals; 0 when max is 0). A table with a `SUB_DATASET` column (HiPhO_ALL) also gets every figure
per subset (`<subset>/score_rate`, ...), in the order the subsets first appear; VLMEvalKit reports HiPhO_ALL per subset
only, vlmkit's headline there is the same figure over all rows.

Per row (EvalResult.per_sample): `index`, `points` (the row's points), `fine`, `coarse`, `earned` (the larger), `score`
(earned / points, 0..1; None when the row has no points), `answers` (per reference answer: `rule`, `xverify`, `wrong`
or `none`), `method` (`judge`; `judge_error`: a judge call failed, the row is left out this run and asked again on the
next, as VLMEvalKit leaves a failed row out; `judge_unread`: the grader replied nothing, left out as VLMEvalKit leaves
it out; `inference_error`: no prediction, not sent to the judge, 0 points of the row's points) and `judge` (the
grader's and xverify's replies, one line each).

Where vlmkit differs from VLMEvalKit (deliberately): the rule step is vlmkit's (hipho_answers: normalised text and
numbers compared as VLMEvalKit compares numbers) instead of its sympy / math_verify chain, so an answer its symbolic
rules would match goes to the xverify judge; a row without a prediction scores 0 without asking the judge (VLMEvalKit
grades its failure text); a failed xverify call makes the row a judge error (VLMEvalKit counts the answer wrong).
VLMEvalKit's own figure is therefore not computed for HiPhO.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vlmkit.core.cells import listed
from vlmkit.core.reasoning import answer_part
from vlmkit.judging import Judge, JudgeReply, JudgeRequest
from vlmkit.scoring.benchmarks.hipho_answers import (
    boxed_answers,
    grader_score,
    list_cell,
    points_cell,
    reference_answer,
    rule_match,
)
from vlmkit.scoring.benchmarks.hipho_prompts import grading_prompt, xverify_correct, xverify_prompt
from vlmkit.scoring.common.breakdown import keyed_records
from vlmkit.scoring.common.judged_rows import INFERENCE_ERROR, JUDGE, JUDGE_ERROR, UNREAD
from vlmkit.scoring.common.text_norm import cell_text
from vlmkit.scoring.common.vlmevalkit_replies import failed_call
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, POINTS, Scale

SCORER = "hipho"
JUDGE_MAX_TOKENS = 4096  # VLMEvalKit's judge_kwargs.setdefault('max_tokens', 4096)
MAX_RETRIES = 3  # one scheme above the points: asked again up to 3 times
SUBSET_COLUMN = "SUB_DATASET"
FAILED_REPLY = "Failed to obtain answer via API"  # VLMEvalKit treats a grader reply holding it as a failed call
FIGURES = ("score_rate", "total_score", "max_possible_score", "fine_grained_total_score", "fine_grained_score_rate",
           "coarse_grained_total_score", "coarse_grained_score_rate")
RATES = ("score_rate", "fine_grained_score_rate", "coarse_grained_score_rate")


@dataclass
class _Row:
    key: str
    index: Any
    question: str
    prediction: str | None  # None: inference error
    truths: list[str]
    points: list[float]
    schemes: list[list[str]]  # the criteria of each marking scheme ([] : no marking)
    subset: str | None
    fine: float = 0.0
    coarse: float = 0.0
    answers: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    unread: bool = False

    @property
    def total_points(self) -> float:
        return sum(self.points) if self.points else 0.0

    @property
    def method(self) -> str:
        if self.prediction is None:
            return INFERENCE_ERROR
        if self.error is not None:
            return JUDGE_ERROR
        return UNREAD if self.unread else JUDGE


def marking_schemes(marking: Any) -> list[list[str]]:
    """The criteria of each marking scheme (VLMEvalKit's _has_multiple_marking_sets / _parse_marking_criteria): a
    list of lists (more than one) is several schemes; a single list inside a list is one; items of a scheme that
    are lists are flattened; blank criteria dropped."""
    items = list_cell(marking)
    if not items:
        return []
    if len(items) > 1 and all(isinstance(item, list) for item in items):
        return [_criteria(item) for item in items]
    if len(items) == 1 and isinstance(items[0], list):
        items = items[0]
    return [_criteria(items)]


def _criteria(items: Sequence[Any]) -> list[str]:
    flat: list[Any] = []
    for item in items:
        flat.extend(item if isinstance(item, list) else [item])
    return [str(c).strip() for c in flat if c and str(c).strip()]


def _rows(df: pd.DataFrame, what: str) -> list[_Row]:
    records, keys = keyed_records(df, ("index", "question", "prediction"), what)
    rows = []
    for key, record in zip(keys, records):
        place = f"{what}: row index {record['index']}"
        try:
            points = points_cell(record.get("points"))
        except ValueError as exc:
            raise ValueError(f"{place}, field `points`: {exc}") from None
        prediction = None if failed_call(record["prediction"]) else str(record["prediction"]).strip()
        subset = cell_text(record.get(SUBSET_COLUMN)) if SUBSET_COLUMN in record else None
        rows.append(_Row(key, record["index"], cell_text(record.get("question")) or "", prediction,
                         [str(t) for t in list_cell(record.get("answer"))], points,
                         marking_schemes(record.get("marking")), subset))
    return rows


class _Asker:
    """Asks the judge a round of prompts at once (temperature 0, VLMEvalKit's max_tokens) and keeps the replies."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    def ask(self, prompts: Mapping[tuple, tuple[_Row, str]]) -> dict[tuple, JudgeReply]:
        if not prompts:
            return {}
        tags = list(prompts)
        requests = [JudgeRequest(prompts[t][1], temperature=0.0, max_tokens=JUDGE_MAX_TOKENS, row=prompts[t][0].key)
                    for t in tags]
        replies = self.judge.ask(requests)
        out = {}
        for tag, reply in zip(tags, replies):
            row = prompts[tag][0]
            if not reply.ok and row.error is None:
                row.error = reply.error or {"kind": "bad_response", "message": "no reply text", "status": None}
            out[tag] = reply
        return out


def _grade(row: _Row, reply: JudgeReply) -> float | None:
    """A criterion's score from the grader's reply; None when the reply is empty or says the call failed (the row
    is then left out, as VLMEvalKit's grading fails there)."""
    if not reply.ok:
        return None
    text = answer_part(reply.text or "").strip()
    row.replies.append(f"grader: {text}")
    if not text or FAILED_REPLY in text:
        row.unread = True
        return None
    return grader_score(text)


def _fine(asker: _Asker, rows: Sequence[_Row]) -> None:
    """Fine-grained points of every row (module docstring), asked in rounds across rows."""
    first = {(r.key, s, c): (r, grading_prompt(r.question, r.prediction or "", crit, r.total_points, 0))
             for r in rows for s, scheme in enumerate(r.schemes) for c, crit in enumerate(scheme)}
    replies = asker.ask(first)
    pending: list[_Row] = []
    for row in rows:
        if not row.schemes:
            continue
        limit = row.total_points
        totals = []
        for s, scheme in enumerate(row.schemes):
            grades = [_grade(row, replies[(row.key, s, c)]) for c in range(len(scheme))]
            if any(g is None for g in grades):
                break
            totals.append(sum(g for g in grades if g is not None))
        if len(totals) < len(row.schemes):
            continue  # a failed or empty reply: the row is left out
        if len(row.schemes) > 1:
            best = 0.0
            for total in totals:
                total = limit if total > limit > 0 else total
                best = max(best, round(total, 2))
            row.fine = round(best, 2)
        elif totals[0] <= limit or limit == 0:
            row.fine = round(totals[0], 2)
        else:
            pending.append(row)
    for attempt in range(1, MAX_RETRIES + 1):
        if not pending:
            break
        asked = {(r.key, 0, c): (r, grading_prompt(r.question, r.prediction or "", crit, r.total_points, attempt))
                 for r in pending for c, crit in enumerate(r.schemes[0])}
        replies = asker.ask(asked)
        still = []
        for row in pending:
            grades = [_grade(row, replies[(row.key, 0, c)]) for c in range(len(row.schemes[0]))]
            if any(g is None for g in grades):
                continue
            total = sum(g for g in grades if g is not None)
            if total <= row.total_points:
                row.fine = round(total, 2)
            elif attempt < MAX_RETRIES:
                still.append(row)
            else:  # VLMEvalKit's forced adjustment: every criterion scaled by points / total
                factor = row.total_points / total
                row.fine = round(sum(g * factor for g in grades if g is not None), 2)
        pending = still


def _coarse(asker: _Asker, rows: Sequence[_Row]) -> None:
    """Coarse-grained points of every row (module docstring)."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        if not row.truths:
            continue
        found = boxed_answers(row.prediction or "", len(row.truths))
        if not any(found):
            row.answers = ["none"] * len(row.truths)
            continue
        pairs[row.key] = [(answer, reference_answer(truth)) for answer, truth in zip(found, row.truths)]
        row.answers = ["rule" if rule_match(a, g) or (_split(a, g) and rule_match(*_split(a, g))) else "ask"
                       for a, g in pairs[row.key]]
    by_key = {row.key: row for row in rows}
    full = {(key, i): (by_key[key], xverify_prompt(by_key[key].question, a, g))
            for key, answered in pairs.items() for i, (a, g) in enumerate(answered) if by_key[key].answers[i] == "ask"}
    replies = asker.ask(full)
    split_asks = {}
    for (key, i), reply in replies.items():
        row = by_key[key]
        if not reply.ok:
            continue
        row.replies.append(f"xverify: {answer_part(reply.text or '').strip()}")
        if xverify_correct(answer_part(reply.text or "")):
            row.answers[i] = "xverify"
            continue
        row.answers[i] = "wrong"
        answer, truth = pairs[key][i]
        split = _split(answer, truth)
        if split is not None:
            prompt = xverify_prompt(row.question, *split)
            if prompt != full[(key, i)][1]:
                split_asks[(key, i)] = (row, prompt)
    for (key, i), reply in asker.ask(split_asks).items():
        if reply.ok:
            by_key[key].replies.append(f"xverify: {answer_part(reply.text or '').strip()}")
            if xverify_correct(answer_part(reply.text or "")):
                by_key[key].answers[i] = "xverify"
    for key in pairs:
        row = by_key[key]
        right = [1.0 if verdict in ("rule", "xverify") else 0.0 for verdict in row.answers]
        points = row.points or [1.0] * len(right)
        point = sum(r * p for r, p in zip(right, points)) if len(points) == len(right) else right[-1]
        row.coarse = round(point, 2)


def _split(answer: str, truth: str) -> tuple[str, str] | None:
    """The parts after the last `=` of each, when either has one (VLMEvalKit's split check)."""
    if "=" not in answer and "=" not in truth:
        return None
    return answer.split("=")[-1], truth.split("=")[-1]


def figures(rows: Sequence[_Row]) -> dict[str, float]:
    """VLMEvalKit's _build_final_results over the rows it counts (not left out), summed as it sums them."""
    fine = coarse = total = 0.0
    most = 0.0
    for row in rows:
        if row.method in (JUDGE_ERROR, UNREAD):
            continue
        fine = round(fine + row.fine, 2)
        coarse = round(coarse + row.coarse, 2)
        total = round(total + max(row.fine, row.coarse), 2)
        most += row.total_points
    most = round(most, 2)

    def rate(value: float) -> float:
        return round(value / most * 100, 2) if most > 0 else 0.0

    return {"score_rate": rate(total), "total_score": total, "max_possible_score": most,
            "fine_grained_total_score": fine, "fine_grained_score_rate": rate(fine),
            "coarse_grained_total_score": coarse, "coarse_grained_score_rate": rate(coarse)}


def score_hipho(df: pd.DataFrame, judge: Judge, *, what: str = "HiPhO") -> EvalResult:
    """Score every solution (module docstring). Columns: `index`, `question`, `prediction`, and `answer`, `points`,
    `marking` (optional cells), `SUB_DATASET` (optional). JudgeStopped from the judge is let through."""
    rows = _rows(df, what)
    asked = [row for row in rows if row.prediction is not None]
    asker = _Asker(judge)
    _coarse(asker, asked)
    _fine(asker, asked)
    metrics = figures(rows)
    table_rows = []
    subsets = list(dict.fromkeys(row.subset for row in rows if row.subset is not None))
    for subset in subsets:
        mine = figures([row for row in rows if row.subset == subset])
        metrics.update({f"{subset}/{name}": value for name, value in mine.items()})
        table_rows.append({"subset": subset, **mine})
    table_rows.append({"subset": "Overall", **figures(rows)})
    methods = [row.method for row in rows]
    per_sample = pd.DataFrame({
        "index": [row.index for row in rows],
        "points": [row.total_points for row in rows],
        "fine": [row.fine for row in rows],
        "coarse": [row.coarse for row in rows],
        "earned": [max(row.fine, row.coarse) for row in rows],
        "score": pd.Series([max(row.fine, row.coarse) / row.total_points if row.total_points > 0 else None
                            for row in rows], dtype=object),
        "answers": [",".join(row.answers) for row in rows],
        "method": methods,
        "judge": pd.Series(["\n".join(row.replies) or None for row in rows], dtype=object),
    })
    counts = {
        "total": len(rows), "scored": sum(m not in (JUDGE_ERROR, UNREAD) for m in methods),
        "by_judge": methods.count(JUDGE), "unread": methods.count(UNREAD), "judge_errors": methods.count(JUDGE_ERROR),
        "inference_errors": methods.count(INFERENCE_ERROR),
    }
    point_scales = {name: Scale(POINTS) for name in metrics if name.rsplit("/", 1)[-1] not in RATES}
    return EvalResult(
        scorer=SCORER,
        metrics=metrics,
        primary="score_rate",
        per_sample=per_sample,
        table=pd.DataFrame(table_rows, columns=["subset", *FIGURES]),
        table_suffix="score",
        counts=counts,
        notes=_notes(rows, judge, bool(subsets)),
        scale=Scale(PERCENT),
        metric_scales=point_scales,
    )


def _notes(rows: Sequence[_Row], judge: Judge, by_subset: bool) -> list[str]:
    notes = [f"marking graded and answers checked by {judge.name} with VLMEvalKit's HiPhO prompts; a row earns the "
             "larger of its marking and answer points; score_rate = total / max possible x 100"]
    if by_subset:
        notes.append("VLMEvalKit reports HiPhO_ALL per subset only; vlmkit's headline is the same figure over all rows")
    explained = (
        (JUDGE_ERROR, "a judge call failed: left out of the figures this run (as VLMEvalKit leaves a failed row "
                      "out) and asked again on the next run"),
        (UNREAD, "the grader replied nothing: left out of the figures, as VLMEvalKit leaves it out"),
        (INFERENCE_ERROR, "no prediction: not sent to the judge, 0 of the row's points (VLMEvalKit grades its "
                          "failure text)"),
    )
    for method, text in explained:
        found = [row.index for row in rows if row.method == method]
        if found:
            notes.append(f"{len(found)} row(s) {method}: {text}; index {listed(found)}")
    return notes

